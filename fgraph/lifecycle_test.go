package fgraph

import (
	"fmt"
	"testing"
)

// TestRejectedCall: when no user accepts, function_graph_enter undoes the
// push (OUT_RET: curr -= F + 1; OUT: depth--) and the arch leaves the
// return address in place. The pushed words are not cleared (the kernel
// never erases the stack), only curr_ret_stack moves back.
func TestRejectedCall(t *testing.T) {
	type user struct {
		filter, accept []int
		data           int
	}
	cases := []struct {
		name    string
		reason  string
		variant Variant
		users   []user
		outer   bool   // first call fn 9 which everybody accepts
		warn    string // expected warning ("" none)
	}{
		{"latest loop, all reject", "two users: loop path; both entryfuncs return 0", Latest,
			[]user{{accept: []int{9}}, {accept: []int{9}}}, false, ""},
		{"latest direct, the user rejects", "one user: direct path restores curr, bitmap 0", Latest,
			[]user{{accept: []int{9}}}, false, ""},
		{"latest filter and accept", "user 1's filter excludes fn 1, user 0 rejects it", Latest,
			[]user{{accept: []int{9}}, {filter: []int{9}}}, false, ""},
		{"latest nested", "inside an accepted frame: curr returns to the outer frame's top", Latest,
			[]user{{accept: []int{9}}, {accept: []int{9}, data: 16}}, true, ""},
		{"latest failed reservation", "the data user's reservation fails (> 256 bytes): it rejects", Latest,
			[]user{{data: 300}}, false, "FGRAPH_MAX_DATA_SIZE"},
		{"v6.11 loop", "same OUT_RET with F = 4", V611,
			[]user{{accept: []int{9}}, {accept: []int{9}}}, true, ""},
		{"seed loop", "the seed loop without restore, nothing reserved", Seed,
			[]user{{accept: []int{9}}, {accept: []int{9}}}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(DefaultConfig(c.variant))
			F := m.cfg.FrameWords
			for i, u := range c.users {
				o := m.AddOps(&Ops{Name: fmt.Sprintf("u%d", i), Filter: u.filter, Accept: u.accept, DataBytes: u.data})
				mustRegister(t, m, o, i)
			}
			if c.outer && !m.Call(9, false) {
				t.Fatalf("outer call not traced")
			}
			c0, d0 := curr(m, 0), depth(m, 0)
			logLen := len(m.Log)
			if m.Call(1, false) {
				t.Fatalf("rejected call hijacked (%s)", c.reason)
			}
			if curr(m, 0) != c0 || depth(m, 0) != d0 || overrun(m, 0) != 0 {
				t.Fatalf("after rejection curr %d depth %d overrun %d, want %d %d 0 (%s)",
					curr(m, 0), depth(m, 0), overrun(m, 0), c0, d0, c.reason)
			}
			// The entry callbacks ran and said no.
			for _, r := range m.Log[logLen:] {
				if r.Kind != RecEntry || r.Accepted {
					t.Fatalf("record %+v after a rejected call", r)
				}
			}
			// The words stay: the RESERVED word of the discarded frame.
			if w := stackWord(m, 0, c0+F); w != MakeReserved(F) || stackWord(m, 0, c0+FieldFunc) != FuncAddr(1) {
				t.Errorf("discarded frame words %#x %#x", w, stackWord(m, 0, c0+FieldFunc))
			}
			s := m.SlotAt(0, m.SlotCount(0)-1)
			if s.Val != s.Orig {
				t.Fatalf("slot hijacked")
			}
			logLen = len(m.Log)
			if got, want := m.Return(); got != want || len(m.Log) != logLen {
				t.Fatalf("return %#x want %#x, %d callbacks", got, want, len(m.Log)-logLen)
			}
			// The next call pushes at the same place.
			if c.users[0].data < FgraphMaxDataSize {
				m.Call(9, false)
				if f, ok := m.FtraceGraphGetRetStack(0, 0); !ok || f.Start != c0 {
					t.Errorf("next frame at %d %v, want %d", f.Start, ok, c0)
				}
			}
			if c.warn == "" && len(m.Warnings) != 0 || c.warn != "" && !hasWarning(m, c.warn) {
				t.Errorf("warnings %v, want %q", m.Warnings, c.warn)
			}
		})
	}
}

