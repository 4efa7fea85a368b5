package harness

import (
	"fmt"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// tracer collects a step-by-step trace, indented by nesting level.
type tracer struct{ lines []string }

func (t *tracer) add(level int, s string) {
	t.lines = append(t.lines, strings.Repeat("  ", level)+s)
}

// dump appends the current task's shadow stack, in hex and decoded.
func (t *tracer) dump(r *runner) {
	m := r.m
	for task := range r.sc.Tasks {
		b := m.TaskBase(task)
		curr := int(int64(m.Mem[b+fgraph.TaskCurr]))
		t.add(0, fmt.Sprintf("===== task%d: ret_stack=%d curr_ret_stack=%d curr_ret_depth=%d trace_overrun=%d =====",
			task, m.Mem[b+fgraph.TaskRetStack], curr, int64(m.Mem[b+fgraph.TaskDepth]), m.Mem[b+fgraph.TaskOverrun]))
		hi := curr + 2
		if hi > r.cfg.StackWords {
			hi = r.cfg.StackWords
		}
		for i := 0; i < hi; i++ {
			w := m.Mem[m.WordAddr(task, i)]
			mark := "  "
			if i == curr-1 {
				mark = "->"
			}
			t.add(0, fmt.Sprintf("%s %3d  0x%016x  %s", mark, i, w, DecodeWord(w)))
		}
	}
}

// DecodeWord describes a word as a meta word (it may be a frame field).
func DecodeWord(w fgraph.Word) string {
	off := fgraph.GetFrameOffset(w)
	switch fgraph.GetType(w) {
	case fgraph.FgraphTypeReserved:
		if w>>fgraph.FgraphTypeShift == 0 {
			return fmt.Sprintf("RESERVED offset=%d", off)
		}
	case fgraph.FgraphTypeBitmap:
		if w>>32 == 0 {
			return fmt.Sprintf("BITMAP bits=%#x offset=%d", fgraph.GetBitmapBits(w), off)
		}
	case fgraph.FgraphTypeData:
		if w>>21 == 0 {
			return fmt.Sprintf("DATA idx=%d words=%d offset=%d", fgraph.GetDataIndex(w), fgraph.GetDataSize(w), off)
		}
	}
	switch {
	case w == fgraph.ReturnToHandler:
		return "return_to_handler"
	case fgraph.FuncOf(w) != 0 && w < fgraph.FuncAddr(0x10000):
		f := fgraph.FuncOf(w)
		if w == fgraph.FuncAddr(f) {
			return fmt.Sprintf("func f%d", f)
		}
		return fmt.Sprintf("address in f%d (+%#x)", f, w-fgraph.FuncAddr(f))
	case w>>56 == 0xda:
		return "payload"
	case w>>40 == 0xffffc9:
		return "retp"
	}
	return ""
}
