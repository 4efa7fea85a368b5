package fgraph

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Loads by kind (docs/fidelity.md): a plain load of shared state whose value
// the kernel's code uses more than once may be loaded again by the compiler
// at each further use, unless it is READ_ONCE. The port writes every further
// use as m.reread(site, addr, value, kind); the harness decides at run time
// whether a re-load is legal there (harness ctx.reloadable). This test
// derives the list of such values from the port's source, so a new use
// without a re-read fails here instead of waiting for someone to place a
// reread by hand.
//
// The rules, mechanically:
//   - A value is tracked when a local variable is bound (:=, =, var) to a
//     plain load itself, up to conversions: m.ld, m.load(k, ...) (a kind a
//     mutant or variant switches), m.reread, or a method that returns one
//     of those (getFgraphEntry). A value derived by arithmetic is a new
//     value: the compiler's re-load of a word stands in for its register
//     (GCC's REG_EQUIV), not a recomputation.
//   - Its uses are its references from the binding to the next binding of
//     the same variable (source order; an op-assignment such as += is a use
//     and ends it).
//   - The first use is free. Every further use must be the value argument of
//     m.reread, whose kind argument is Plain for m.ld and the same kind
//     expression as the load's for m.load; or its line must say
//     //fgcheck:kept followed by the reason the compiler cannot re-load
//     there, or that the use is the port's own (a range check, the
//     oracle's torn-read flag, a fix variant's test). A //fgcheck:kept
//     on a line with no such use is an error too.
//   - A re-read as the first use is an error (a load the kernel does not
//     make), and so is a reread whose value is not a tracked load.
//   - &variable (get_ret_stack's &offset) ends the value too: the callee
//     may write the variable there.
//   - Functions in loadExempt are not checked; each says why no other
//     context can write what it reads between two uses.

// loadExempt are the port's functions that run under a lock that every
// writer of what they read also takes, or at one instant of the harness.
var loadExempt = map[string]string{
	"fgraphLRUAllocIndex":     "register_ftrace_graph() under ftrace_lock: every writer of the LRU table, fgraph_lru_next and the bitmask holds it",
	"fgraphLRUReleaseIndex":   "unregister_ftrace_graph() under ftrace_lock, as fgraphLRUAllocIndex",
	"ftraceGraphEnableDirect": "under ftrace_lock: fgraph_array and the bitmask are written only under it",
	"unregisterBegin":         "under ftrace_lock: fgraph_array, fgraph_array_cnt, ftrace_graph_active and gops->idx are written only under it",
	"entryfunc":               "a user's callback, a stand-in for trace_functions_graph.c, fprobe and the profiler (not ported word for word): gops->idx, its only plain load of fgraph state, is written only by register_ftrace_graph() of this ops, which cannot run while its callback runs (ftrace_shutdown_subops() waits for it), so every load of it gives the same value",
	"retfunc":                 "as entryfunc",
}

// plainLoadFuncs are the shim methods whose result is a plain (or
// kind-switched) load.
var plainLoadFuncs = map[string]bool{"ld": true, "load": true, "reread": true}

// conversions are calls that do not change the value a register holds.
var conversions = map[string]bool{"wordInt": true, "intWord": true, "int": true, "int64": true, "uint64": true, "Word": true, "Addr": true}

// loadFinding is one problem the checker reports.
type loadFinding struct {
	Pos  token.Position
	Func string
	Msg  string
}

func (f loadFinding) String() string {
	return fmt.Sprintf("%s:%d: %s", filepath.Base(f.Pos.Filename), f.Pos.Line, f.Msg)
}

