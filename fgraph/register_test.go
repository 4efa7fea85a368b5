package fgraph

import (
	"fmt"
	"testing"
)

// lruStep is one operation on the LRU allocator: alloc (want is the index
// handed out, -1 for none) or release of idx (want is the return value).
type lruStep struct {
	alloc bool
	idx   int
	want  int
}

func alloc(want int) lruStep        { return lruStep{alloc: true, want: want} }
func release(idx, want int) lruStep { return lruStep{idx: idx, want: want} }

func allocRange(from, to int) []lruStep {
	var s []lruStep
	for i := from; i <= to; i++ {
		s = append(s, alloc(i))
	}
	return s
}

func steps(parts ...any) []lruStep {
	var out []lruStep
	for _, p := range parts {
		switch p := p.(type) {
		case lruStep:
			out = append(out, p)
		case []lruStep:
			out = append(out, p...)
		}
	}
	return out
}

// TestLRUIndexOrder: fgraph_lru_alloc_index/fgraph_lru_release_index form a
// FIFO: a released index is handed out again only after every other free
// one (6d4786592ac8).
func TestLRUIndexOrder(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		steps  []lruStep
		warns  int
		mask   Word // fgraph_array_bitmask at the end
	}{
		{"fresh", "init fills the table with 0..15: in order, then none",
			steps(allocRange(0, 15), alloc(-1)), 0, 0xffff},
		{"release goes to the back", "5 freed after 0..2 are taken: 3..15 come first, 5 last",
			steps(allocRange(0, 5), release(5, 0), allocRange(6, 15), alloc(5), alloc(-1)), 0, 0xffff},
		{"FIFO of releases", "released 2 then 1: handed out 2 before 1, both after the never-used ones",
			steps(allocRange(0, 3), release(2, 0), release(1, 0), allocRange(4, 15), alloc(2), alloc(1), alloc(-1)), 0, 0xffff},
		{"release immediately reusable only when alone", "everything else is taken: the released index is the only free one",
			steps(allocRange(0, 15), release(7, 0), alloc(7)), 0, 0xffff},
		{"bitmask follows", "alloc sets the bit, release clears it",
			steps(allocRange(0, 2), release(1, 0)), 0, 0b101},
		{"release into a full table", "nothing allocated: table[last] != -1 -> WARN_ON_ONCE, -1",
			steps(release(3, -1)), 1, 0},
		{"release out of range", "idx < 0 or >= 16 -> -1 with a warning, table untouched",
			steps(alloc(0), release(-1, -1), release(16, -1), alloc(1)), 2, 0b11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(DefaultConfig(Latest))
			m.fgraphLRUInit()
			for i, s := range c.steps {
				var got int
				if s.alloc {
					got = m.fgraphLRUAllocIndex()
				} else {
					got = m.fgraphLRUReleaseIndex(s.idx)
				}
				if got != s.want {
					t.Fatalf("step %d (%+v): got %d, want %d (%s)", i, s, got, s.want, c.reason)
				}
			}
			if len(m.Warnings) != c.warns {
				t.Errorf("%d warnings %v, want %d (%s)", len(m.Warnings), m.Warnings, c.warns, c.reason)
			}
			if m.Mem[AddrBitmask] != c.mask {
				t.Errorf("bitmask %#b, want %#b (%s)", m.Mem[AddrBitmask], c.mask, c.reason)
			}
		})
	}
}

// TestLRUThroughRegister: the same order seen through register/unregister.
func TestLRUThroughRegister(t *testing.T) {
	cases := []struct {
		name    string
		reason  string
		cfg     func() Config
		holders int   // users registered first and kept
		want    []int // indices the cycling user gets, one per cycle
	}{
		{"cycle alone", "each unregister puts the index at the back: 0..15 then 0 again",
			func() Config { return DefaultConfig(Latest) }, 0, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1}},
		{"cycle with a holder", "index 0 stays taken: 1..15 then 1",
			func() Config { return DefaultConfig(Latest) }, 1, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1}},
		{"v6.11 has the LRU too", "the LRU went in with the series",
			func() Config { return DefaultConfig(V611) }, 0, []int{0, 1, 2, 3}},
		{"seed: lowest free", "[PATCH 04/20] took the lowest free slot: the index is reused at once (F6)",
			func() Config { return DefaultConfig(Seed) }, 1, []int{1, 1, 1}},
		{"F6 mutant: lowest free", "the mutant replaces the LRU by the lowest free index",
			func() Config { c := DefaultConfig(Latest); c.Mutants = c.Mutants.With(MF6); return c }, 0, []int{0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg())
			for i := 0; i < c.holders; i++ {
				mustRegister(t, m, m.AddOps(&Ops{Name: fmt.Sprintf("holder%d", i)}), i)
			}
			u := m.AddOps(&Ops{Name: "cycler"})
			for i, want := range c.want {
				if got := m.RegisterFtraceGraph(u); got != want {
					t.Fatalf("cycle %d: index %d, want %d (%s)", i, got, want, c.reason)
				}
				m.UnregisterFtraceGraph(u)
			}
			if len(m.Warnings) != 0 {
				t.Fatalf("warnings %v", m.Warnings)
			}
		})
	}
}

