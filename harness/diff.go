package harness

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fgcheck/fgcheck/model"
)

// diffMemo remembers the model oracle's rendered differences by their
// inputs, for one runner (no lock). A mutant explored with every violation
// counted meets the same few differences again and again: peer-spin with
// M-push-barrier2 rendered 34,488 of them from 280 distinct pairs, and
// go-cmp's reflection took 73 % of that exploration's time (7 Dec 2026).
// The key is both tasks' encodings (appendTask: exact for what diffTask
// compares); the memo is emptied when it holds diffMemoMax texts.
type diffMemo struct {
	m   map[string]string
	key []uint64
}

const diffMemoMax = 4096

// diff is diffTask(want, got), rendered once per distinct pair.
func (d *diffMemo) diff(want *model.Task, got model.Task) string {
	vis := want.Visible()
	d.key = appendTask(appendTask(d.key[:0], &vis), &got)
	k := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d.key))), len(d.key)*8)
	if s, ok := d.m[string(k)]; ok {
		return s
	}
	s := diffTask(want, got)
	if d.m == nil || len(d.m) >= diffMemoMax {
		d.m = make(map[string]string)
	}
	d.m[string(k)] = s
	return s
}

// diffTask is the (-model +words) difference between the visible part of a
// model task and an abstracted one, "" if equal. The fast comparison runs
// first; go-cmp renders only a real difference. go-cmp indents its output
// with a no-break space in some processes and a space in others (on purpose:
// its text is not stable); the message goes into traces and replay output
// that must not depend on the process, so it gets plain spaces.
func diffTask(want *model.Task, got model.Task) string {
	if equalTask(want, &got) {
		return ""
	}
	d := cmp.Diff(want.Visible(), got, cmpopts.EquateEmpty(), hexWords)
	return hexShown.ReplaceAllString(strings.ReplaceAll(d, "\u00a0", " "), "$1")
}

// hexWords shows words (return addresses, funcs, retp slots, payload) in
// hex, as the kernel and the pictures do; go-cmp prints a transformed value
// as Inverse(hex, string("0x...")), which hexShown strips to the number.
var (
	hexWords = cmp.Transformer("hex", func(w uint64) string { return fmt.Sprintf("%#x", w) })
	hexShown = regexp.MustCompile(`Inverse\(hex, string\("(0x[0-9a-f]+)"\)\)`)
)

// equalTask compares what words can show: Accepted and EntryDepth of the
// model's frames are ground truth the abstraction cannot recover.
func equalTask(a, b *model.Task) bool {
	if a.HasStack != b.HasStack || a.Depth != b.Depth || a.Overrun != b.Overrun || len(a.Frames) != len(b.Frames) {
		return false
	}
	for i := range a.Frames {
		x, y := &a.Frames[i], &b.Frames[i]
		if x.Ret != y.Ret || x.Func != y.Func || x.Retp != y.Retp || x.Bits != y.Bits || x.Gens != y.Gens ||
			len(x.Data) != len(y.Data) {
			return false
		}
		for j := range x.Data {
			if x.Data[j].Idx != y.Data[j].Idx || !slices.Equal(x.Data[j].Words, y.Data[j].Words) {
				return false
			}
		}
	}
	return true
}