// TestTaskLifecycle: stacks are handed to every live task (the idle task
// included, F7) when the first user registers, to forked tasks while
// active, dropped at exit, and never freed when tracing stops. A new user's
// task variable is zeroed in every stack (init_task_vars).
func TestTaskLifecycle(t *testing.T) {
	cases := []struct {
		name    string
		reason  string
		cfg     Config
		idleHas bool
	}{
		{"latest", "Dec 2024 fix: idle stacks initialised at start", DefaultConfig(Latest), true},
		{"v6.11", "start_graph_tracing covered the idle tasks", DefaultConfig(V611), true},
		{"F7 mutant", "the idle task is left without a stack", withMutant(DefaultConfig(Latest), MF7), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Tasks = 3 // task 2 is the idle task
			m := MustMachine(cfg)
			a := m.AddOps(&Ops{Name: "a"})
			b := m.AddOps(&Ops{Name: "b"})
			for task := 0; task < 3; task++ {
				if m.Snapshot(task).HasStack {
					t.Fatalf("task %d has a stack before tracing", task)
				}
			}
			if m.Call(1, false) {
				t.Fatalf("call traced with no user")
			}
			m.Return()
			mustRegister(t, m, a, 0)
			for task := 0; task < 3; task++ {
				im := m.Snapshot(task)
				want := task != 2 || c.idleHas
				if im.HasStack != want || (want && (im.Curr != 0 || im.Depth != -1)) {
					t.Fatalf("task %d: stack %v curr %d depth %d, want stack %v (%s)", task, im.HasStack, im.Curr, im.Depth, want, c.reason)
				}
			}
			m.Current = 2
			if got := m.Call(1, false); got != c.idleHas {
				t.Fatalf("idle task call traced %v, want %v (%s)", got, c.idleHas, c.reason)
			}
			m.Return()
			m.Current = 0

			// init_task_vars: a second user at index 1 zeroes var 1 only.
			vb := m.cfg.TaskVarBase()
			for task := 0; task < 2; task++ {
				m.Mem[m.WordAddr(task, vb+1)] = 0xdead
				m.Mem[m.WordAddr(task, vb+2)] = 0xbeef
			}
			mustRegister(t, m, b, 1)
			for task := 0; task < 2; task++ {
				if v1, v2 := stackWord(m, task, vb+1), stackWord(m, task, vb+2); v1 != 0 || v2 != 0xbeef {
					t.Errorf("task %d vars 1,2 = %#x %#x, want 0 0xbeef", task, v1, v2)
				}
			}

			// Exit and fork of task 1 while active.
			m.FtraceGraphExitTask(1)
			if m.Snapshot(1).HasStack || m.Alive(1) {
				t.Fatalf("exited task keeps its stack")
			}
			m.FtraceGraphInitTask(1)
			if im := m.Snapshot(1); !im.HasStack || im.Curr != 0 || im.Depth != -1 || !m.Alive(1) {
				t.Fatalf("forked task: %+v", im)
			}
			if stackWord(m, 1, vb+2) != 0 {
				t.Errorf("forked task's task vars not zeroed")
			}

			// Tracing stops: stacks stay.
			m.UnregisterFtraceGraph(a)
			m.UnregisterFtraceGraph(b)
			if !m.Snapshot(0).HasStack || m.Mem[AddrActive] != 0 {
				t.Errorf("stack freed when tracing stopped")
			}
			// A fork while inactive gets no stack.
			m.FtraceGraphExitTask(1)
			m.FtraceGraphInitTask(1)
			if m.Snapshot(1).HasStack {
				t.Errorf("fork while inactive got a stack")
			}
			if len(m.Warnings) != 0 {
				t.Errorf("warnings %v", m.Warnings)
			}
		})
	}
}

