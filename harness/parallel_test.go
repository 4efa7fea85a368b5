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
// hooks (noTails, irqStartDrop, readerMemoOff, ...) are the fields of a
// testHooks that the options of an exploration carry (hooks.go), so a
// test that sets them reaches its own explorations only, and runs in
// parallel. A few are package variables still, which every exploration
// reads (knownTot's ktCheck, ...; another package's, cload.StateDrop), so
// a parallel test must set none: the sequential tests that set one put
// it back before the parallel ones start. (The harness package is the
// long pole of `make test`: all but those tests run in parallel.)

// TestParallelTestsSetNoHook walks the syntax of the package's test
// files: a top-level test that calls t.Parallel, and every function of
// the test files it calls, directly or not, may not assign to, increment
// or take the address of a package variable of the non-test files or a
// field of one (noHooks.noTails), nor of a package the test files import
// (cload.StateDrop, ...).
func TestParallelTestsSetNoHook(t *testing.T) {
	w := hookWalk{funcs: map[string]*ast.FuncDecl{}, vars: map[string]bool{}, pkgs: map[string]bool{}}
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
		if test {
			for _, im := range af.Imports {
				name := strings.Trim(im.Path.Value, `"`)
				name = name[strings.LastIndex(name, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				w.pkgs[name] = true
			}
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok == gotoken.VAR && !test {
					for _, s := range d.Specs {
						for _, n := range s.(*ast.ValueSpec).Names {
							w.vars[n.Name] = n.Name != "_" // (var _ = ...: a check, no variable)
						}
					}
				}
			case *ast.FuncDecl:
				if test && d.Recv == nil {
					w.funcs[d.Name.Name] = d
				}
			}
		}
	}
	var parallel []string
	for name, fd := range w.funcs {
		if strings.HasPrefix(name, "Test") && callsParallel(fd) {
			parallel = append(parallel, name)
		}
	}
	slices.Sort(parallel)
	if len(parallel) < 14 {
		t.Fatalf("found %d top-level parallel tests (%v): the walk no longer sees them", len(parallel), parallel)
	}
	for _, name := range parallel {
		if set := w.sets(name, map[string]bool{}); len(set) > 0 {
			t.Errorf("%s calls t.Parallel and sets %v (through %s)", name, set[0].hook, strings.Join(set[0].path, " -> "))
		}
	}

	// The walk sees a hook set: a test file's function that sets one is
	// found, through the test that calls it, and so is another package's.
	wrong, err := goparser.ParseFile(fs, "wrong_test.go", `package harness
func TestWrong(t *testing.T) { t.Parallel(); helper() }
func helper() { ktCheck = true; other(); third() }
func other() { cload.StateDrop = "snap" }
func third() { h := &noHooks.ran; noHooks.opSnapDrop = "data"; _ = h }
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	probe := w
	probe.funcs = map[string]*ast.FuncDecl{}
	for _, d := range wrong.Decls {
		probe.funcs[d.(*ast.FuncDecl).Name.Name] = d.(*ast.FuncDecl)
	}
	set := probe.sets("TestWrong", map[string]bool{})
	if len(set) != 4 || set[0].hook != "ktCheck" || set[1].hook != "cload.StateDrop" || len(set[1].path) != 3 ||
		set[2].hook != "noHooks.ran" || set[3].hook != "noHooks.opSnapDrop" {
		t.Errorf("a parallel test whose helpers set ktCheck, cload.StateDrop and two fields of noHooks: the walk found %v", set)
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

// hookWalk is what TestParallelTestsSetNoHook reads: the test files'
// functions, the package's variables, the packages the test files import.
type hookWalk struct {
	funcs      map[string]*ast.FuncDecl
	vars, pkgs map[string]bool
}

// sets returns the package variables that function name, or a function
// of w.funcs it calls, sets.
func (w hookWalk) sets(name string, seen map[string]bool) []hookSet {
	fd := w.funcs[name]
	if fd == nil || seen[name] {
		return nil
	}
	seen[name] = true
	var out []hookSet
	set := func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			if w.vars[e.Name] {
				out = append(out, hookSet{e.Name, []string{name}})
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && w.pkgs[x.Name] {
				out = append(out, hookSet{x.Name + "." + e.Sel.Name, []string{name}})
				return
			}
			// A field of a package variable, however deep.
			root := e.X
			for {
				s, ok := root.(*ast.SelectorExpr)
				if !ok {
					break
				}
				root = s.X
			}
			if x, ok := root.(*ast.Ident); ok && w.vars[x.Name] {
				out = append(out, hookSet{x.Name + "." + e.Sel.Name, []string{name}})
			}
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
				for _, h := range w.sets(id.Name, seen) {
					out = append(out, hookSet{h.hook, append([]string{name}, h.path...)})
				}
			}
		}
		return true
	})
	return out
}
