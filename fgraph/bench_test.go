package fgraph

import "testing"

// BenchmarkEnterReturnPair: one Call+Return pair on Latest with the real
// 512-word stack, two registered users (one reserving 8 bytes), no hooks.
// With two users active the entry and return take the loop path.
func BenchmarkEnterReturnPair(b *testing.B) {
	m := MustMachine(DefaultConfig(Latest))
	plain := m.AddOps(&Ops{Name: "plain"})
	data := m.AddOps(&Ops{Name: "data", DataBytes: 8})
	if m.RegisterFtraceGraph(plain) < 0 || m.RegisterFtraceGraph(data) < 0 {
		b.Fatal("register failed")
	}
	m.NoLog = true // no oracle reads the callback log here
	b.ReportAllocs()
	for b.Loop() {
		m.Call(1, false)
		m.Return()
	}
	if curr(m, 0) != 0 || len(m.Warnings) != 0 {
		b.Fatalf("curr %d warnings %v", curr(m, 0), m.Warnings)
	}
}
