package fgraph

// State encoding for the harness's visited-state cache (harness/state.go).
// Nothing here is kernel code: it reads the simulated machine, it never
// changes it.

// Clock is the value of the deterministic trace_clock_local() counter.
func (m *Machine) Clock() Word { return m.clock }

// AppendState appends an encoding of everything in the machine that can
// decide what the code under test does next, apart from the callback log and
// the warnings (the harness encodes the parts of those it still reads):
// memory, the per-level arch state, the users' Go-side state and the real
// stacks of return-address slots. Two machines with equal encodings behave
// alike from here on (given equal hook answers). Only the port's state is
// encoded: a compiled core keeps state of its own (the harness does not
// cache states of a compiled target).
func (m *Machine) AppendState(dst []uint64) []uint64 {
	// Memory: every shared word, live or not (a stale word above
	// curr_ret_stack is what a later push or a reader may see).
	dst = append(dst, m.Mem...)
	// current and the context level the harness set.
	dst = append(dst, uint64(m.Current), uint64(m.Level))
	// Per level: the slot of the call being entered, the
	// return_to_handler count (records carry it), calls made from entry
	// callbacks; only the levels where one is not 0, each with its
	// index, after their number (most of the 8 hold nothing).
	n := len(dst)
	dst = append(dst, 0)
	for i := range m.entryRetp {
		if m.entryRetp[i] != 0 || m.Handlers[i] != 0 || m.nest[i] != 0 {
			dst = append(dst, uint64(i), uint64(m.entryRetp[i]), uint64(m.Handlers[i]), uint64(m.nest[i]))
			dst[n]++
		}
	}
	// Registration generation counter, the clock, fgraph_array set up.
	init := uint64(0)
	if m.initialized {
		init = 1
	}
	dst = append(dst, uint64(m.regGen), uint64(m.clock), init)
	// Users: registration generation, registered, entryfunc running per
	// level (the levels where it is, each with its index, after their
	// number).
	for _, o := range m.ops {
		reg := uint64(0)
		if o.reg {
			reg = 1
		}
		dst = append(dst, uint64(o.gen), reg)
		n := len(dst)
		dst = append(dst, 0)
		for i, k := range o.in {
			if k != 0 {
				dst = append(dst, uint64(i), uint64(k))
				dst[n]++
			}
		}
	}
	// Tasks: alive, idle, and the real stack of return-address slots
	// (what the unwinders walk and returns pop).
	for i := range m.tasks {
		t := &m.tasks[i]
		var f uint64
		if t.alive {
			f |= 1
		}
		if t.idle {
			f |= 2
		}
		dst = append(dst, f, uint64(len(t.slots)))
		for _, s := range t.slots {
			dst = append(dst, uint64(s.retp), uint64(s.val), uint64(s.orig), uint64(s.fn)<<8|uint64(s.ctx))
		}
	}
	// A core with state of its own (a compiled target's statics).
	if c, ok := m.core.(StateCore); ok {
		dst = c.AppendState(dst)
	}
	return dst
}

// StateCore is a core that keeps state of its own beyond Mem (a compiled
// target: its statics, its entry points in flight): AppendState appends
// its encoding for the harness's state cache.
type StateCore interface {
	Core
	AppendState(dst []uint64) []uint64
}

// Digester is implemented by hooks that digest the inputs of the running
// context (the harness's state cache): a core whose code reads what the
// hooks do not see (a compiled target's loads of state the port does not
// model, and trace_clock_local()'s value in either core) hands them a
// digest of those values.
type Digester interface {
	Digest(v uint64)
}
