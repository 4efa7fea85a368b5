package fgraph_test

import (
	"slices"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestViewAliasesSnapshotCopies: View and Snapshot show the same state, but
// only View follows later stores (the oracles read it in place; a caller
// that keeps words must use Snapshot).
func TestViewAliasesSnapshotCopies(t *testing.T) {
	m := fgraph.MustMachine(fgraph.DefaultConfig(fgraph.Latest))
	m.RegisterFtraceGraph(m.AddOps(&fgraph.Ops{Name: "u", DataBytes: 8}))
	m.Call(1, false)
	view, snap := m.View(0), m.Snapshot(0)
	if view.Curr != snap.Curr || view.HasStack != snap.HasStack || view.Depth != snap.Depth || !slices.Equal(view.Words, snap.Words) {
		t.Fatalf("View %+v and Snapshot %+v differ", view, snap)
	}
	if len(view.Words) != cap(view.Words) {
		t.Errorf("View's words can be appended into the next task's memory: len %d cap %d", len(view.Words), cap(view.Words))
	}
	m.Call(2, false) // a second frame lands on the words above curr
	if slices.Equal(view.Words, snap.Words) {
		t.Error("View did not follow the second push")
	}
	if snap.Words[snap.Curr] != 0 {
		t.Errorf("the snapshot taken before the second push has word %d = %#x, want the 0 it had", snap.Curr, snap.Words[snap.Curr])
	}
}