// checkLoadUses applies the rules above to files.
func checkLoadUses(fset *token.FileSet, files []*ast.File, exempt map[string]string) []loadFinding {
	loads := map[string]bool{}
	for k := range plainLoadFuncs {
		loads[k] = true
	}
	// Methods that return a plain load (fixpoint).
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil || loads[fd.Name.Name] {
					continue
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if _, ok := n.(*ast.FuncLit); ok {
						return false
					}
					if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) > 0 && loadCall(r.Results[0], loads) != nil {
						loads[fd.Name.Name] = true
						changed = true
					}
					return true
				})
			}
		}
	}
	var out []loadFinding
	for _, f := range files {
		kept := keptLines(fset, f)
		used := map[int]bool{}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if _, ok := exempt[fd.Name.Name]; ok {
				continue
			}
			for _, x := range checkFunc(fset, fd, loads, kept, used) {
				x.Func = fd.Name.Name
				out = append(out, x)
			}
		}
		for line := range kept {
			if !used[line] {
				out = append(out, loadFinding{Pos: token.Position{Filename: fset.Position(f.Pos()).Filename, Line: line},
					Msg: "//fgcheck:kept on a line with no further use of a tracked plain load: drop it"})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pos.Filename != out[j].Pos.Filename {
			return out[i].Pos.Filename < out[j].Pos.Filename
		}
		return out[i].Pos.Line < out[j].Pos.Line
	})
	return out
}

// loadCall returns the load call e is, up to parentheses and conversions.
func loadCall(e ast.Expr, loads map[string]bool) *ast.CallExpr {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && conversions[id.Name] && len(x.Args) == 1 {
				e = x.Args[0]
				continue
			}
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && loads[sel.Sel.Name] {
				return x
			}
		}
		return nil
	}
}

// keptLines maps line numbers of f carrying //fgcheck:kept to the reason.
func keptLines(fset *token.FileSet, f *ast.File) map[int]string {
	m := map[int]string{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if i := strings.Index(c.Text, "fgcheck:kept"); i >= 0 {
				m[fset.Position(c.Pos()).Line] = strings.TrimSpace(c.Text[i+len("fgcheck:kept"):])
			}
		}
	}
	return m
}

type binding struct {
	obj  *ast.Object
	name string
	stmt ast.Node // the binding statement
	call *ast.CallExpr
}

