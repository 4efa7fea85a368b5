package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fgcheck/fgcheck/model"
)

// twoUsers is a model of one task with users u0 (in slot 0, with
// data0 DATA words) and u3 (slot 3, two words) registered and started.
func twoUsers(stackWords, data0 int) *model.State {
	c := model.Config{F: 3, StackWords: stackWords, TaskVars: true, Bit0: true}
	s := model.New(c, []model.User{{Name: "u0", DataWords: data0}, {Name: "u3", DataWords: 2}}, 1)
	s.Register(0, 0)
	s.Register(1, 3)
	s.Start(0)
	s.Start(1)
	return s
}

// TestWithBufIsWith: CallWithBuf and ReturnWithBuf give CallWith's and
// ReturnWith's results, in the storage they are given.
func TestWithBufIsWith(t *testing.T) {
	a, b := twoUsers(512, 0), twoUsers(512, 0)
	ebuf := make([]model.EntryCall, 0, 8)
	rbuf := make([]model.RetCall, 0, 8)
	tab := a.Slots
	want := a.CallWith(0, 1, 0x1004, 0x1000, 0x7ff0, 0, &tab)
	got := b.CallWithBuf(ebuf, nil, 0, 1, 0x1004, 0x1000, 0x7ff0, 0, &tab)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CallWithBuf differs from CallWith (-want +got):\n%s", d)
	}
	if len(got.Entries) != 2 || &got.Entries[0] != &ebuf[:1][0] {
		t.Errorf("CallWithBuf's %d entries are not in the buffer given", len(got.Entries))
	}
	wr, err1 := a.ReturnWith(0, &tab)
	gr, err2 := b.ReturnWithBuf(rbuf, 0, &tab)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if d := cmp.Diff(wr, gr); d != "" {
		t.Errorf("ReturnWithBuf differs from ReturnWith (-want +got):\n%s", d)
	}
	if len(gr.Calls) != 2 || &gr.Calls[0] != &rbuf[:1][0] {
		t.Errorf("ReturnWithBuf's %d calls are not in the buffer given", len(gr.Calls))
	}
}

// TestSlabFrames: frames whose arrays come from a Slab are the frames
// CallWith builds, and stay so while later pushes cut their arrays from
// the same chunks (an array handed out twice would change an earlier
// frame's DATA words); and a push from a slab allocates about once per
// chunk, not three times.
func TestSlabFrames(t *testing.T) {
	a, b := twoUsers(4096, 1), twoUsers(4096, 1)
	var slab model.Slab
	var ebuf []model.EntryCall
	var rbuf []model.RetCall
	for i := range 200 {
		// Pushes and pops in turn, deeper by one every third step.
		ret, retp := uint64(0x1000+8*i), uint64(0x7ff0-8*i)
		if i%3 == 2 {
			if _, err := a.ReturnWith(0, &a.Slots); err != nil {
				t.Fatal(err)
			}
			if _, err := b.ReturnWith(0, &b.Slots); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want := a.CallWith(0, 1, ret, 0x1000, retp, 0, &a.Slots)
		got := b.CallWithBuf(ebuf, &slab, 0, 1, ret, 0x1000, retp, 0, &b.Slots)
		ebuf = got.Entries
		if !want.Pushed || len(want.Entries) != 2 {
			t.Fatalf("push %d: %+v, want a frame accepted by both users", i, want)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("push %d: the slab's result differs (-want +got):\n%s", i, d)
		}
	}
	if d := cmp.Diff(a.Tasks, b.Tasks); d != "" {
		t.Errorf("after the pushes, the slab's frames differ (-heap +slab):\n%s", d)
	}
	allocs := testing.AllocsPerRun(100, func() {
		r := b.CallWithBuf(ebuf, &slab, 0, 1, 0x1004, 0x1000, 0x7ff0, 0, &b.Slots)
		ebuf = r.Entries
		rr, err := b.ReturnWithBuf(rbuf, 0, &b.Slots)
		if err != nil {
			t.Fatal(err)
		}
		rbuf = rr.Calls
	})
	if allocs > 0.5 {
		t.Errorf("a push and pop with a slab allocate %.2f times, want about once per chunk", allocs)
	}
}
