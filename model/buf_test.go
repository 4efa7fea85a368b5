package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fgcheck/fgcheck/model"
)

// TestWithBufIsWith: CallWithBuf and ReturnWithBuf give CallWith's and
// ReturnWith's results, in the storage they are given.
func TestWithBufIsWith(t *testing.T) {
	c := model.Config{F: 3, StackWords: 512, TaskVars: true, Bit0: true}
	mk := func() *model.State {
		s := model.New(c, []model.User{{Name: "u0"}, {Name: "u3", DataWords: 2}}, 1)
		s.Register(0, 0)
		s.Register(1, 3)
		s.Start(0)
		s.Start(1)
		return s
	}
	a, b := mk(), mk()
	ebuf := make([]model.EntryCall, 0, 8)
	rbuf := make([]model.RetCall, 0, 8)
	tab := a.Slots
	want := a.CallWith(0, 1, 0x1004, 0x1000, 0x7ff0, 0, &tab)
	got := b.CallWithBuf(ebuf, 0, 1, 0x1004, 0x1000, 0x7ff0, 0, &tab)
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