func checkFunc(fset *token.FileSet, fd *ast.FuncDecl, loads map[string]bool, kept map[int]string, used map[int]bool) []loadFinding {
	var out []loadFinding
	var binds []binding
	// addrOf[obj] are the positions of &obj: a callee may write obj there.
	addrOf := map[*ast.Object][]token.Pos{}
	// assigns[obj] are the statements that assign obj, in source order.
	assigns := map[*ast.Object][]ast.Node{}
	var refs []*ast.Ident
	lhs := map[*ast.Ident]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.UnaryExpr:
			if id, ok := x.X.(*ast.Ident); ok && x.Op == token.AND && id.Obj != nil {
				addrOf[id.Obj] = append(addrOf[id.Obj], x.Pos())
			}
		case *ast.AssignStmt:
			for j, l := range x.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok || id.Obj == nil || id.Name == "_" {
					continue
				}
				assigns[id.Obj] = append(assigns[id.Obj], x)
				if x.Tok != token.ASSIGN && x.Tok != token.DEFINE {
					continue // an op-assignment reads id: a use
				}
				lhs[id] = true
				var rhs ast.Expr
				switch {
				case len(x.Rhs) == len(x.Lhs):
					rhs = x.Rhs[j]
				case len(x.Rhs) == 1 && j == 0:
					rhs = x.Rhs[0]
				}
				if rhs == nil {
					continue
				}
				if c := loadCall(rhs, loads); c != nil {
					binds = append(binds, binding{obj: id.Obj, name: id.Name, stmt: x, call: c})
				}
			}
		case *ast.ValueSpec:
			for j, id := range x.Names {
				if id.Obj == nil || j >= len(x.Values) {
					continue
				}
				lhs[id] = true
				assigns[id.Obj] = append(assigns[id.Obj], x)
				if c := loadCall(x.Values[j], loads); c != nil {
					binds = append(binds, binding{obj: id.Obj, name: id.Name, stmt: x, call: c})
				}
			}
		case *ast.Ident:
			refs = append(refs, x)
		}
		return true
	})
	// The m.reread calls: a reference inside one's value argument is a
	// routed use.
	var rereads []*ast.CallExpr
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "reread" && len(c.Args) == 4 {
				rereads = append(rereads, c)
			}
		}
		return true
	})
	inReread := func(id *ast.Ident) *ast.CallExpr {
		for _, c := range rereads {
			if id.Pos() >= c.Args[2].Pos() && id.End() <= c.Args[2].End() {
				return c
			}
		}
		return nil
	}
	routedBy := map[*ast.CallExpr]bool{}
	for _, b := range binds {
		// The end: the next statement that assigns the variable, or the
		// next &variable (a callee may write it: get_ret_stack's &offset).
		end := token.Pos(1 << 62)
		for _, a := range assigns[b.obj] {
			if a.Pos() > b.stmt.Pos() {
				end = a.End()
				break
			}
		}
		for _, p := range addrOf[b.obj] {
			if p > b.stmt.End() && p < end {
				end = p
				break
			}
		}
		sel := b.call.Fun.(*ast.SelectorExpr).Sel.Name
		wantKind := "Plain"
		if sel == "load" && len(b.call.Args) > 0 {
			wantKind = exprText(fset, b.call.Args[0])
		} else if sel == "reread" && len(b.call.Args) == 4 {
			wantKind = exprText(fset, b.call.Args[3])
		}
		first := true
		for _, id := range refs {
			// The binding statement's own references (its LHS, and in
			// its RHS those of the previous binding) are not uses of it.
			if id.Obj != b.obj || id.Pos() < b.stmt.End() || id.Pos() >= end || lhs[id] {
				continue
			}
			line := fset.Position(id.Pos()).Line
			if c := inReread(id); c != nil {
				routedBy[c] = true
				if first {
					out = append(out, loadFinding{Pos: fset.Position(id.Pos()), Msg: fmt.Sprintf("%s in %s: re-read at its first use (a load the kernel does not make)", b.name, fd.Name.Name)})
				}
				if k := exprText(fset, c.Args[3]); k != wantKind {
					out = append(out, loadFinding{Pos: fset.Position(id.Pos()), Msg: fmt.Sprintf("%s in %s: re-read with kind %s, its load's kind is %s", b.name, fd.Name.Name, k, wantKind)})
				}
				first = false
				continue
			}
			if r, ok := kept[line]; ok {
				used[line] = true
				if r == "" {
					out = append(out, loadFinding{Pos: fset.Position(id.Pos()), Msg: "//fgcheck:kept without a reason"})
				}
				continue
			}
			if first {
				first = false
				continue
			}
			out = append(out, loadFinding{Pos: fset.Position(id.Pos()), Msg: fmt.Sprintf("%s in %s, bound to a plain load at line %d, is used again: write m.reread(site, addr, %s, %s) or mark the line //fgcheck:kept <reason>",
				b.name, fd.Name.Name, fset.Position(b.stmt.Pos()).Line, b.name, wantKind)})
		}
	}
	for _, c := range rereads {
		if !routedBy[c] {
			out = append(out, loadFinding{Pos: fset.Position(c.Pos()), Msg: fmt.Sprintf("a reread in %s whose value is not a tracked plain load", fd.Name.Name)})
		}
	}
	return out
}