// TestUnregisterStubReplacement: unregister stores &fgraph_stub (handle 1)
// in fgraph_array[idx] and clears the bitmask bit; a frame left on a
// sleeping task keeps the bit, and on return the slot's retfunc is skipped.
func TestUnregisterStubReplacement(t *testing.T) {
	type tc struct {
		name      string
		reason    string
		cfg       Config
		users     int  // users registered (user k gets index k)
		victim    int  // user unregistered while task 0 sleeps
		reReg     bool // register a fresh user after the unregister
		reRegIdx  int  // index it must get
		reRegCall bool // whether the fresh user's retfunc runs for the old frame
	}
	f6 := DefaultConfig(Latest)
	f6.Mutants = f6.Mutants.With(MF6)
	cases := []tc{
		{name: "latest two users", reason: "active drops to 1: direct mode on the survivor, whose bit alone is tested",
			cfg: DefaultConfig(Latest), users: 2, victim: 1},
		{name: "latest victim at idx 0", reason: "bit 0 set in the frame; the slot is the stub: skipped even in direct mode",
			cfg: DefaultConfig(Latest), users: 2, victim: 0},
		{name: "latest three users", reason: "active stays 2: the loop reads READ_ONCE(fgraph_array[i]) == stub and skips",
			cfg: DefaultConfig(Latest), users: 3, victim: 1},
		{name: "v6.11 two users", reason: "F9: the key is off after the drop to one, so the loop runs and skips the stub",
			cfg: DefaultConfig(V611), users: 2, victim: 1},
		{name: "seed", reason: "seed unregister also stores the stub; the 16-bit return loop skips it",
			cfg: DefaultConfig(Seed), users: 3, victim: 1},
		{name: "latest re-register", reason: "the LRU hands the newcomer index 3, not the stale 1: still skipped",
			cfg: DefaultConfig(Latest), users: 3, victim: 1, reReg: true, reRegIdx: 3},
		{name: "F6 re-register", reason: "lowest-free reuse gives the newcomer index 1: it gets the old frame's return (F6 defect)",
			cfg: f6, users: 3, victim: 1, reReg: true, reRegIdx: 1, reRegCall: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg)
			var us []*Ops
			for i := 0; i < c.users; i++ {
				us = append(us, m.AddOps(&Ops{Name: fmt.Sprintf("u%d", i)}))
				mustRegister(t, m, us[i], i)
			}
			if !m.Call(1, false) {
				t.Fatalf("call not traced")
			}
			// Task 0 sleeps inside fn 1; task 1 runs; the victim leaves.
			m.Current = 1
			m.UnregisterFtraceGraph(us[c.victim])
			if got := m.Mem[AddrArray+Addr(c.victim)]; HandleStub != 1 || got != HandleStub {
				t.Fatalf("fgraph_array[%d] = %d, want the stub handle 1", c.victim, got)
			}
			if m.Mem[AddrBitmask]&(1<<c.victim) != 0 {
				t.Fatalf("bitmask bit %d still set", c.victim)
			}
			var fresh *Ops
			if c.reReg {
				fresh = m.AddOps(&Ops{Name: "fresh"})
				mustRegister(t, m, fresh, c.reRegIdx)
			}
			m.Current = 0
			logLen := len(m.Log)
			if got, want := m.Return(); got != want {
				t.Fatalf("returned to %#x, want %#x", got, want)
			}
			rets := m.Log[logLen:]
			for _, r := range rets {
				if r.Kind != RecReturn {
					t.Fatalf("non-return record %+v", r)
				}
			}
			if n := len(records(rets, RecReturn, us[c.victim].Index())); n != 0 {
				t.Errorf("victim's retfunc ran %d times after unregister (%s)", n, c.reason)
			}
			for i, u := range us {
				if i == c.victim {
					continue
				}
				if n := len(records(rets, RecReturn, u.Index())); n != 1 {
					t.Errorf("survivor %s: %d retfuncs, want 1 (%s)", u.Name, n, c.reason)
				}
			}
			if fresh != nil {
				n := len(records(rets, RecReturn, fresh.Index()))
				if (n > 0) != c.reRegCall {
					t.Errorf("newcomer's retfunc ran %d times, want called=%v (%s)", n, c.reRegCall, c.reason)
				}
			}
			if len(m.Warnings) != 0 {
				t.Errorf("warnings %v", m.Warnings)
			}
		})
	}
}