// TestRecursionLock: an entry callback that calls a traced function.
// ftrace_test_recursion_trylock() (trace_recursion.h) takes the context's
// bit, and when that is held TRACE_CTX_TRANSITION: the first nested call in
// the same context is traced (the user sees its entryfunc re-entered once),
// the second is refused. v6.14+ takes the lock inside
// function_graph_enter_regs (d576aec24df9); before, the arch caller held it
// (x86 prepare_ftrace_return): the same rule. The F14 mutant drops the
// lock: the callback re-enters until the shadow stack is full.
func TestRecursionLock(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		cfg    Config
		nested int // nested entries of f5; -1: more than one
	}{
		{"latest", "lock in function_graph_enter_regs: one transition", DefaultConfig(Latest), 1},
		{"v6.11", "the x86 caller holds the lock: one transition", DefaultConfig(V611), 1},
		{"seed", "the x86 caller holds the lock: one transition", DefaultConfig(Seed), 1},
		{"F14 mutant", "no lock: the callback re-enters until the stack is full", withMutant(DefaultConfig(Latest), MF14), -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg)
			u := m.AddOps(&Ops{Name: "u", CallInEntry: 5})
			mustRegister(t, m, u, 0)
			if !m.Call(1, false) {
				t.Fatalf("outer call not traced")
			}
			var nested []Record
			for _, r := range records(m.Log, RecEntry, -2) {
				if r.Func == FuncAddr(5) {
					nested = append(nested, r)
				}
			}
			if c.nested >= 0 && len(nested) != c.nested || c.nested < 0 && len(nested) < 2 {
				t.Fatalf("%d nested entry records %+v, want %d (%s)", len(nested), nested, c.nested, c.reason)
			}
			// Records are logged when a callback ends: the outermost
			// nested call's comes last.
			first := nested[len(nested)-1]
			if !first.Reentered || first.Nest != 1 {
				t.Errorf("nested entry %+v not flagged as re-entered at nesting 1", first)
			}
			if tr := first.Transition; tr != (c.nested == 1) {
				t.Errorf("nested entry ran with TRACE_CTX_TRANSITION held = %v (%s)", tr, c.reason)
			}
			if m.SlotCount(0) != 1 || curr(m, 0) != c.cfg.FrameWords+1 || depth(m, 0) != 0 {
				t.Fatalf("after the outer call: %d slots curr %d depth %d", m.SlotCount(0), curr(m, 0), depth(m, 0))
			}
			if got, want := m.Return(); got != want {
				t.Fatalf("returned to %#x, want %#x", got, want)
			}
			if m.Mem[m.TaskBase(0)+TaskRecursion] != 0 {
				t.Errorf("recursion bits %#x left held", m.Mem[m.TaskBase(0)+TaskRecursion])
			}
			if c.nested >= 0 && len(m.Warnings) != 0 {
				t.Errorf("warnings %v", m.Warnings)
			}
		})
	}
}

