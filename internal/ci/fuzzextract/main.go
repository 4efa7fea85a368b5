// Command fuzzextract copies a native Go fuzz target that lives in an
// external test package (package x_test) into an ordinary package of its
// own, with every top-level declaration of the test package it uses, so
// that go-118-fuzz-build can turn it into a libFuzzer target.
//
//	go run ./internal/ci/fuzzextract -dir harness -func FuzzParseFile -pkg parsefile -o DIR/fuzz.go
//
// go-118-fuzz-build (what OSS-Fuzz's compile_native_go_fuzzer runs) builds
// a fuzz target by renaming the _test.go file that holds it to a non-test
// file of the same package. That works for an internal test package
// (package x, like fuzz/fuzz_test.go) but not for an external one: the
// renamed file would be a second package in the directory. The ClusterFuzzLite
// build (.clusterfuzzlite/build.sh) runs this tool for those targets, in the
// container's copy of the repository.
//
// The copy holds the fuzz function and the transitive closure of the test
// package's top-level functions, types (with their methods), variables and
// constants it names, in source order, with the imports they use;
// comments are dropped and init functions are not copied. A name is taken
// to refer to a top-level declaration wherever it appears, so a local
// variable that shadows one pulls the declaration in too (harmless: the
// copy still compiles).
//
// Exit codes: 0 success; 1 the target is not found in an external test
// package, or the sources do not parse; 2 misuse.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzzextract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the package `directory` holding the fuzz target's _test.go file")
	fn := fs.String("func", "", "the fuzz `function` (FuzzXxx)")
	pkg := fs.String("pkg", "", "the package `name` of the copy")
	out := fs.String("o", "", "the output `file` (its directory is created)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || *fn == "" || *pkg == "" || *out == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: fuzzextract -dir DIR -func FuzzXxx -pkg NAME -o FILE")
		return 2
	}
	src, err := Extract(*dir, *fn, *pkg)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(*out), 0o755)
	}
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fuzzextract: %v\n", err)
		return 1
	}
	return 0
}

// decl is one top-level declaration of the test package.
type decl struct {
	node ast.Decl
	file *ast.File
	pos  token.Pos
	deps []*ast.Ident // the identifiers it mentions
	sels []*ast.Ident // the X of every X.Sel it mentions (imports are among them)
}

// Extract returns the source of package pkg holding the fuzz function fn of
// dir's external test package and what it uses.
func Extract(dir, fn, pkg string) ([]byte, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var files []*ast.File
	external := ""
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			files = append(files, f)
			external = f.Name.Name
		}
	}
	// byName maps a top-level name to its declarations (a type's methods
	// are filed under the type's name).
	byName := map[string][]*decl{}
	add := func(name string, d *decl) { byName[name] = append(byName[name], d) }
	for _, f := range files {
		for _, n := range f.Decls {
			d := &decl{node: n, file: f, pos: n.Pos()}
			ast.Inspect(n, func(x ast.Node) bool {
				switch x := x.(type) {
				case *ast.Ident:
					d.deps = append(d.deps, x)
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok {
						d.sels = append(d.sels, id)
					}
				}
				return true
			})
			switch n := n.(type) {
			case *ast.FuncDecl:
				switch {
				case n.Recv != nil:
					add(recvType(n.Recv.List[0].Type), d)
				case n.Name.Name != "init":
					add(n.Name.Name, d)
				}
			case *ast.GenDecl:
				if n.Tok == token.IMPORT {
					continue
				}
				for _, s := range n.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name.Name, d)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							add(id.Name, d)
						}
					}
				}
			}
		}
	}
	root := byName[fn]
	if len(root) != 1 {
		return nil, fmt.Errorf("%s: no func %s in an external test package (package x_test) of the directory; a target of the package itself needs no extraction", dir, fn)
	}
	if fd, ok := root[0].node.(*ast.FuncDecl); !ok || fd.Type.Params.NumFields() != 1 {
		return nil, fmt.Errorf("%s: %s is not a func(*testing.F)", dir, fn)
	}
	// The closure, and the imports (per file: name -> path) it uses.
	keep := map[*decl]bool{}
	imports := map[string]string{} // local name -> import path
	var conflict error
	var visit func(d *decl)
	visit = func(d *decl) {
		if keep[d] {
			return
		}
		keep[d] = true
		names := fileImports(d.file)
		for _, id := range d.deps {
			for _, dep := range byName[id.Name] {
				visit(dep)
			}
		}
		for _, id := range d.sels {
			if path, ok := names[id.Name]; ok {
				if old, dup := imports[id.Name]; dup && old != path {
					conflict = fmt.Errorf("%s: the name %s imports both %s and %s", dir, id.Name, old, path)
				}
				imports[id.Name] = path
			}
		}
	}
	visit(root[0])
	if conflict != nil {
		return nil, conflict
	}
	var kept []*decl
	for d := range keep {
		kept = append(kept, d)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].pos < kept[j].pos })

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by fuzzextract from %s (package %s) for %s; DO NOT EDIT.\n\n", filepath.ToSlash(dir), external, fn)
	fmt.Fprintf(&b, "package %s\n\nimport (\n", pkg)
	var locals []string
	for name := range imports {
		locals = append(locals, name)
	}
	sort.Slice(locals, func(i, j int) bool { return imports[locals[i]] < imports[locals[j]] })
	for _, name := range locals {
		path := imports[name]
		if defaultName(path) == name {
			fmt.Fprintf(&b, "\t%q\n", path)
		} else {
			fmt.Fprintf(&b, "\t%s %q\n", name, path)
		}
	}
	b.WriteString(")\n")
	for _, d := range kept {
		b.WriteString("\n")
		stripDocs(d.node)
		if err := format.Node(&b, fset, d.node); err != nil {
			return nil, err
		}
		b.WriteString("\n")
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, errors.Join(errors.New("fuzzextract: the copy does not format"), err)
	}
	return src, nil
}

// recvType is the type name of a method receiver (T, *T, T[P], *T[P]).
func recvType(x ast.Expr) string {
	for {
		switch t := x.(type) {
		case *ast.StarExpr:
			x = t.X
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// fileImports maps the names a file's imports are known by to their paths
// (blank and dot imports left out).
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := defaultName(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "_" || name == "." {
			continue
		}
		m[name] = path
	}
	return m
}

// defaultName guesses the package name of an import path: its last element,
// without a major-version suffix or a gopkg.in-style ".vN".
func defaultName(path string) string {
	parts := strings.Split(path, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = parts[len(parts)-2]
	}
	if i := strings.Index(last, ".v"); i > 0 {
		last = last[:i]
	}
	return strings.ReplaceAll(last, "-", "_")
}

// stripDocs drops doc comments (format.Node prints none of the file's
// other comments either: the copy carries no comments).
func stripDocs(n ast.Decl) {
	switch n := n.(type) {
	case *ast.FuncDecl:
		n.Doc = nil
	case *ast.GenDecl:
		n.Doc = nil
		for _, s := range n.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				s.Doc, s.Comment = nil, nil
			case *ast.ValueSpec:
				s.Doc, s.Comment = nil, nil
			}
		}
	}
}
