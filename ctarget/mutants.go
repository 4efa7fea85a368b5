package ctarget

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mutant is a seeded bug in the C: a small patch of the tree's fgraph.c,
// applied to a temporary copy of the file (never to the tree). Each edit
// replaces, inside one function, the Nth statement line whose trimmed text
// is Old (1-based) with New. A mutant whose lines are not in the tree is
// an error, not a silent no-op.
type Mutant struct {
	// Name is the port catalogue's name of the same change (fgraph.Catalogue),
	// or a C-only name.
	Name  string
	Desc  string
	Edits []Edit
	// Control mutants must survive (the port catalogue's reason holds).
	Control bool
}

// Edit is one line replacement.
type Edit struct {
	Func string
	Old  string
	N    int
	New  string
}

// Mutants are the catalogue's ordering mutants that have a C form, and
// C-crash, which makes the compiled code crash (for the crash-isolation
// test: an access far outside every shadow stack).
var Mutants = []Mutant{
	{Name: "M-push-1", Desc: "raise curr_ret_stack before writing the offset word", Edits: []Edit{
		{"ftrace_push_return_trace", "current->ret_stack[offset] = val;", 1, "WRITE_ONCE(current->curr_ret_stack, offset + 1); current->ret_stack[offset] = val;"}}},
	{Name: "M-push-2", Desc: "no rewrite of the offset word and ret after the increment", Edits: []Edit{
		{"ftrace_push_return_trace", "current->ret_stack[offset] = val;", 2, ";"},
		{"ftrace_push_return_trace", "ret_stack->ret = ret;", 2, ";"}}},
	{Name: "M-push-barrier1", Desc: "drop the barrier() before W3", Edits: []Edit{
		{"ftrace_push_return_trace", "barrier();", 1, ";"}}},
	{Name: "M-push-barrier2", Desc: "drop the barrier() after W3", Edits: []Edit{
		{"ftrace_push_return_trace", "barrier();", 2, ";"}}},
	{Name: "M-enter-1", Desc: "drop the per-user restore of curr_ret_stack", Edits: []Edit{
		{"function_graph_enter", "current->curr_ret_stack = save_curr_ret_stack;", 1, ";"},
		{"function_graph_enter", "current->curr_ret_stack = save_curr_ret_stack;", 2, ";"}}},
	{Name: "M-rollback-off", Desc: "OUT_RET lowers curr_ret_stack by F instead of F+1", Edits: []Edit{
		{"function_graph_enter", "current->curr_ret_stack -= FGRAPH_FRAME_OFFSET + 1;", 1, "current->curr_ret_stack -= FGRAPH_FRAME_OFFSET;"}}},
	{Name: "M-rollback-depth", Desc: "the OUT path forgets curr_ret_depth--", Edits: []Edit{
		{"function_graph_enter", "current->curr_ret_depth--;", 1, ";"}}},
	{Name: "M-reserve-1", Desc: "raise curr_ret_stack before writing the DATA word", Edits: []Edit{
		{"fgraph_reserve_data", "current->ret_stack[curr_ret_stack - 1] = val;", 1, "current->curr_ret_stack = curr_ret_stack; current->ret_stack[curr_ret_stack - 1] = val;"}}},
	{Name: "M-reserve-barrier", Desc: "drop the barrier() between the DATA word and the raise", Edits: []Edit{
		{"fgraph_reserve_data", "barrier();", 1, ";"}}},
	{Name: "M-reserve-3", Desc: "drop the rewrite of the DATA word after the raise", Edits: []Edit{
		{"fgraph_reserve_data", "current->ret_stack[curr_ret_stack - 1] = val;", 2, ";"}}},
	{Name: "M-ret-1", Desc: "lower curr_ret_stack before running the retfuncs", Edits: []Edit{
		{"__ftrace_return_to_handler", "bitmap = get_bitmap_bits(current, offset);", 1, "bitmap = get_bitmap_bits(current, offset); current->curr_ret_stack = offset - FGRAPH_FRAME_OFFSET;"}}},
	{Name: "M-ret-off", Desc: "lower curr_ret_stack to the bitmap word instead of the frame start", Edits: []Edit{
		{"__ftrace_return_to_handler", "current->curr_ret_stack = offset - FGRAPH_FRAME_OFFSET;", 1, "current->curr_ret_stack = offset;"}}},
	{Name: "M-ret-barrier", Control: true, Desc: "drop the barrier() before lowering curr_ret_stack", Edits: []Edit{
		{"__ftrace_return_to_handler", "barrier();", 1, ";"}}},
	// Loads by kind: a READ_ONCE turned plain. Whether the compiled code
	// then loads the word again is the compiler's choice, which the C run
	// shows: the port models every re-load the compiler may make.
	{Name: "F2", Desc: "plain load of fgraph_array[i] in the entry loop", Edits: []Edit{
		{"function_graph_enter", "struct fgraph_ops *gops = READ_ONCE(fgraph_array[i]);", 1, "struct fgraph_ops *gops = fgraph_array[i];"}}},
	{Name: "F3", Desc: "plain load of fgraph_array[i] in the return loop", Edits: []Edit{
		{"__ftrace_return_to_handler", "struct fgraph_ops *gops = READ_ONCE(fgraph_array[i]);", 1, "struct fgraph_ops *gops = fgraph_array[i];"}}},
	{Name: "M-push-curr-plain", Control: true, Desc: "plain load of curr_ret_stack in push", Edits: []Edit{
		{"ftrace_push_return_trace", "offset = READ_ONCE(current->curr_ret_stack);", 1, "offset = current->curr_ret_stack;"}}},
	{Name: "M-bitmask-plain", Control: true, Desc: "iterate a local copy of fgraph_array_bitmask, loaded once", Edits: []Edit{
		{"function_graph_enter", "for_each_set_bit(i, &fgraph_array_bitmask,", 1, "unsigned long mask = fgraph_array_bitmask; for_each_set_bit(i, &mask,"}}},
	{Name: "C-crash", Desc: "push raises curr_ret_stack 2^28 words too far: the next reader's access is out of range (caught before it happens)", Edits: []Edit{
		{"ftrace_push_return_trace", "WRITE_ONCE(current->curr_ret_stack, offset + 1);", 1, "WRITE_ONCE(current->curr_ret_stack, offset + (1 << 28));"}}},
	{Name: "C-wild-call", Desc: "the entry loop calls through a corrupted function pointer: SIGSEGV in the compiled code", Edits: []Edit{
		{"function_graph_enter", "gops->entryfunc(&trace, gops))", 1, "((trace_func_graph_ent_t)0x10)(&trace, gops))"}}},
}