// directState is the direct-mode globals: the static key, both static
// calls and fgraph_direct_gops, as handles.
type directState struct {
	key, fn, ret, gops Word
}

func readDirect(m *Machine) directState {
	return directState{m.Mem[AddrDoDirect], m.Mem[AddrFunc], m.Mem[AddrRetfunc], m.Mem[AddrDirectGops]}
}

// TestDirectModeSwitching: ftrace_graph_active 1 -> key on and static calls
// to that user; 2 -> key off, stubs; back to 1 -> Latest turns the key on
// again, V611 leaves it off (F9, asserted as the kernel's behaviour there).
func TestDirectModeSwitching(t *testing.T) {
	a, b, c := OpsHandle(0), OpsHandle(1), OpsHandle(2)
	stub := HandleStub
	type step struct {
		op   string // "+k" register ops k, "-k" unregister ops k
		want directState
	}
	efa := DefaultConfig(Latest)
	efa.EntryForAll = true
	efa10 := efa
	efa10.Mutants = efa10.Mutants.With(MF10)
	f9 := DefaultConfig(Latest)
	f9.Mutants = f9.Mutants.With(MF9)
	cases := []struct {
		name   string
		reason string
		cfg    Config
		steps  []step
		// direct: whether a call after the last step goes through the
		// static call (no filter test) rather than the loop.
		direct bool
	}{
		{"latest", "53b2fae90ff0: the drop to one restores direct mode", DefaultConfig(Latest), []step{
			{"+0", directState{1, a, a, a}},
			{"+1", directState{0, stub, stub, stub}},
			{"-1", directState{1, a, a, a}},
		}, true},
		{"latest drop keeps the survivor", "enable_direct(true, NULL) takes the last set bit: user 1 survives", DefaultConfig(Latest), []step{
			{"+0", directState{1, a, a, a}},
			{"+1", directState{0, stub, stub, stub}},
			{"-0", directState{1, b, b, b}},
		}, true},
		{"latest to zero and back", "to zero: stubs, key untouched; a new first user: key untouched (already on)", DefaultConfig(Latest), []step{
			{"+0", directState{1, a, a, a}},
			{"-0", directState{1, stub, stub, stub}},
			{"+2", directState{1, c, c, c}},
		}, true},
		{"v6.11 F9", "enable_direct(true) turned the key off until Feb 2026 (kernel behaviour)", DefaultConfig(V611), []step{
			{"+0", directState{1, a, a, a}},
			{"+1", directState{0, stub, stub, stub}},
			{"-1", directState{0, a, a, a}},
		}, false},
		{"v6.11 F9 for the rest of the boot", "a later first registration never touches the key", DefaultConfig(V611), []step{
			{"+0", directState{1, a, a, a}},
			{"+1", directState{0, stub, stub, stub}},
			{"-1", directState{0, a, a, a}},
			{"-0", directState{0, stub, stub, stub}},
			{"+2", directState{0, c, c, c}},
		}, false},
		{"F9 mutant on latest", "the mutant flips the key write back", f9, []step{
			{"+0", directState{1, a, a, a}},
			{"+1", directState{0, stub, stub, stub}},
			{"-1", directState{0, a, a, a}},
		}, false},
		{"latest entry-for-all", "FGRAPH_NO_DIRECT (f4ff9f646a4d): key defaults off, enable/disable are no-ops", efa, []step{
			{"+0", directState{0, stub, stub, stub}},
			{"+1", directState{0, stub, stub, stub}},
			{"-1", directState{0, stub, stub, stub}},
		}, false},
		{"F10 mutant", "direct mode kept on an entry-for-all arch", efa10, []step{
			{"+0", directState{1, a, a, a}},
			{"+1", directState{0, stub, stub, stub}},
			{"-1", directState{1, a, a, a}},
		}, true},
		{"seed", "no static calls in the seed: nothing switches", DefaultConfig(Seed), []step{
			{"+0", directState{1, stub, stub, stub}},
			{"+1", directState{1, stub, stub, stub}},
			{"-1", directState{1, stub, stub, stub}},
		}, false},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			m := MustMachine(cs.cfg)
			for k := 0; k < 3; k++ {
				m.AddOps(&Ops{Name: fmt.Sprintf("u%d", k), Filter: []int{1}})
			}
			for i, s := range cs.steps {
				k := int(s.op[1] - '0')
				if s.op[0] == '+' {
					if m.RegisterFtraceGraph(m.Ops()[k]) < 0 {
						t.Fatalf("step %d: register failed", i)
					}
				} else {
					m.UnregisterFtraceGraph(m.Ops()[k])
				}
				if got := readDirect(m); got != s.want {
					t.Fatalf("step %d (%s): key/func/retfunc/gops = %v, want %v (%s)", i, s.op, got, s.want, cs.reason)
				}
			}
			h := attachRec(m)
			traced := m.Call(1, false)
			if !traced {
				t.Fatalf("call of a filtered function not traced (%s)", cs.reason)
			}
			viaDirect := h.sites[SiteEnterDirectCall] > 0
			viaLoop := h.sites[SiteEnterBitmask] > 0 || h.sites[SiteEnterArrayCnt] > 0
			if viaDirect != cs.direct || viaLoop == cs.direct {
				t.Errorf("entry via direct %v / loop %v, want direct %v (%s)", viaDirect, viaLoop, cs.direct, cs.reason)
			}
			if got, want := m.Return(); got != want {
				t.Fatalf("returned to %#x, want %#x", got, want)
			}
			if len(m.Warnings) != 0 {
				t.Fatalf("warnings %v", m.Warnings)
			}
		})
	}
}

