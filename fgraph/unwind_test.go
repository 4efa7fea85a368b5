package fgraph

import (
	"strings"
	"testing"
)

func pick(cond bool, a, b Word) Word {
	if cond {
		return a
	}
	return b
}

func withMutant(c Config, mu Mutant) Config {
	c.Mutants = c.Mutants.With(mu)
	return c
}

// TestTailCallUnwinding: traced A tail-calls traced B. B's entry finds the
// slot already patched, so B's frame records ret = return_to_handler with
// A's retp (375bb57292f4). ftrace_graph_ret_addr must skip B's frame and
// return A's original address; returning runs the handler twice.
func TestTailCallUnwinding(t *testing.T) {
	cases := []struct {
		name    string
		reason  string
		cfg     Config
		wantRTH bool // the unwinder answers return_to_handler instead of A's caller
	}{
		{"latest", "the ret != return_to_handler clause skips B's frame", DefaultConfig(Latest), false},
		{"v6.11", "the clause went in with the series", DefaultConfig(V611), false},
		{"seed", "the seed's ret_addr has no tail-call clause: it stops at B's frame", DefaultConfig(Seed), true},
		{"F5-tail mutant", "dropping the clause returns return_to_handler", withMutant(DefaultConfig(Latest), MF5Tail), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg)
			u := m.AddOps(&Ops{Name: "u"})
			mustRegister(t, m, u, 0)
			F := c.cfg.FrameWords
			if !m.Call(fnA, false) {
				t.Fatalf("A not traced")
			}
			if !m.Call(fnB, true) {
				t.Fatalf("B not traced")
			}
			if m.SlotCount(0) != 1 {
				t.Fatalf("tail call pushed a slot: %d slots", m.SlotCount(0))
			}
			slot := m.SlotAt(0, 0)
			if slot.Val != ReturnToHandler {
				t.Fatalf("slot %#x, want return_to_handler", slot.Val)
			}
			b, ok1 := m.FtraceGraphGetRetStack(0, 0)
			a, ok2 := m.FtraceGraphGetRetStack(0, 1)
			if !ok1 || !ok2 {
				t.Fatalf("frames missing")
			}
			wantB := Frame{Start: F + 1, Ret: ReturnToHandler, Func: FuncAddr(fnB), Retp: slot.Retp}
			wantA := Frame{Start: 0, Ret: slot.Orig, Func: FuncAddr(fnA), Retp: slot.Retp}
			if b != wantB || a != wantA {
				t.Fatalf("frames B %+v A %+v, want %+v %+v", b, a, wantB, wantA)
			}
			if top := m.FtraceGraphTopRetAddr(0); top != slot.Orig {
				t.Errorf("ftrace_graph_top_ret_addr = %#x, want A's caller %#x", top, slot.Orig)
			}

			idx := 0
			got := m.FtraceGraphRetAddr(0, &idx, slot.Val, slot.Retp)
			want := slot.Orig
			if c.wantRTH {
				want = ReturnToHandler
			}
			if got != want {
				t.Errorf("ftrace_graph_ret_addr = %#x, want %#x (%s)", got, want, c.reason)
			}

			logLen := len(m.Log)
			gotRet, wantRet := m.Return()
			if gotRet != wantRet || gotRet != slot.Orig {
				t.Fatalf("returned to %#x, want %#x", gotRet, wantRet)
			}
			rets := m.Log[logLen:]
			if len(rets) != 2 || rets[0].Func != FuncAddr(fnB) || rets[1].Func != FuncAddr(fnA) {
				t.Fatalf("return callbacks %+v, want B then A (handler ran twice)", rets)
			}
			if curr(m, 0) != 0 || depth(m, 0) != -1 {
				t.Fatalf("curr %d depth %d, want 0 -1", curr(m, 0), depth(m, 0))
			}
		})
	}
}

