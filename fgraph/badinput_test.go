package fgraph

import (
	"strings"
	"testing"
)

// oneUser is a Latest machine with one user at index 0 (data optional).
func oneUser(t *testing.T, cfg Config, data int) (*Machine, *Ops) {
	t.Helper()
	m := MustMachine(cfg)
	u := m.AddOps(&Ops{Name: "u", DataBytes: data})
	mustRegister(t, m, u, 0)
	return m, u
}

// topFrame puts curr on a frame whose top word is RESERVED at index off,
// as during the entry callbacks.
func topFrame(m *Machine, off int) {
	F := m.cfg.FrameWords
	m.Mem[m.WordAddr(0, off)] = MakeReserved(F)
	m.Mem[m.TaskBase(0)+TaskCurr] = intWord(off + 1)
}

// TestBadInput: refusals and kernel WARNs are recorded in Machine.Warnings
// or in the return value; none is a Go panic.
func TestBadInput(t *testing.T) {
	latest := DefaultConfig(Latest)
	cases := []struct {
		name   string
		reason string
		run    func(t *testing.T, m *Machine) // m: one user u at index 0, Latest
		warn   string                         // substring of a warning ("" = none may be recorded)
	}{
		{"reserve 257 bytes", "size_bytes > FGRAPH_MAX_DATA_SIZE -> NULL before touching the stack",
			func(t *testing.T, m *Machine) {
				topFrame(m, 3)
				if p := m.fgraphReserveData(0, FgraphMaxDataSize+1); p != -1 || curr(m, 0) != 4 {
					t.Errorf("reserve 257: %d, curr %d", p, curr(m, 0))
				}
			}, "FGRAPH_MAX_DATA_SIZE"},
		{"reserve 1 MiB", "any size above 256 bytes",
			func(t *testing.T, m *Machine) {
				topFrame(m, 3)
				if p := m.fgraphReserveData(0, 1<<20); p != -1 {
					t.Errorf("reserve 1MiB: %d", p)
				}
			}, "FGRAPH_MAX_DATA_SIZE"},
		{"reserve 256 bytes (control)", "exactly the maximum is allowed: 32 words, size field 31",
			func(t *testing.T, m *Machine) {
				topFrame(m, 3)
				p := m.fgraphReserveData(0, FgraphMaxDataSize)
				if p != 4 || curr(m, 0) != 4+33 {
					t.Fatalf("reserve 256: %d, curr %d", p, curr(m, 0))
				}
				if w := stackWord(m, 0, 36); GetDataSize(w) != 32 || GetFrameOffset(w) != 36 {
					t.Errorf("DATA word %#x", w)
				}
			}, ""},
		{"reserve 0 bytes", "kernel arithmetic: 0 words, size-1 = -1 in int sign-extends over the index and size fields; the payload pointer is the DATA word itself",
			func(t *testing.T, m *Machine) {
				topFrame(m, 3)
				p := m.fgraphReserveData(2, 0)
				if p != 4 || curr(m, 0) != 5 {
					t.Fatalf("reserve 0: %d, curr %d", p, curr(m, 0))
				}
				w := stackWord(m, 0, 4)
				if GetType(w) != FgraphTypeData || GetFrameOffset(w) != 4 || GetDataSize(w) != 32 || GetDataIndex(w) != 15 {
					t.Errorf("DATA word %#x: type %d off %d size %d idx %d", w, GetType(w), GetFrameOffset(w), GetDataSize(w), GetDataIndex(w))
				}
			}, ""},
		{"reserve outside an entry callback", "curr 0: get_fgraph_entry(current, -1) is a wild read in C; recorded as a crash",
			func(t *testing.T, m *Machine) {
				if p := m.fgraphReserveData(0, 8); p != -1 {
					t.Errorf("reserve on an empty stack: %d", p)
				}
			}, CrashPrefix},
		{"reserve with no room", "new curr >= MAX_OFFSET -> NULL",
			func(t *testing.T, m *Machine) {
				topFrame(m, 489)
				if p := m.fgraphReserveData(0, 16); p != -1 || curr(m, 0) != 490 {
					t.Errorf("reserve: %d curr %d", p, curr(m, 0))
				}
			}, "no room"},
		{"get_ret_stack offset 0", "o <= 0 -> WARN_ON_ONCE, NULL",
			func(t *testing.T, m *Machine) {
				m.Call(1, false)
				m.Mem[m.WordAddr(0, 3)] = MakeBitmap(1, 0)
				var start int
				if m.getRetStack(SiteUnwindOffset, 0, curr(m, 0), &start) {
					t.Errorf("corrupted offset accepted")
				}
				if _, ok := m.FtraceGraphGetRetStack(0, 0); ok {
					t.Errorf("FtraceGraphGetRetStack on a corrupted word found a frame")
				}
			}, "WARN_ON_ONCE: get_ret_stack: bad offset 0"},
		{"get_ret_stack offset past bottom", "o > pos-1 -> WARN_ON_ONCE, NULL",
			func(t *testing.T, m *Machine) {
				m.Call(1, false)
				m.Mem[m.WordAddr(0, 3)] = MakeBitmap(1, 900)
				var start int
				if m.getRetStack(SiteUnwindOffset, 0, 4, &start) {
					t.Errorf("corrupted offset accepted")
				}
				if got := m.FtraceGraphTopRetAddr(0); got != 0 {
					t.Errorf("top_ret_addr %#x on a corrupted stack", got)
				}
				idx := 0
				if got := m.FtraceGraphRetAddr(0, &idx, ReturnToHandler, m.SlotAt(0, 0).Retp); got != ReturnToHandler {
					t.Errorf("ret_addr on a corrupted stack %#x", got)
				}
			}, "bad offset 900"},
		{"get_ret_stack pos beyond the array", "a wild curr: the read is out of the array; recorded as a crash",
			func(t *testing.T, m *Machine) {
				var start int
				if m.getRetStack(SiteUnwindOffset, 0, 10000, &start) {
					t.Errorf("pos 10000 accepted")
				}
			}, CrashPrefix},
		{"return on a corrupted offset", "pop: get_ret_stack NULL -> ftrace_graph_stop, WARN, return to panic()",
			func(t *testing.T, m *Machine) {
				m.Call(1, false)
				m.Mem[m.WordAddr(0, 3)] = MakeBitmap(1, 7)
				got, _ := m.Return()
				if got != PanicAddr {
					t.Errorf("returned to %#x, want panic()", got)
				}
				if m.Mem[AddrDead] != 1 {
					t.Errorf("graph tracing not killed")
				}
				if m.Call(1, false) {
					t.Errorf("call traced after ftrace_graph_stop")
				}
			}, "Bad function graph ret_stack pointer"},
		{"unregister never registered", "no FTRACE_OPS_FL_GRAPH -> WARN_ONCE (Jul 2025)",
			func(t *testing.T, m *Machine) {
				o := m.AddOps(&Ops{Name: "stranger"})
				m.UnregisterFtraceGraph(o)
				if m.Mem[AddrActive] != 1 || m.Ops()[0].Registered() != true {
					t.Errorf("state changed by a bogus unregister")
				}
			}, "WARN_ONCE: function graph ops unregistered without registering"},
		{"unregister twice", "the first cleared FTRACE_OPS_FL_GRAPH: the second WARNs",
			func(t *testing.T, m *Machine) {
				u := m.Ops()[0]
				m.UnregisterFtraceGraph(u)
				m.UnregisterFtraceGraph(u)
				if m.Mem[AddrActive] != 0 {
					t.Errorf("active %d", m.Mem[AddrActive])
				}
			}, "WARN_ONCE: function graph ops unregistered without registering"},
		{"unregister nil", "nil ops",
			func(t *testing.T, m *Machine) { m.UnregisterFtraceGraph(nil) }, "not registered"},
		{"register twice", "FTRACE_OPS_FL_GRAPH already set -> WARN_ONCE, -EBUSY (Jul 2025)",
			func(t *testing.T, m *Machine) {
				if got := m.RegisterFtraceGraph(m.Ops()[0]); got != EBUSY {
					t.Errorf("second register %d, want -EBUSY", got)
				}
				if m.Mem[AddrActive] != 1 || m.Mem[AddrBitmask] != 1 {
					t.Errorf("the refused register changed ftrace_graph_active %d / the bitmask %#x", m.Mem[AddrActive], m.Mem[AddrBitmask])
				}
			}, "WARN_ONCE: function graph ops registered again"},
		{"register nil", "unknown ops",
			func(t *testing.T, m *Machine) {
				if got := m.RegisterFtraceGraph(nil); got != ENOSPC {
					t.Errorf("register(nil) %d", got)
				}
			}, "unknown ops"},
		{"register a foreign ops", "an Ops never added to this machine",
			func(t *testing.T, m *Machine) {
				if got := m.RegisterFtraceGraph(&Ops{Name: "foreign"}); got != ENOSPC {
					t.Errorf("register(foreign) %d", got)
				}
			}, "unknown ops"},
		{"register with all 16 indices taken", "fgraph_lru_alloc_index() < 0 -> -ENOSPC",
			func(t *testing.T, m *Machine) {
				for m.fgraphLRUAllocIndex() >= 0 {
				}
				if got := m.RegisterFtraceGraph(m.AddOps(&Ops{Name: "late"})); got != ENOSPC {
					t.Errorf("register %d", got)
				}
			}, "-ENOSPC"},
		{"too many ops", "the machine holds MaxOps users",
			func(t *testing.T, m *Machine) {
				for i := len(m.Ops()); i < MaxOps; i++ {
					m.AddOps(&Ops{Name: "x"})
				}
				if o := m.AddOps(&Ops{Name: "one too many"}); o != nil {
					t.Errorf("AddOps beyond MaxOps returned %v", o)
				}
			}, "more than"},
		{"return with no call", "the ret instruction with no slot of this context",
			func(t *testing.T, m *Machine) {
				if got, want := m.Return(); got != 0 || want != 0 {
					t.Errorf("Return() = %#x %#x", got, want)
				}
			}, "return with no call"},
		{"return from an IRQ with only task slots", "a context returns only its own slots",
			func(t *testing.T, m *Machine) {
				m.Call(1, false)
				m.Level = 1
				m.Return()
				m.Level = 0
				if m.SlotCount(0) != 1 || curr(m, 0) != 4 {
					t.Errorf("the task's frame was popped by an IRQ return")
				}
			}, "return with no call"},
		{"call on a task with a NULL ret_stack", "push: !current->ret_stack -> -EBUSY; not an overrun",
			func(t *testing.T, m *Machine) {
				m.FtraceGraphExitTask(1)
				m.Current = 1
				if m.Call(1, false) {
					t.Errorf("call on an exited task hijacked")
				}
				if overrun(m, 1) != 0 || depth(m, 1) != -1 {
					t.Errorf("overrun %d depth %d", overrun(m, 1), depth(m, 1))
				}
				if s := m.SlotAt(1, 0); s.Val != s.Orig {
					t.Errorf("slot hijacked")
				}
				if len(m.Log) != 0 {
					t.Errorf("callbacks ran: %+v", m.Log)
				}
			}, ""},
		{"exit of an unknown task", "task number out of range",
			func(t *testing.T, m *Machine) { m.FtraceGraphExitTask(99); m.FtraceGraphExitTask(-1) }, "exit of unknown task"},
		{"set_bitmap out of range", "a wild offset is recorded, not written",
			func(t *testing.T, m *Machine) { m.setBitmap(5000, 1, 0); m.setBitmap(-1, 1, 0) }, "out of range"},
		{"retrieve on an empty stack (latest)", "fgraph_retrieve_parent_data: curr <= 0 -> NULL, silently",
			func(t *testing.T, m *Machine) {
				if d := m.RetrieveData(0); d != nil {
					t.Errorf("data %v", d)
				}
			}, ""},
		{"retrieve beyond the depth", "get_ret_stack runs out of frames -> NULL",
			func(t *testing.T, m *Machine) {
				m.Call(1, false)
				if p, _ := m.fgraphRetrieveParentData(0, 3); p != -1 {
					t.Errorf("payload %d", p)
				}
			}, ""},
		{"get_ret_stack beyond the depth", "n larger than the number of frames",
			func(t *testing.T, m *Machine) {
				m.Call(1, false)
				if _, ok := m.FtraceGraphGetRetStack(0, 5); ok {
					t.Errorf("frame 5 found")
				}
			}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, _ := oneUser(t, latest, 0)
			noPanic(t, c.name, func() { c.run(t, m) })
			if c.warn == "" {
				if len(m.Warnings) != 0 {
					t.Errorf("unexpected warnings %v (%s)", m.Warnings, c.reason)
				}
			} else if !hasWarning(m, c.warn) {
				t.Errorf("no warning containing %q; got %v (%s)", c.warn, m.Warnings, c.reason)
			}
		})
	}
}

