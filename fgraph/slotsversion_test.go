package fgraph

import "testing"

// TestSlotsVersion: SlotsVersion moves on at every change of a real stack
// (the harness's reader memos trust a copy of the slots while it stays),
// and stays across what leaves the slots as they are.
func TestSlotsVersion(t *testing.T) {
	m := MustMachine(DefaultConfig(Latest))
	mustRegister(t, m, m.AddOps(&Ops{Name: "a"}), 0)
	var saved MachineState
	steps := []struct {
		name   string
		moves  bool
		reason string
		do     func()
	}{
		{"a call", true, "pushes a slot, then hijacks it with return_to_handler", func() { m.Call(1, false) }},
		{"a tail call", true, "rewrites the top slot's function", func() { m.Call(2, true) }},
		{"a return", true, "pops the slot", func() { m.Return() }},
		{"a call into an interrupt", true, "pushes a slot of another level", func() {
			m.Level = 1
			m.Call(3, false)
		}},
		{"the words read", false, "a snapshot reads memory, no slot", func() { m.Snapshot(0) }},
		{"the slots read", false, "reading the slots changes nothing", func() { m.Slots(0); m.SlotWords(0, 0) }},
		{"a save", false, "SaveState copies the slots out", func() { m.SaveState(&saved) }},
		{"a return out of the interrupt", true, "pops the interrupt's slot", func() {
			m.Return()
			m.Level = 0
		}},
		{"a restore", true, "RestoreState puts saved slots back", func() { m.RestoreState(&saved) }},
		{"a fork", true, "FtraceGraphInitTask empties the child's real stack", func() { m.FtraceGraphInitTask(1) }},
		{"a reset", true, "Reset empties every real stack", func() { m.Reset() }},
	}
	for _, s := range steps {
		before := m.SlotsVersion()
		s.do()
		if moved := m.SlotsVersion() != before; moved != s.moves {
			t.Errorf("%s: version moved %v, want %v (%s)", s.name, moved, s.moves, s.reason)
		}
	}
}