// TestRecursionContextBits: trace_get_context_bit() maps the harness's
// levels to TRACE_CTX_NORMAL (task), TRACE_CTX_IRQ and TRACE_CTX_NMI, so an
// interrupt takes its own bit even while the task holds its bit and
// TRACE_CTX_TRANSITION; a second holder of both in one context is refused.
func TestRecursionContextBits(t *testing.T) {
	for lvl, want := range []int{traceCtxNormal, traceCtxIRQ, traceCtxNMI, traceCtxNMI} {
		if got := traceGetContextBit(lvl); got != want {
			t.Errorf("level %d: context bit %d, want %d", lvl, got, want)
		}
	}
	m := MustMachine(DefaultConfig(Latest))
	m.Mem[m.TaskBase(0)+TaskRecursion] = 1<<traceCtxNormal | 1<<traceCtxTransition
	if b := m.ftraceTestRecursionTrylock(); b != -1 {
		t.Errorf("task level with NORMAL and TRANSITION held: got bit %d, want -1", b)
	}
	if !m.RecursionRefuses(0, 0) || m.RecursionRefuses(0, 1) {
		t.Errorf("RecursionRefuses disagrees with the trylock")
	}
	m.Level = 1
	if b := m.ftraceTestRecursionTrylock(); b != traceCtxIRQ {
		t.Errorf("IRQ level: got bit %d, want TRACE_CTX_IRQ %d", b, traceCtxIRQ)
	}
	m.Level = 2
	if b := m.ftraceTestRecursionTrylock(); b != traceCtxNMI {
		t.Errorf("NMI level: got bit %d, want TRACE_CTX_NMI %d", b, traceCtxNMI)
	}
	m.ftraceTestRecursionUnlock(traceCtxNMI)
	m.ftraceTestRecursionUnlock(traceCtxIRQ)
	if got := m.Mem[m.TaskBase(0)+TaskRecursion]; got != 1<<traceCtxNormal|1<<traceCtxTransition {
		t.Errorf("unlock left %#x", got)
	}
}

// TestReturnRecursionLock: a retfunc that calls a traced function.
// 0db0934e7f9b (Sep 2025, latest only) takes the recursion lock in
// __ftrace_return_to_handler: the retfunc's call is traced once (on
// TRANSITION), and the retfunc of that call, calling again, is refused, so
// the loop ends at once. Without it (v6.11, the seed, the 6.12.117 tree)
// every return's retfunc traces a new call, each nested inside the last
// return handler, until the shadow stack is full and the push is refused.
func TestReturnRecursionLock(t *testing.T) {
	for _, v := range Variants() {
		t.Run(v.String(), func(t *testing.T) {
			m := MustMachine(DefaultConfig(v))
			u := m.AddOps(&Ops{Name: "u", CallInReturn: 5})
			mustRegister(t, m, u, 0)
			if !m.Call(1, false) {
				t.Fatalf("outer call not traced")
			}
			if got, want := m.Return(); got != want {
				t.Fatalf("returned to %#x, want %#x", got, want)
			}
			n := 0
			for _, r := range records(m.Log, RecReturn, -2) {
				if r.Func == FuncAddr(5) {
					n++
				}
			}
			ov := wordInt(m.Mem[m.TaskBase(0)+TaskOverrun])
			if v == Latest {
				if n != 1 || ov != 0 {
					t.Errorf("latest: %d retfuncs for f5, overrun %d; want 1 and 0 (the return handler holds the lock)", n, ov)
				}
			} else if n < 10 || ov == 0 {
				t.Errorf("%s: %d retfuncs for f5, overrun %d; want the loop to run until a push is refused", v, n, ov)
			}
			if curr(m, 0) != 0 || depth(m, 0) != -1 || m.Mem[m.TaskBase(0)+TaskRecursion] != 0 {
				t.Errorf("after the return: curr %d depth %d recursion %#x", curr(m, 0), depth(m, 0), m.Mem[m.TaskBase(0)+TaskRecursion])
			}
		})
	}
}

// TestRegisterPublishAfterStartup (F4): register_ftrace_graph publishes
// fgraph_array[i] only after ftrace_startup_subops; a call between the two
// halves sees the stub. The F4 mutant publishes at allocation: the entry
// loop runs ftrace_ops_test on an ops whose hash is not set up yet.
func TestRegisterPublishAfterStartup(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		cfg    Config
		crash  bool
	}{
		{"latest", "publish after startup", DefaultConfig(Latest), false},
		{"v6.11", "the fix went into the v6.11-rc cycle", DefaultConfig(V611), false},
		{"F4 mutant", "published before startup: NULL func_hash", withMutant(DefaultConfig(Latest), MF4), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg)
			a := m.AddOps(&Ops{Name: "a", Filter: []int{1}})
			b := m.AddOps(&Ops{Name: "b", Filter: []int{2}})
			mustRegister(t, m, a, 0)
			if i := m.RegisterBegin(b); i != 1 {
				t.Fatalf("RegisterBegin = %d", i)
			}
			wantSlot := HandleStub
			if c.crash {
				wantSlot = OpsHandle(b.Index())
			}
			if got := m.Mem[AddrArray+1]; got != wantSlot {
				t.Fatalf("fgraph_array[1] = %d between the halves, want %d (%s)", got, wantSlot, c.reason)
			}
			m.Current = 1
			m.Call(1, false)
			m.Return()
			if hasWarning(m, CrashPrefix) != c.crash {
				t.Fatalf("crash %v, want %v: %v (%s)", !c.crash, c.crash, m.Warnings, c.reason)
			}
			m.RegisterFinish(b)
			if m.Mem[AddrArray+1] != OpsHandle(b.Index()) {
				t.Fatalf("not published after RegisterFinish")
			}
		})
	}
}

