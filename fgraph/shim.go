package fgraph

// Kind is the kind of a shared-memory access.
type Kind uint8

const (
	Plain  Kind = iota // plain C load or store
	Once               // READ_ONCE / WRITE_ONCE
	Atomic             // atomic_inc / atomic_read / atomic_set
)

var kindNames = [...]string{"plain", "once", "atomic"}

func (k Kind) String() string { return kindNames[k] }

// Fence is a region boundary of the compiler model.
type Fence uint8

const (
	Barrier Fence = iota // barrier()
	SmpRmb               // smp_rmb(): a compiler barrier on one CPU
	SmpWmb               // smp_wmb(): a compiler barrier on one CPU
	CallIn               // entering an opaque function (a user callback)
	CallOut              // returning from an opaque function
	OpEnd                // end of a top-level operation
	IrqOff               // local_irq_save(): no interrupt until IrqOn (a barrier too)
	IrqOn                // local_irq_restore()
)

var fenceNames = [...]string{"barrier", "smp_rmb", "smp_wmb", "call", "return", "end", "irq_off", "irq_on"}

func (f Fence) String() string { return fenceNames[f] }

// Addr is the address of one shared word in Machine.Mem.
type Addr int32

// Hooks is where the harness plugs in. Every shared access of the port calls
// one of these when hooks are attached; with none attached the shim reads and
// writes Machine.Mem directly.
type Hooks interface {
	// Load returns the value the current context sees at a.
	Load(s Site, a Addr, k Kind) Word
	// Store records a store by the current context.
	Store(s Site, a Addr, v Word, k Kind)
	// AtomicAdd adds delta at a indivisibly and returns the new value.
	AtomicAdd(s Site, a Addr, delta int64) Word
	// Fence ends the current compiler region.
	Fence(s Site, f Fence)
	// Reread returns the value of a plain load at a that the code uses a
	// further time: the compiler may load it again for that use. prev is
	// the value the load gave. The hook decides whether a re-load is legal
	// there (no region boundary, no own store that may alias a, since the
	// load) and, if it is not, returns prev.
	Reread(s Site, a Addr, prev Word) Word
}

// The shim. Kernel primitive -> method:
//   plain load/store        ld / st
//   READ_ONCE / WRITE_ONCE  ldOnce / stOnce
//   atomic_inc/atomic_read  atomicInc / ldAtomic
//   barrier()               barrier
//   smp_rmb() / smp_wmb()   fence(SmpRmb) / fence(SmpWmb)
//   a load whose kind a mutant switches          load(k, ...)
//   a further use of a plain load's value          reread
//
// The rule for loads (docs/fidelity.md, "Loads by kind"): the first use of
// a plain load's value is the load; every further use of that value in
// the kernel's code is written m.reread(site, addr, value, kind), because
// the compiler may load the word again for it unless the load is
// READ_ONCE (or atomic). TestLoadUses (loads_test.go) derives the list of
// such values from this package's source and fails on a further use that
// does not go through reread.

func (m *Machine) ld(s Site, a Addr) Word {
	if m.hooks != nil {
		return m.hooks.Load(s, a, Plain)
	}
	return m.Mem[a]
}

func (m *Machine) ldOnce(s Site, a Addr) Word {
	if m.hooks != nil {
		return m.hooks.Load(s, a, Once)
	}
	return m.Mem[a]
}

// load is a load whose kind is a parameter: a mutant that turns a
// READ_ONCE plain (or a variant whose kernel has no READ_ONCE there) passes
// Plain.
func (m *Machine) load(k Kind, s Site, a Addr) Word {
	if m.hooks != nil {
		return m.hooks.Load(s, a, k)
	}
	return m.Mem[a]
}

func (m *Machine) ldAtomic(s Site, a Addr) Word {
	if m.hooks != nil {
		return m.hooks.Load(s, a, Atomic)
	}
	return m.Mem[a]
}

func (m *Machine) st(s Site, a Addr, v Word) {
	if m.hooks != nil {
		m.hooks.Store(s, a, v, Plain)
		return
	}
	m.poke(a, v)
}

func (m *Machine) stOnce(s Site, a Addr, v Word) {
	if m.hooks != nil {
		m.hooks.Store(s, a, v, Once)
		return
	}
	m.poke(a, v)
}

func (m *Machine) stAtomic(s Site, a Addr, v Word) {
	if m.hooks != nil {
		m.hooks.Store(s, a, v, Atomic)
		return
	}
	m.poke(a, v)
}

func (m *Machine) atomicInc(s Site, a Addr) {
	if m.hooks != nil {
		m.hooks.AtomicAdd(s, a, 1)
		return
	}
	m.Mem[a]++
}

func (m *Machine) fence(s Site, f Fence) {
	if m.hooks != nil {
		m.hooks.Fence(s, f)
	}
}

func (m *Machine) barrier(s Site) { m.fence(s, Barrier) }

// reread is a further use of the value prev that a load of kind k at a
// gave: for a plain load the compiler may load a again for this use, so a
// remote CPU's store between the uses is visible; a READ_ONCE or atomic
// load is never repeated (k != Plain: prev). s is the use's own site, so
// that positions of the load's site do not depend on how many uses follow.
func (m *Machine) reread(s Site, a Addr, prev Word, k Kind) Word {
	if k != Plain || m.hooks == nil {
		return prev
	}
	return m.hooks.Reread(s, a, prev)
}

// Signed views of int fields stored in words.
func wordInt(w Word) int { return int(int64(w)) }
func intWord(i int) Word { return Word(int64(i)) }