// TestRetAddrCursor: an unwinder walks the real slots top-down calling
// ftrace_graph_ret_addr with one cursor; each call stores the matched
// frame's start in *idx, so the cursor decreases (29c1c24a2707).
func TestRetAddrCursor(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		cfg    Config
		// useIdx: the cursor is honoured and written back.
		useIdx bool
		// nilUnchanged: a nil cursor returns ret unchanged.
		nilUnchanged bool
	}{
		{"latest", "cursor honoured; NULL idx returns ret", DefaultConfig(Latest), true, true},
		{"v6.11", "the fix went in for v6.11", DefaultConfig(V611), true, true},
		{"seed", "the seed form ignores idx and rescans from the top", DefaultConfig(Seed), false, false},
		{"F5-idx mutant", "ignores the cursor (does not read or write it)", withMutant(DefaultConfig(Latest), MF5Idx), false, true},
	}
	const n = 5
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MustMachine(c.cfg)
			u := m.AddOps(&Ops{Name: "u"})
			mustRegister(t, m, u, 0)
			F := c.cfg.FrameWords
			for f := 1; f <= n; f++ {
				if !m.Call(f, false) {
					t.Fatalf("call %d not traced", f)
				}
			}
			slots := m.Slots(0)
			// Walk top-down with one cursor.
			idx := 0
			prev := 1 << 30
			for k := n - 1; k >= 0; k-- {
				s := slots[k]
				got := m.FtraceGraphRetAddr(0, &idx, s.Val, s.Retp)
				if got != s.Orig {
					t.Fatalf("slot %d: ret_addr %#x, want %#x (%s)", k, got, s.Orig, c.reason)
				}
				if !c.useIdx {
					if idx != 0 {
						t.Fatalf("slot %d: cursor written (%d) (%s)", k, idx, c.reason)
					}
					continue
				}
				if want := k * (F + 1); idx != want || idx >= prev {
					t.Fatalf("slot %d: cursor %d, want frame start %d, decreasing (%s)", k, idx, want, c.reason)
				}
				prev = idx
			}
			// A cursor below the frame: the search starts there and cannot
			// find the top slot's frame (only cursor-ignoring forms find it).
			top := slots[n-1]
			idx = F + 1 // start of frame 1
			got := m.FtraceGraphRetAddr(0, &idx, top.Val, top.Retp)
			if want := pick(c.useIdx, ReturnToHandler, top.Orig); got != want {
				t.Errorf("cursor below the frame: %#x, want %#x (%s)", got, want, c.reason)
			}
			// nil cursor.
			got = m.FtraceGraphRetAddr(0, nil, top.Val, top.Retp)
			if want := pick(c.nilUnchanged, ReturnToHandler, top.Orig); got != want {
				t.Errorf("nil cursor: %#x, want %#x (%s)", got, want, c.reason)
			}
			// A real (not hijacked) address is returned as is.
			if got := m.FtraceGraphRetAddr(0, &idx, 0x1234, top.Retp); got != 0x1234 {
				t.Errorf("plain address changed to %#x", got)
			}
			// An unknown retp is not found.
			idx = 0
			if got := m.FtraceGraphRetAddr(0, &idx, ReturnToHandler, 0xdead); got != ReturnToHandler || idx != 0 {
				t.Errorf("unknown retp: %#x cursor %d", got, idx)
			}
		})
	}
}

// TestGetRetStackAndTopRetAddr: the iterator primitives on an empty stack,
// on another task, and past the bottom.
func TestGetRetStackAndTopRetAddr(t *testing.T) {
	m := MustMachine(DefaultConfig(Latest))
	u := m.AddOps(&Ops{Name: "u"})
	mustRegister(t, m, u, 0)
	if _, ok := m.FtraceGraphGetRetStack(0, 0); ok {
		t.Errorf("empty stack has a frame")
	}
	if got := m.FtraceGraphTopRetAddr(0); got != 0 {
		t.Errorf("top_ret_addr of an empty stack %#x, want 0", got)
	}
	m.Call(1, false)
	m.Call(2, false)
	m.Current = 1 // an unwinder on another task reads task 0's stack
	f, ok := m.FtraceGraphGetRetStack(0, 1)
	if !ok || f.Start != 0 || f.Func != FuncAddr(1) {
		t.Errorf("frame 1 of task 0 = %+v %v", f, ok)
	}
	if got, want := m.FtraceGraphTopRetAddr(0), m.SlotAt(0, 1).Orig; got != want {
		t.Errorf("top_ret_addr %#x, want %#x", got, want)
	}
	if _, ok := m.FtraceGraphGetRetStack(1, 0); ok {
		t.Errorf("task 1 has no frames")
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings %v", m.Warnings)
	}
}

// TestRetAddrWalksWhoseWords: ftrace_graph_ret_addr(task, ...) called by
// task1 for a hijacked slot of task0. Since "function_graph: Fix the
// ret_stack used by ftrace_graph_ret_addr()" (Petr Pavlu, v6.11-rc, Fixes
// 7aa1eaef9f42) it walks task0's words; the seed, like 7aa1eaef9f42 as
// merged, starts at task0's curr_ret_stack but walks current's (task1's)
// words, so it misses task0's frame; with a current the machine does not
// hold (another CPU's task) the walk is the NULL dereference of that fix's
// report, recorded as a crash.
func TestRetAddrWalksWhoseWords(t *testing.T) {
	for _, v := range Variants() {
		t.Run(v.String(), func(t *testing.T) {
			m := MustMachine(DefaultConfig(v))
			u := m.AddOps(&Ops{Name: "u"})
			mustRegister(t, m, u, 0)
			m.Call(1, false)
			m.Call(2, false) // task0: two frames
			m.Current = 1
			m.Call(3, false) // task1: one frame, a different function
			if m.SlotCount(0) != 2 || m.SlotCount(1) != 1 {
				t.Fatalf("slots %d %d", m.SlotCount(0), m.SlotCount(1))
			}
			s := m.SlotAt(0, 0) // f1's slot, below f2's
			var idx int
			got := m.FtraceGraphRetAddrFrom(1, 0, &idx, s.Val, s.Retp)
			if v == Seed {
				if got == s.Orig {
					t.Errorf("seed: got task0's address %#x although it walks task1's words", got)
				}
			} else if got != s.Orig {
				t.Errorf("got %#x, want %#x (task0's own words)", got, s.Orig)
			}
			idx = 0
			nw := len(m.Warnings)
			got = m.FtraceGraphRetAddrFrom(NoTask, 0, &idx, s.Val, s.Retp)
			crashed := len(m.Warnings) > nw && strings.HasPrefix(m.Warnings[nw].Msg, CrashPrefix)
			if v == Seed {
				if !crashed {
					t.Errorf("seed with another CPU's current: no crash recorded (%v)", m.Warnings[nw:])
				}
			} else if got != s.Orig || len(m.Warnings) > nw {
				t.Errorf("from another CPU: got %#x, want %#x; warnings %v", got, s.Orig, m.Warnings[nw:])
			}
		})
	}
}