// LookupMutant finds a C mutant by name.
func LookupMutant(name string) (Mutant, bool) {
	for _, m := range Mutants {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}

// Apply writes a copy of t with mu applied to its fgraph.c into dir and
// returns it as a tree (the headers are links to t's).
func (mu Mutant) Apply(t *Tree, dir string) (*Tree, error) {
	src, err := os.ReadFile(t.Path(FgraphC))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	fnOf := sourceFuncs(lines)
	// Every edit names its line in the original file; then all apply.
	at := make([]int, len(mu.Edits))
	for k, e := range mu.Edits {
		n := 0
		at[k] = -1
		for i, l := range lines {
			if strings.TrimSpace(l) != e.Old || fnOf[i] != e.Func {
				continue
			}
			if n++; n == e.N {
				at[k] = i
				break
			}
		}
		if at[k] < 0 {
			return nil, fmt.Errorf("mutant %s: %s has no statement %q number %d in %s()", mu.Name, t.Path(FgraphC), e.Old, e.N, e.Func)
		}
	}
	for k, e := range mu.Edits {
		l := lines[at[k]]
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		lines[at[k]] = indent + e.New + " /* fgcheck mutant " + mu.Name + " */"
	}
	for _, f := range []string{FgraphC, FtraceH, SchedH} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, FgraphC), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		return nil, err
	}
	for _, f := range []string{FtraceH, SchedH} {
		os.Remove(filepath.Join(dir, f))
		if err := os.Symlink(t.Path(f), filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	return OpenTree(dir)
}

// sourceFuncs names, for every line of a C file, the function whose body
// it is in ("" outside): a function starts at a line `name(` at column 0
// (or `type name(`) followed by a `{` at column 0, and ends at the `}` at
// column 0.
func sourceFuncs(lines []string) []string {
	out := make([]string, len(lines))
	cur, pending := "", ""
	for i, l := range lines {
		switch {
		case cur == "" && l == "{" && pending != "":
			cur = pending
		case cur != "" && l == "}":
			out[i] = cur
			cur, pending = "", ""
			continue
		case cur == "" && len(l) > 0 && l[0] != ' ' && l[0] != '\t' && l[0] != '#' && strings.Contains(l, "("):
			head := l[:strings.Index(l, "(")]
			f := strings.Fields(strings.NewReplacer("*", " ").Replace(head))
			if len(f) > 0 {
				pending = f[len(f)-1]
			}
		}
		out[i] = cur
	}
	return out
}
