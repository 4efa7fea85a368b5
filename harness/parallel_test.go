package harness

import (
	"go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tests that run in parallel.
//
// A top-level test that calls t.Parallel runs beside the other parallel
// tests, once every sequential test of the package has ended. The test
// hooks are package variables (noTails, irqStartDrop, readerMemoOff, ...)
// that every exploration reads, so a parallel test must set none: the
// sequential tests that set one put it back before the parallel ones
// start. The heaviest tests that set none run in parallel, on the core
// the package's sequential tests leave idle (the harness package is the
// long pole of `make test`).

// TestParallelTestsSetNoHook walks the syntax of the package's test
// files: a top-level test that calls t.Parallel, and every function of
// the test files it calls, directly or not, may not assign to, increment
// or take the address of a package variable of the non-test files.
func TestParallelTestsSetNoHook(t *testing.T) {
	pkgVars, funcs := map[string]bool{}, map[string]*ast.FuncDecl{}
	fs := gotoken.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		af, err := goparser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		test := strings.HasSuffix(f, "_test.go")
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok == gotoken.VAR && !test {
					for _, s := range d.Specs {
						for _, n := range s.(*ast.ValueSpec).Names {
							pkgVars[n.Name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if test && d.Recv == nil {
					funcs[d.Name.Name] = d
				}
			}
		}
	}
	var parallel []string
	for name, fd := range funcs {
		if strings.HasPrefix(name, "Test") && callsParallel(fd) {
			parallel = append(parallel, name)
		}
	}
	slices.Sort(parallel)
	if len(parallel) < 14 {
		t.Fatalf("found %d top-level parallel tests (%v): the walk no longer sees them", len(parallel), parallel)
	}
	for _, name := range parallel {
		if set := hooksSet(funcs, pkgVars, name, map[string]bool{}); len(set) > 0 {
			t.Errorf("%s calls t.Parallel and sets %v (through %s)", name, set[0].hook, strings.Join(set[0].path, " -> "))
		}
	}

	// The walk sees a hook set: a test file's function that sets one is
	// found, through the test that calls it.
	wrong, err := goparser.ParseFile(fs, "wrong_test.go", `package harness
func TestWrong(t *testing.T) { t.Parallel(); helper() }
func helper() { noTails = true }
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	probe := map[string]*ast.FuncDecl{}
	for _, d := range wrong.Decls {
		probe[d.(*ast.FuncDecl).Name.Name] = d.(*ast.FuncDecl)
	}
	if set := hooksSet(probe, pkgVars, "TestWrong", map[string]bool{}); len(set) != 1 || set[0].hook != "noTails" {
		t.Errorf("a parallel test whose helper sets noTails: the walk found %v", set)
	}
}

// callsParallel reports whether fd's body calls t.Parallel() at its top
// level (not in a subtest's function).
func callsParallel(fd *ast.FuncDecl) bool {
	for _, s := range fd.Body.List {
		if es, ok := s.(*ast.ExprStmt); ok {
			if c, ok := es.X.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" {
					return true
				}
			}
		}
	}
	return false
}

// hookSet is a package variable set, and the calls that lead to it.
type hookSet struct {
	hook string
	path []string
}

// hooksSet returns the package variables that function name, or a
// function of funcs it calls, sets.
func hooksSet(funcs map[string]*ast.FuncDecl, vars map[string]bool, name string, seen map[string]bool) []hookSet {
	fd := funcs[name]
	if fd == nil || seen[name] {
		return nil
	}
	seen[name] = true
	var out []hookSet
	set := func(e ast.Expr) {
		if id, ok := e.(*ast.Ident); ok && vars[id.Name] {
			out = append(out, hookSet{id.Name, []string{name}})
		}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != gotoken.DEFINE {
				for _, l := range n.Lhs {
					set(l)
				}
			}
		case *ast.IncDecStmt:
			set(n.X)
		case *ast.UnaryExpr:
			if n.Op == gotoken.AND {
				set(n.X)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok {
				for _, h := range hooksSet(funcs, vars, id.Name, seen) {
					out = append(out, hookSet{h.hook, append([]string{name}, h.path...)})
				}
			}
		}
		return true
	})
	return out
}
