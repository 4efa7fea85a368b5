package harness

import (
	"strconv"
	"testing"

	"github.com/fgcheck/fgcheck/model"
)

// TestDiffMemo: the memo of rendered differences gives diffTask's text for
// every pair, a pair met again included, and tells apart pairs that differ
// in a single field anywhere in either task (its key is not lossy there);
// it is emptied when full.
func TestDiffMemo(t *testing.T) {
	frame := func(ret uint64, data ...uint64) model.Frame {
		return model.Frame{Ret: ret, Func: 0x10, Retp: 0x7f00, Bits: 1, Data: []model.Data{{Idx: 0, Words: data}}}
	}
	want := model.Task{HasStack: true, Depth: 1, Frames: []model.Frame{frame(0xa1, 1, 2), frame(0xa2)}}
	got := model.Task{HasStack: true, Depth: 1, Frames: []model.Frame{frame(0xa1, 1, 2), frame(0xb2)}}
	// each case changes one field of want or got: the memo must render it
	// anew (a key that left the field out would hand back the text of the
	// unchanged pair).
	cases := []struct {
		why  string
		edit func(w, g *model.Task)
	}{
		{"the same pair again: a hit, no text added", func(w, g *model.Task) {}},
		{"a data word of the model", func(w, g *model.Task) { w.Frames[0].Data[0].Words[1] = 3 }},
		{"a data word of the words' image", func(w, g *model.Task) { g.Frames[0].Data[0].Words[0] = 9 }},
		{"a data word moved from one record to the next", func(w, g *model.Task) {
			g.Frames[0].Data = []model.Data{{Idx: 0, Words: []uint64{1}}, {Idx: 1, Words: []uint64{2}}}
		}},
		{"the gen-counter bits", func(w, g *model.Task) { g.Frames[1].Gens = 1 << 20 }},
		{"the bitmap", func(w, g *model.Task) { g.Frames[1].Bits = 3 }},
		{"curr_ret_depth", func(w, g *model.Task) { g.Depth = 2 }},
		{"a frame fewer", func(w, g *model.Task) { g.Frames = g.Frames[:1] }},
		{"the overrun count", func(w, g *model.Task) { w.Overrun = 1 }},
	}
	var d diffMemo
	first := d.diff(&want, got)
	if first == "" || first != diffTask(&want, got) {
		t.Fatalf("the memo's first rendering %q, diffTask's %q", first, diffTask(&want, got))
	}
	for _, tc := range cases {
		w, g := cloneTask(want), cloneTask(got)
		tc.edit(&w, &g)
		if got, exp := d.diff(&w, g), diffTask(&w, g); got != exp {
			t.Errorf("%s: the memo gives\n%s\ndiffTask\n%s", tc.why, got, exp)
		}
	}
	if len(d.m) != len(cases) { // the first pair and every case's but the hit
		t.Fatalf("%d texts kept for %d distinct pairs", len(d.m), len(cases))
	}
	for i := len(d.m); i < diffMemoMax; i++ {
		d.m[strconv.Itoa(i)] = "" // (keys no pair encodes to)
	}
	d.diff(&want, cloneTask(want))
	if len(d.m) != 1 {
		t.Errorf("a new pair past the bound left %d texts, want the memo emptied and the pair alone", len(d.m))
	}
}

// cloneTask is a deep copy of t.
func cloneTask(t model.Task) model.Task {
	c := t
	c.Frames = make([]model.Frame, len(t.Frames))
	for i, f := range t.Frames {
		f.Data = append([]model.Data(nil), f.Data...)
		for j := range f.Data {
			f.Data[j].Words = append([]uint64(nil), f.Data[j].Words...)
		}
		c.Frames[i] = f
	}
	return c
}
