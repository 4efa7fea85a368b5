package fgraph

// ENOSPC is the kernel's -ENOSPC.
const ENOSPC = -28

// fgraphLRUInit fills the LRU table with 0..15.
// Source: fgraph_lru_init(), kernel/trace/fgraph.c v6.11+ (6d4786592ac8).
func (m *Machine) fgraphLRUInit() {
	for i := 0; i < FgraphArraySize; i++ {
		m.st(SiteLRU, AddrLRU+Addr(i), intWord(i))
	}
}

// fgraphLRUAllocIndex hands out the least recently released index.
// Source: fgraph_lru_alloc_index(). Mutant F6: the lowest free index.
func (m *Machine) fgraphLRUAllocIndex() int {
	if m.cfg.Variant == Seed || m.cfg.Mutants.Has(MF6) {
		// [PATCH 04/20] and mutant F6: the lowest index whose slot is the stub.
		for i := 0; i < FgraphArraySize; i++ {
			if m.ld(SiteLRU, AddrBitmask)&(1<<i) == 0 {
				m.st(SiteLRU, AddrBitmask, m.ld(SiteLRU, AddrBitmask)|1<<i)
				return i
			}
		}
		return -1
	}
	next := wordInt(m.ld(SiteLRU, AddrLRUNext))
	idx := wordInt(m.ld(SiteLRU, AddrLRU+Addr(next)))
	if idx < 0 {
		return -1
	}
	m.st(SiteLRU, AddrLRU+Addr(next), intWord(-1))
	m.st(SiteLRU, AddrLRUNext, intWord((next+1)%FgraphArraySize))
	m.st(SiteLRU, AddrBitmask, m.ld(SiteLRU, AddrBitmask)|1<<idx) // set_bit
	return idx
}

// fgraphLRUReleaseIndex puts idx at the end of the LRU.
// Source: fgraph_lru_release_index().
func (m *Machine) fgraphLRUReleaseIndex(idx int) int {
	if idx < 0 || idx >= FgraphArraySize {
		m.warn(SiteLRU, "WARN_ON_ONCE: fgraph_lru_release_index(%d): out of range", idx)
		return -1
	}
	if m.cfg.Variant == Seed || m.cfg.Mutants.Has(MF6) {
		m.st(SiteLRU, AddrBitmask, m.ld(SiteLRU, AddrBitmask)&^(1<<idx))
		return 0
	}
	last := wordInt(m.ld(SiteLRU, AddrLRULast))
	if wordInt(m.ld(SiteLRU, AddrLRU+Addr(last))) != -1 {
		m.warn(SiteLRU, "WARN_ON_ONCE: fgraph_lru_release_index(%d): table full", idx)
		return -1
	}
	m.st(SiteLRU, AddrLRU+Addr(last), intWord(idx))
	m.st(SiteLRU, AddrLRULast, intWord((last+1)%FgraphArraySize))
	m.st(SiteLRU, AddrBitmask, m.ld(SiteLRU, AddrBitmask)&^(1<<idx)) // clear_bit
	return 0
}

// noDirect is FGRAPH_NO_DIRECT (f4ff9f646a4d): an entry-for-all arch has no
// direct mode in the latest kernel.
func (m *Machine) noDirect() bool { return m.cfg.NoDirect() }

// NoDirect reports whether the configuration has no direct (single-user)
// mode: no static calls, the seed, or FGRAPH_NO_DIRECT on an entry-for-all
// arch in the latest kernel.
func (c Config) NoDirect() bool {
	if !c.StaticCall || c.Variant == Seed {
		return true
	}
	return c.fgraphNoDirect()
}

// fgraphNoDirect is FGRAPH_NO_DIRECT (f4ff9f646a4d): an entry-for-all arch
// in the latest kernel (the F10 mutant takes it away again).
func (c Config) fgraphNoDirect() bool {
	return c.EntryForAll && (c.Variant == Latest || c.Variant == V612) && !c.Mutants.Has(MF10)
}

// doDirectDefault is the initial value of the static key fgraph_do_direct:
// DEFINE_STATIC_KEY_TRUE, but DEFINE_STATIC_KEY_FALSE when FGRAPH_NO_DIRECT
// (f4ff9f646a4d: an entry-for-all arch in the latest kernel; the entry and
// return paths test !FGRAPH_NO_DIRECT before the key).
func (m *Machine) doDirectDefault() Word {
	if m.cfg.fgraphNoDirect() {
		return 0
	}
	return 1
}