func exprText(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	if err := printer.Fprint(&b, fset, e); err != nil {
		return "?"
	}
	return b.String()
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

func TestLoadUses(t *testing.T) {
	fset, files := parseDir(t, ".")
	for _, f := range checkLoadUses(fset, files, loadExempt) {
		t.Errorf("%v", f)
	}
	// Every exemption is needed: its function has a further use of a
	// plain load that the rules would otherwise report.
	needed := map[string]bool{}
	for _, f := range checkLoadUses(fset, files, nil) {
		needed[f.Func] = true
	}
	for name, why := range loadExempt {
		if !needed[name] {
			t.Errorf("loadExempt names %s (%s), which has no further use of a plain load (or no longer exists): drop it", name, why)
		}
	}
}

// TestLoadUsesCatches: the checker fails on the patterns it exists for.
func TestLoadUsesCatches(t *testing.T) {
	src := `package fgraph
func (m *Machine) a() {
	gops := m.ld(SiteEnterArray, 0)
	if gops == HandleStub {
		return
	}
	m.callEntry(gops, 0, nil, false)
}
func (m *Machine) b(k Kind) {
	v := m.load(k, SiteRecursion, 0)
	_ = v
	_ = m.reread(SiteRecursionUse, 0, v, Plain)
}
func (m *Machine) c() {
	v := m.ld(SiteRecursion, 0)
	_ = m.reread(SiteRecursionUse, 0, v, Plain)
}
func (m *Machine) d() {
	v := m.ld(SiteRecursion, 0)
	_ = v
	_ = v //fgcheck:kept
	_ = m.reread(SiteRecursionUse, 0, 7, Plain)
}
func (m *Machine) e() {
	v := m.ld(SiteRecursion, 0)
	_ = v
	_ = v //fgcheck:kept the port's own check
	_ = m.reread(SiteRecursionUse, 0, v, Plain)
	v = 3
	_ = v
	_ = v
}
func (m *Machine) f() {
	v := m.ld(SiteRecursion, 0) - 1
	_ = v
	_ = v //fgcheck:kept a derived value is not tracked
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range checkLoadUses(fset, []*ast.File{f}, nil) {
		got = append(got, x.String())
	}
	want := []string{
		"x.go:7: gops in a, bound to a plain load at line 3, is used again",
		"x.go:12: v in b: re-read with kind Plain, its load's kind is k",
		"x.go:16: v in c: re-read at its first use",
		"x.go:21: //fgcheck:kept without a reason",
		"x.go:22: a reread in d whose value is not a tracked plain load",
		"x.go:36: //fgcheck:kept on a line with no further use",
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s\nwant %d:\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}

// TestReadOnceMutantsReread: a mutant that turns a READ_ONCE plain (or,
// M-bitmask-plain, a load per step into one load) makes the further uses of
// its value re-reads; the baseline never re-reads a READ_ONCE.
func TestReadOnceMutantsReread(t *testing.T) {
	cases := []struct {
		name   string
		mu     Mutant
		site   Site // the load
		use    Site // its further uses
		reason string
	}{
		{"push curr", MPushCurrPlain, SitePushCurr, SitePushCurrUse, "offset is used for ret_stack and for offset += F"},
		{"recursion", MRecursionPlain, SiteRecursion, SiteRecursionUse, "val is used for the test and for val |= bit"},
		{"entry array", MF2, SiteEnterArray, SiteEnterArrayUse, "gops is used for the stub test and for ftrace_ops_test"},
		{"return array", MF3, SiteRetArray, SiteRetArrayUse, "gops is used for the stub test and for the retfunc call"},
		{"bitmask copy", MBitmaskPlain, SiteEnterBitmask, SiteEnterBitmaskUse, "the local copy of the mask is used at every step (the kernel's load is plain too: a load per step)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mutant := range []bool{false, true} {
				cfg := DefaultConfig(Latest)
				if mutant {
					cfg = withMutant(cfg, c.mu)
				}
				m := MustMachine(cfg)
				mustRegister(t, m, m.AddOps(&Ops{Name: "a"}), 0)
				mustRegister(t, m, m.AddOps(&Ops{Name: "b"}), 1)
				h := attachRec(m)
				m.Call(1, false)
				m.Return()
				want := Once
				if mutant || c.mu == MBitmaskPlain {
					want = Plain
				}
				if h.kinds[c.site] != want {
					t.Errorf("mutant %v: load at %v is %v, want %v", mutant, c.site, h.kinds[c.site], want)
				}
				if got := h.rereads[c.use] > 0; got != mutant {
					t.Errorf("mutant %v: %d re-reads at %v, want some=%v (%s)", mutant, h.rereads[c.use], c.use, mutant, c.reason)
				}
			}
		})
	}
}
