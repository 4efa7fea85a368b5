package fgraph

// MachineState is a copy of a machine's state between two top-level
// operations, for a harness that resumes a run from there instead of
// running its prefix again (SaveState, RestoreState). It is harness
// support, not kernel code: nothing of the port reads it.
//
// Log and Warnings are kept by length only: RestoreState is for a machine
// that, since Reset, appended the same records up to there (a run that
// repeats the saved run's prefix does).
type MachineState struct {
	mem         []Word
	slots       [][]slot
	alive, idle []bool
	ops         []opsState
	entryRetp   [8]Word
	current     int
	level       int
	nlog, nwarn int
	handlers    [8]int
	nest        [8]int
	regGen      int
	clock       Word
	initialized bool
	core        []uint64 // a SnapCore's own state
}

// SnapCore is a core with state of its own (a compiled target's statics)
// that a MachineState can hold: SaveCore appends it to dst, RestoreCore
// puts it back. CanSave is false where the core's state is not all data
// (a remote CPU's thread blocked in the compiled code).
type SnapCore interface {
	Core
	CanSave() bool
	SaveCore(dst []uint64) []uint64
	RestoreCore(src []uint64)
}

// CanSave reports whether SaveState can copy the machine's state now: the
// port's always is data; a SnapCore's where it says so; another core's
// never.
func (m *Machine) CanSave() bool {
	switch c := m.core.(type) {
	case portCore:
		return true
	case SnapCore:
		return c.CanSave()
	}
	return false
}

type opsState struct {
	gen int
	reg bool
	in  [8]int
}

// SaveState copies m's state into s, reusing s's storage.
func (m *Machine) SaveState(s *MachineState) {
	s.mem = append(s.mem[:0], m.Mem...)
	if len(s.slots) != len(m.tasks) {
		s.slots = make([][]slot, len(m.tasks))
		s.alive = make([]bool, len(m.tasks))
		s.idle = make([]bool, len(m.tasks))
	}
	for i := range m.tasks {
		s.slots[i] = append(s.slots[i][:0], m.tasks[i].slots...)
		s.alive[i], s.idle[i] = m.tasks[i].alive, m.tasks[i].idle
	}
	s.ops = s.ops[:0]
	for _, o := range m.ops {
		s.ops = append(s.ops, opsState{o.gen, o.reg, o.in})
	}
	s.entryRetp, s.current, s.level = m.entryRetp, m.Current, m.Level
	s.nlog, s.nwarn = len(m.Log), len(m.Warnings)
	s.handlers, s.nest = m.Handlers, m.nest
	s.regGen, s.clock, s.initialized = m.regGen, m.clock, m.initialized
	s.core = s.core[:0]
	if c, ok := m.core.(SnapCore); ok {
		s.core = c.SaveCore(s.core)
	}
}

// RestoreState returns m to the state s saved (see MachineState for Log
// and Warnings).
func (m *Machine) RestoreState(s *MachineState) {
	copy(m.Mem, s.mem)
	m.slotVer++
	for i := range m.tasks {
		m.tasks[i].slots = append(m.tasks[i].slots[:0], s.slots[i]...)
		m.tasks[i].alive, m.tasks[i].idle = s.alive[i], s.idle[i]
	}
	for i, o := range m.ops {
		o.gen, o.reg, o.in = s.ops[i].gen, s.ops[i].reg, s.ops[i].in
	}
	m.entryRetp, m.Current, m.Level = s.entryRetp, s.current, s.level
	m.Log, m.Warnings = m.Log[:s.nlog], m.Warnings[:s.nwarn]
	m.Handlers, m.nest = s.handlers, s.nest
	m.regGen, m.clock, m.initialized = s.regGen, s.clock, s.initialized
	if c, ok := m.core.(SnapCore); ok {
		c.RestoreCore(s.core)
	}
}