// ftraceGraphEnableDirect points the static calls at one user.
// Source: ftrace_graph_enable_direct(); the key write is
// static_branch_disable until 53b2fae90ff0 (Feb 2026, F9), then enable.
func (m *Machine) ftraceGraphEnableDirect(enableBranch bool, gops Word) {
	if m.noDirect() {
		return
	}
	if gops == HandleNull {
		for i := m.nextBit(SiteDirect, 0); i < FgraphArraySize; i = m.nextBit(SiteDirect, i+1) {
			gops = m.ld(SiteDirect, AddrArray+Addr(i))
		}
	}
	if m.opsOf(gops) == nil {
		m.warn(SiteDirect, "WARN_ON_ONCE: ftrace_graph_enable_direct: no function")
		return
	}
	m.st(SiteDirect, AddrDirectGops, gops)
	m.stOnce(SiteDirect, AddrFunc, gops)
	m.stOnce(SiteDirect, AddrRetfunc, gops)
	if enableBranch {
		if m.cfg.Variant == V611 || m.cfg.Mutants.Has(MF9) {
			m.stOnce(SiteDirect, AddrDoDirect, 0) // the F9 bug
		} else {
			m.stOnce(SiteDirect, AddrDoDirect, 1)
		}
	}
}

// ftraceGraphDisableDirect. Source: ftrace_graph_disable_direct().
func (m *Machine) ftraceGraphDisableDirect(disableBranch bool) {
	if m.noDirect() {
		return
	}
	if disableBranch {
		m.stOnce(SiteDirect, AddrDoDirect, 0)
	}
	m.stOnce(SiteDirect, AddrFunc, HandleStub)
	m.stOnce(SiteDirect, AddrRetfunc, HandleStub)
	m.st(SiteDirect, AddrDirectGops, HandleStub)
}

// RegisterBegin runs register_ftrace_graph() up to, not including,
// ftrace_startup_subops(): index allocation, direct-mode switching, stacks.
// It returns the index or a negative errno.
// Source: register_ftrace_graph(), gregkh/linux 000aa47a51233 (Mlate order;
// kernel-fgraph.md section 2.7 steps 1-10); the seed's lowest-free-slot
// search with an immediate publish.
func (m *Machine) registerBegin(o *Ops) int {
	if o == nil || o.k >= len(m.ops) || m.ops[o.k] != o {
		m.warn(SiteRegister, "register_ftrace_graph: unknown ops")
		return ENOSPC
	}
	if o.reg {
		if m.cfg.Variant == Latest {
			// o.reg stands for FTRACE_OPS_FL_GRAPH in gops->ops.flags.
			// Source: register_ftrace_graph(), Steven Rostedt's patch
			// setting and testing FTRACE_OPS_FL_GRAPH (v2 of 1 Jul 2025,
			// Link 20250701194451.22e34724@gandalf.local.home; posted
			// for-next as 20250723195221.999900536@kernel.org; in
			// linux-mm dc1898433b96, not in gregkh 000aa47a51233):
			// WARN_ONCE(gops->ops.flags & FTRACE_OPS_FL_GRAPH, ...).
			m.warn(SiteRegister, "WARN_ONCE: function graph ops registered again")
			return EBUSY
		}
		// v6.11 and the seed have no such test: a second register would
		// allocate a second index and overwrite gops->idx, and what
		// ftrace_startup_subops() then does with an enabled subops is
		// ftrace.c, outside the port. Refused here (docs/fidelity.md).
		m.warn(SiteRegister, "register_ftrace_graph: %s already registered (not ported for %v: refused)", o.Name, m.cfg.Variant)
		return ENOSPC
	}
	h := OpsHandle(o.k)
	if !m.initialized {
		// The array must always have real data on it.
		for i := 0; i < FgraphArraySize; i++ {
			m.st(SiteRegister, AddrArray+Addr(i), HandleStub)
		}
		m.fgraphLRUInit()
		m.initialized = true
	}
	i := m.fgraphLRUAllocIndex()
	if i < 0 || m.ld(SiteRegister, AddrArray+Addr(i)) != HandleStub {
		m.warn(SiteRegister, "register_ftrace_graph: -ENOSPC")
		return ENOSPC
	}
	m.st(SiteRegister, m.opsAddr(o.k, OpsIdx), intWord(i))
	m.MarkRegistered(o)
	if m.cfg.GenCounter {
		m.st(SiteRegister, AddrSlotGen+Addr(i), m.ld(SiteRegister, AddrSlotGen+Addr(i))+1)
	}
	if m.cfg.Variant == Seed {
		m.st(SiteRegister, AddrArray+Addr(i), h)
		if n := wordInt(m.ld(SiteRegister, AddrArrayCnt)); i+1 > n {
			m.st(SiteRegister, AddrArrayCnt, intWord(i+1))
		}
	} else if m.cfg.Mutants.Has(MF4) {
		m.st(SiteRegister, AddrArray+Addr(i), h) // published before startup (F4)
	}
	active := wordInt(m.ld(SiteRegister, AddrActive)) + 1
	m.st(SiteRegister, AddrActive, intWord(active))
	if active == 2 {
		m.ftraceGraphDisableDirect(true)
	}
	if active == 1 {
		m.ftraceGraphEnableDirect(false, h)
		m.startGraphTracing()
	} else {
		m.initTaskVars(i)
	}
	return i
}