// TestEntryForAllFilter: on an entry-for-all arch the graph entry fires for
// every traced function, so the per-user filter must be tested: the latest
// kernel (FGRAPH_NO_DIRECT) calls only for the filtered function; the F10
// mutant (direct mode kept) calls the single user for everything.
func TestEntryForAllFilter(t *testing.T) {
	cases := []struct {
		name    string
		reason  string
		mutants MutantSet
		want    []bool // traced for fn 1 (in filter) and fn 2 (not)
	}{
		{"latest", "f4ff9f646a4d: the loop tests the filter", 0, []bool{true, false}},
		{"F10", "direct call skips the filter", MutantSet(0).With(MF10), []bool{true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig(Latest)
			cfg.EntryForAll = true
			cfg.Mutants = c.mutants
			m := MustMachine(cfg)
			u := m.AddOps(&Ops{Name: "u", Filter: []int{1}})
			// Another (function-tracer-like) user makes the arch call the
			// graph entry for everything; it is never registered with fgraph.
			mustRegister(t, m, u, 0)
			for i, fn := range []int{1, 2} {
				if got := m.Call(fn, false); got != c.want[i] {
					t.Errorf("Call(%d) traced %v, want %v (%s)", fn, got, c.want[i], c.reason)
				}
				m.Return()
			}
		})
	}
}

// TestRegisterTwice: the 2025 kernel tracks a registration in
// FTRACE_OPS_FL_GRAPH: registering an fgraph_ops twice WARNs and returns
// -EBUSY without touching the index table, and the ops stays registered at
// its first index (Jul 2025, 20250723195221.999900536@kernel.org). v6.11 and
// the seed have no such test; the port refuses the second register there
// without a WARN (docs/fidelity.md).
func TestRegisterTwice(t *testing.T) {
	for _, v := range Variants() {
		t.Run(v.String(), func(t *testing.T) {
			m := MustMachine(DefaultConfig(v))
			u := m.AddOps(&Ops{Name: "u"})
			mustRegister(t, m, u, 0)
			got := m.RegisterFtraceGraph(u)
			warned := hasWarning(m, "WARN_ONCE: function graph ops registered again")
			if v == Latest {
				if got != EBUSY || !warned {
					t.Errorf("second register: %d, WARN %v; want -EBUSY and the WARN", got, warned)
				}
			} else if got >= 0 || warned {
				t.Errorf("second register: %d, WARN %v; want a refusal without the 2025 WARN", got, warned)
			}
			if m.Mem[AddrActive] != 1 || m.Mem[AddrBitmask] != 1 || wordInt(m.Mem[m.opsAddr(u.k, OpsIdx)]) != 0 {
				t.Errorf("after the refused register: active %d bitmask %#x idx %d", m.Mem[AddrActive], m.Mem[AddrBitmask], wordInt(m.Mem[m.opsAddr(u.k, OpsIdx)]))
			}
			m.UnregisterFtraceGraph(u)
			if u.Registered() || m.Mem[AddrActive] != 0 {
				t.Errorf("unregister after the refused register left registered=%v active=%d", u.Registered(), m.Mem[AddrActive])
			}
			if i := m.RegisterFtraceGraph(u); i < 0 {
				t.Errorf("register after unregister: %d", i)
			}
		})
	}
}