// TestBadInputV611Retrieve: v6.11's fgraph_retrieve_data starts at
// curr_ret_stack - 1 without checking curr: on an empty stack that is
// ret_stack[-1], a wild read in C, recorded as a crash here.
func TestBadInputV611Retrieve(t *testing.T) {
	m, _ := oneUser(t, DefaultConfig(V611), 0)
	noPanic(t, "retrieve", func() {
		if d := m.RetrieveData(0); d != nil {
			t.Errorf("data %v", d)
		}
	})
	if !hasWarning(m, CrashPrefix) {
		t.Fatalf("no crash recorded: %v", m.Warnings)
	}
}

// TestBadConfigAndNames: invalid configurations and unknown names are
// errors, not panics.
func TestBadConfigAndNames(t *testing.T) {
	mod := func(f func(*Config)) Config { c := DefaultConfig(Latest); f(&c); return c }
	cases := []struct {
		name   string
		reason string
		cfg    Config
		errSub string
	}{
		{"variant", "unknown variant", mod(func(c *Config) { c.Variant = 9 }), "unknown variant"},
		{"F=5", "the frame is 3 or 4 words", mod(func(c *Config) { c.FrameWords = 5 }), "frame words"},
		{"no tasks", "at least one task", mod(func(c *Config) { c.Tasks = 0 }), "tasks"},
		{"too many tasks", "at most 8", mod(func(c *Config) { c.Tasks = 9 }), "tasks"},
		{"tiny stack", "must hold the task vars, a frame and some room", mod(func(c *Config) { c.StackWords = 20 }), "stack of"},
		{"huge stack", "offsets are 10 bits", mod(func(c *Config) { c.StackWords = 2048 }), "stack of"},
	}
	for _, c := range cases {
		var err error
		noPanic(t, c.name, func() { _, err = NewMachine(c.cfg) })
		if err == nil || !strings.Contains(err.Error(), c.errSub) {
			t.Errorf("%s: NewMachine error %v, want %q (%s)", c.name, err, c.errSub, c.reason)
		}
	}
	if _, err := NewMachine(DefaultConfig(Seed)); err != nil {
		t.Errorf("DefaultConfig(Seed) invalid: %v", err)
	}
	if _, err := ParseVariant("v5.0"); err == nil {
		t.Errorf("ParseVariant accepted v5.0")
	}
	for _, v := range Variants() {
		if got, err := ParseVariant(v.String()); err != nil || got != v {
			t.Errorf("ParseVariant(%q) = %v %v", v, got, err)
		}
	}
	if s := Variant(7).String(); s != "Variant(7)" {
		t.Errorf("Variant(7).String() = %q", s)
	}
	if _, ok := ParseSite("no.such.site"); ok {
		t.Errorf("ParseSite accepted a bogus name")
	}
	if _, ok := ParseSite("none"); ok {
		t.Errorf("ParseSite accepted SiteNone")
	}
	for _, s := range Sites() {
		if got, ok := ParseSite(s.String()); !ok || got != s {
			t.Errorf("site %v does not round-trip", s)
		}
	}
	if _, err := LookupMutant("M-nope"); err == nil {
		t.Errorf("LookupMutant accepted M-nope")
	}
	for _, mi := range Catalogue {
		if got, err := LookupMutant(mi.Name); err != nil || got.Mutant != mi.Mutant {
			t.Errorf("mutant %s does not round-trip", mi.Name)
		}
		if mi.Control && mi.Reason == "" {
			t.Errorf("control mutant %s has no reason", mi.Name)
		}
	}
	if len(Catalogue) != int(numMutants)-1 {
		t.Errorf("catalogue has %d entries, %d mutants declared", len(Catalogue), int(numMutants)-1)
	}
}