// TestArrayLoadKinds: how the two loops load fgraph_array[i] — READ_ONCE
// (63a8dfb88911 for entry, d65474033740 for return) or a plain load the
// compiler may repeat at the use (a Reread). A torn second read that
// yields the stub crashes in ftrace_ops_test on entry (F2) and calls the
// stub's retfunc on return (F3).
func TestArrayLoadKinds(t *testing.T) {
	cases := []struct {
		name             string
		reason           string
		cfg              Config
		entryK, retK     Kind
		entryRR, retRR   bool
		tornEntryCrashes bool
	}{
		{"latest", "READ_ONCE in both loops", DefaultConfig(Latest), Once, Once, false, false, false},
		{"v6.11", "entry fixed before the merge; return loop plain until v6.13 (F3)", DefaultConfig(V611), Once, Plain, false, true, false},
		{"seed", "plain loads in both loops", DefaultConfig(Seed), Plain, Plain, true, true, false},
		{"F2 mutant", "plain entry load, re-read at use", withMutant(DefaultConfig(Latest), MF2), Plain, Once, true, false, true},
		{"F3 mutant", "plain return load, re-read at use", withMutant(DefaultConfig(Latest), MF3), Once, Plain, false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg)
			mustRegister(t, m, m.AddOps(&Ops{Name: "a"}), 0)
			mustRegister(t, m, m.AddOps(&Ops{Name: "b"}), 1)
			h := attachRec(m)
			m.Call(1, false)
			m.Return()
			if h.kinds[SiteEnterArray] != c.entryK || h.kinds[SiteRetArray] != c.retK {
				t.Errorf("entry load %v, return load %v; want %v %v (%s)", h.kinds[SiteEnterArray], h.kinds[SiteRetArray], c.entryK, c.retK, c.reason)
			}
			if (h.rereads[SiteEnterArrayUse] > 0) != c.entryRR || (h.rereads[SiteRetArrayUse] > 0) != c.retRR {
				t.Errorf("rereads %v, want entry %v return %v (%s)", h.rereads, c.entryRR, c.retRR, c.reason)
			}

			// Torn reads: the second load sees the stub.
			h.rereadTo[SiteEnterArrayUse] = HandleStub
			h.rereadTo[SiteRetArrayUse] = HandleStub
			logLen := len(m.Log)
			m.Call(1, false)
			m.Return()
			if hasWarning(m, CrashPrefix) != c.tornEntryCrashes {
				t.Errorf("torn entry crash %v, want %v: %v", !c.tornEntryCrashes, c.tornEntryCrashes, m.Warnings)
			}
			torn := 0
			for _, r := range m.Log[logLen:] {
				if r.Torn && r.Ops == -1 {
					torn++
				}
			}
			// A torn entry read under the filter test crashes before any
			// callback; without a filter test (seed) the stub is called.
			if wantTorn := c.retRR || c.entryRR && !c.tornEntryCrashes; (torn > 0) != wantTorn {
				t.Errorf("%d torn stub callbacks, want some=%v (%s)", torn, wantTorn, c.reason)
			}
		})
	}
}