// RegisterFinish runs ftrace_startup_subops() (the ops' hash becomes usable)
// and publishes the user in fgraph_array (after startup since the F4 fix).
func (m *Machine) registerFinish(o *Ops) {
	if o == nil || !o.reg {
		return
	}
	m.st(SiteRegisterFinish, m.opsAddr(o.k, OpsReady), 1)
	if m.cfg.Variant != Seed && !m.cfg.Mutants.Has(MF4) {
		i := wordInt(m.ld(SiteRegisterFinish, m.opsAddr(o.k, OpsIdx)))
		m.st(SiteRegisterFinish, AddrArray+Addr(i), OpsHandle(o.k))
	}
}

// RegisterFtraceGraph is register_ftrace_graph() in one step.
func (m *Machine) RegisterFtraceGraph(o *Ops) int {
	i := m.RegisterBegin(o)
	if i >= 0 {
		m.RegisterFinish(o)
	}
	return i
}

// UnregisterBegin runs unregister_ftrace_graph() up to the synchronisation
// in ftrace_shutdown_subops(): release the index, store the stub, count down.
// Source: unregister_ftrace_graph(), gregkh/linux 000aa47a51233 (steps 1-4).
func (m *Machine) unregisterBegin(o *Ops) bool {
	if o == nil {
		m.warn(SiteUnregister, "unregister_ftrace_graph: not registered (NULL ops)")
		return false
	}
	if !o.reg {
		if m.cfg.Variant == Latest {
			// Source: unregister_ftrace_graph(), the same Jul 2025 change:
			// WARN_ONCE(!(gops->ops.flags & FTRACE_OPS_FL_GRAPH), ...).
			m.warn(SiteUnregister, "WARN_ONCE: function graph ops unregistered without registering")
			return false
		}
		m.warn(SiteUnregister, "unregister_ftrace_graph: not registered")
		return false
	}
	// Latest: every early return below goes to "out", which clears
	// FTRACE_OPS_FL_GRAPH.
	out := func() bool {
		if m.cfg.Variant == Latest {
			o.reg = false
		}
		return false
	}
	if m.ld(SiteUnregister, AddrActive) == 0 {
		return out()
	}
	h := OpsHandle(o.k)
	idx := wordInt(m.ld(SiteUnregister, m.opsAddr(o.k, OpsIdx)))
	if m.cfg.Variant == Seed {
		// [PATCH 04/20]: search the array up to fgraph_array_cnt.
		n := wordInt(m.ld(SiteUnregister, AddrArrayCnt))
		if idx < 0 || idx >= n {
			return false
		}
	}
	if idx < 0 || idx >= FgraphArraySize || m.ld(SiteUnregister, AddrArray+Addr(idx)) != h {
		m.warn(SiteUnregister, "unregister_ftrace_graph: %s not in fgraph_array", o.Name)
		return out()
	}
	if m.fgraphLRUReleaseIndex(idx) < 0 {
		return out()
	}
	m.st(SiteUnregister, AddrArray+Addr(idx), HandleStub)
	if m.cfg.Variant == Seed {
		if n := wordInt(m.ld(SiteUnregister, AddrArrayCnt)); idx+1 == n {
			i := idx
			for ; i >= 0; i-- {
				if m.ld(SiteUnregister, AddrArray+Addr(i)) != HandleStub {
					break
				}
			}
			m.st(SiteUnregister, AddrArrayCnt, intWord(i+1))
		}
	}
	m.st(SiteUnregister, AddrActive, intWord(wordInt(m.ld(SiteUnregister, AddrActive))-1))
	return true
}

// UnregisterFinish runs the rest: ftrace_shutdown_subops() (after which no
// CPU is inside the user's callbacks) and the direct-mode switch.
func (m *Machine) unregisterFinish(o *Ops) {
	if o == nil || !o.reg {
		return
	}
	o.reg = false
	m.st(SiteUnregisterFinish, m.opsAddr(o.k, OpsReady), 0)
	switch wordInt(m.ld(SiteUnregisterFinish, AddrActive)) {
	case 1:
		m.ftraceGraphEnableDirect(true, HandleNull)
	case 0:
		m.ftraceGraphDisableDirect(false)
	}
}

// UnregisterFtraceGraph is unregister_ftrace_graph() in one step.
func (m *Machine) UnregisterFtraceGraph(o *Ops) {
	if m.UnregisterBegin(o) {
		m.UnregisterFinish(o)
	}
}

// Registered reports whether o is between register and unregister.
func (o *Ops) Registered() bool { return o.reg }
