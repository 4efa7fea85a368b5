package fgraph

import "testing"

// Real layout, Latest: 512 words, F = 3, task variables at 496..511,
// SHADOW_STACK_MAX_OFFSET = 512 - (3 + 1 + 16) = 492 (section 1.4).
const (
	realMaxOffset = 492
	realLastPush  = 487 // a push needs curr + F + 1 < 492
	realGuardLo   = 491 // first word no frame may write
	realTaskVars  = 496
)

func TestCapacityConstants(t *testing.T) {
	c := DefaultConfig(Latest)
	if c.StackWords != 512 || c.FrameWords != 3 {
		t.Fatalf("DefaultConfig(Latest) = %d words, F %d; want 512, 3", c.StackWords, c.FrameWords)
	}
	if got := c.ShadowStackMaxOffset(); got != realMaxOffset {
		t.Errorf("SHADOW_STACK_MAX_OFFSET = %d, want 492", got)
	}
	if got := c.TaskVarBase(); got != realTaskVars {
		t.Errorf("task vars at %d, want 496", got)
	}
	v := DefaultConfig(V611)
	if got := v.ShadowStackMaxOffset(); got != 512-(4+1+16) {
		t.Errorf("v6.11 MAX_OFFSET = %d, want 491 (F = 4)", got)
	}
	s := DefaultConfig(Seed)
	if got := s.ShadowStackMaxOffset(); got != 512-(4+1) || s.TaskVarBase() != -1 {
		t.Errorf("seed MAX_OFFSET = %d, task vars %d; want 507, none", got, s.TaskVarBase())
	}
}

// checkNoGuardStores fails on any store by frame code at or past index 491
// of task t (the task-variable initialisation is not frame code).
func checkNoGuardStores(t *testing.T, h *recHooks, task int) (max int) {
	t.Helper()
	max = -1
	for _, s := range h.taskWordStores(task) {
		if s.Site == SiteInitTask || s.Site == SiteTaskVars {
			continue
		}
		i := int(s.Addr)
		if i >= realGuardLo {
			t.Errorf("site %v wrote word %d (guard band / task vars start at %d)", s.Site, i, realGuardLo)
		}
		if i > max {
			max = i
		}
	}
	return max
}

// TestCapacityPushRefusal fills the real stack with 4-word frames: 122
// pushes fit (curr 0, 4, ..., 484 <= 487), the 123rd at curr 488 is
// refused, counted in trace_overrun, and leaves the return address alone.
func TestCapacityPushRefusal(t *testing.T) {
	m := MustMachine(DefaultConfig(Latest))
	u := m.AddOps(&Ops{Name: "u"})
	mustRegister(t, m, u, 0)
	h := attachRec(m)

	pushed := 0
	for {
		c := curr(m, 0)
		ok := m.Call(1, false)
		if c <= realLastPush {
			if !ok || curr(m, 0) != c+4 {
				t.Fatalf("push at curr %d refused or wrong (ok %v, curr %d)", c, ok, curr(m, 0))
			}
			pushed++
			continue
		}
		if ok {
			t.Fatalf("push at curr %d accepted; MAX_OFFSET is 492", c)
		}
		break
	}
	if pushed != 122 || curr(m, 0) != 488 {
		t.Fatalf("pushed %d frames to curr %d, want 122 to 488", pushed, curr(m, 0))
	}
	if got := overrun(m, 0); got != 1 {
		t.Fatalf("trace_overrun = %d after one refusal, want 1", got)
	}
	top := m.SlotAt(0, m.SlotCount(0)-1)
	if top.Val != top.Orig || top.Val == ReturnToHandler {
		t.Fatalf("refused call hijacked its return slot: %#x (orig %#x)", top.Val, top.Orig)
	}
	if depth(m, 0) != 121 {
		t.Fatalf("curr_ret_depth %d after refusal, want 121 (the refused entry undoes its ++)", depth(m, 0))
	}
	// A second refusal counts again.
	if m.Call(1, false) || overrun(m, 0) != 2 {
		t.Fatalf("second refusal: overrun %d, want 2", overrun(m, 0))
	}
	if max := checkNoGuardStores(t, h, 0); max != 487 {
		t.Errorf("highest word written %d, want 487 (bitmap of the frame at 484)", max)
	}

	// Unwind everything: the two refused calls return directly, the rest
	// through the handler, each to the address its caller pushed.
	logLen := len(m.Log)
	for m.SlotCount(0) > 0 {
		got, want := m.Return()
		if got != want {
			t.Fatalf("returned to %#x, want %#x", got, want)
		}
	}
	if rets := len(m.Log) - logLen; rets != 122 {
		t.Fatalf("%d retfuncs ran, want 122 (refused calls have no frame)", rets)
	}
	if curr(m, 0) != 0 || depth(m, 0) != -1 || len(m.Warnings) != 0 {
		t.Fatalf("after unwind: curr %d depth %d warnings %v", curr(m, 0), depth(m, 0), m.Warnings)
	}
}

// TestCapacityLastPushReaches490 aligns the stack so that the last allowed
// push starts at curr 487: it writes 487..490 and the next one is refused.
// Word 490 is the highest a frame can write; 491..495 are never written.
func TestCapacityLastPushReaches490(t *testing.T) {
	m := MustMachine(DefaultConfig(Latest))
	p := m.AddOps(&Ops{Name: "plain"})
	d := m.AddOps(&Ops{Name: "data", DataBytes: 80, Accept: []int{9}})
	mustRegister(t, m, p, 0)
	mustRegister(t, m, d, 1)
	h := attachRec(m)

	// One frame of 3+1+10+1 = 15 words, then 4-word frames: 15 + 4*118 = 487.
	if !m.Call(9, false) || curr(m, 0) != 15 {
		t.Fatalf("data frame: curr %d, want 15", curr(m, 0))
	}
	for i := 0; i < 118; i++ {
		if !m.Call(1, false) {
			t.Fatalf("push %d refused at curr %d", i, curr(m, 0))
		}
	}
	if curr(m, 0) != 487 {
		t.Fatalf("curr %d, want 487", curr(m, 0))
	}
	if !m.Call(1, false) || curr(m, 0) != 491 {
		t.Fatalf("push at 487 (487+4 = 491 < 492) refused: curr %d", curr(m, 0))
	}
	if w := stackWord(m, 0, 490); w != MakeBitmap(1, 3) {
		t.Fatalf("word 490 = %#x, want the bitmap %#x", w, MakeBitmap(1, 3))
	}
	if m.Call(1, false) || overrun(m, 0) != 1 || curr(m, 0) != 491 {
		t.Fatalf("push at 491 accepted or uncounted: overrun %d curr %d", overrun(m, 0), curr(m, 0))
	}
	if max := checkNoGuardStores(t, h, 0); max != 490 {
		t.Fatalf("highest word written %d, want 490", max)
	}
	im := m.Snapshot(0)
	for i := realGuardLo; i < 512; i++ {
		if im.Words[i] != 0 {
			t.Errorf("word %d = %#x, want untouched 0", i, im.Words[i])
		}
	}
}

// TestCapacitySweep varies the reservation size 0..256 bytes so frames
// have every alignment, pushing until the first refusal: a push succeeds
// exactly when curr <= 487, a reservation exactly when its new curr < 492,
// and no frame code ever writes index 491 or above.
func TestCapacitySweep(t *testing.T) {
	maxSeen := -1
	for bytes := 0; bytes <= FgraphMaxDataSize; bytes += 8 {
		words := bytes / 8
		m := MustMachine(DefaultConfig(Latest))
		p := m.AddOps(&Ops{Name: "plain"})
		d := m.AddOps(&Ops{Name: "data", DataBytes: bytes})
		mustRegister(t, m, p, 0)
		mustRegister(t, m, d, 1)
		h := attachRec(m)
		for {
			c := curr(m, 0)
			logLen := len(m.Log)
			ok := m.Call(1, false)
			if c > realLastPush {
				if ok || curr(m, 0) != c || overrun(m, 0) != 1 {
					t.Fatalf("%d bytes: push at curr %d: ok %v curr %d overrun %d; want refused", bytes, c, ok, curr(m, 0), overrun(m, 0))
				}
				break
			}
			if !ok {
				t.Fatalf("%d bytes: push at curr %d refused", bytes, c)
			}
			want := c + 4
			if words > 0 && c+4+words+1 < realMaxOffset {
				want += words + 1
			}
			if curr(m, 0) != want {
				t.Fatalf("%d bytes: curr %d after push at %d, want %d", bytes, curr(m, 0), c, want)
			}
			if words > 0 {
				e := records(m.Log[logLen:], RecEntry, d.Index())
				if len(e) != 1 || e[0].Accepted != (want != c+4) {
					t.Fatalf("%d bytes: data user accepted %v at curr %d", bytes, e, c)
				}
			}
		}
		if mx := checkNoGuardStores(t, h, 0); mx > maxSeen {
			maxSeen = mx
		}
		if t.Failed() {
			return
		}
	}
	if maxSeen > 490 || maxSeen < 487 {
		t.Fatalf("highest word written over the sweep %d, want 487..490", maxSeen)
	}
}

// TestCapacityReserveBoundary calls fgraph_reserve_data directly on a
// frame whose top is at curr: refused (NULL, nothing written) once the new
// curr = curr + words + 1 would be >= 492.
func TestCapacityReserveBoundary(t *testing.T) {
	cases := []struct {
		curr, bytes int
		ok          bool
		reason      string
	}{
		{489, 8, true, "new curr 491 < 492: DATA word at 490, the highest a frame can write"},
		{490, 8, false, "new curr 492 == MAX_OFFSET: refused"},
		{491, 8, false, "new curr 493: refused"},
		{484, 48, true, "6 words: new curr 491"},
		{485, 48, false, "6 words: new curr 492"},
		{458, 256, true, "32 words: new curr 458+33 = 491 < 492"},
		{459, 256, false, "32 words: new curr 459+33 = 492"},
	}

	for _, c := range cases {
		m := MustMachine(DefaultConfig(Latest))
		u := m.AddOps(&Ops{Name: "u"})
		mustRegister(t, m, u, 0)
		h := attachRec(m)
		m.Mem[m.WordAddr(0, c.curr-1)] = MakeReserved(3)
		m.Mem[m.TaskBase(0)+TaskCurr] = intWord(c.curr)
		p := m.fgraphReserveData(0, c.bytes)
		if (p >= 0) != c.ok {
			t.Errorf("reserve %d bytes at curr %d = %d, want ok=%v (%s)", c.bytes, c.curr, p, c.ok, c.reason)
			continue
		}
		if !c.ok {
			if curr(m, 0) != c.curr || len(h.taskWordStores(0)) != 0 {
				t.Errorf("refused reservation at %d changed curr to %d or wrote %v (%s)", c.curr, curr(m, 0), h.taskWordStores(0), c.reason)
			}
			continue
		}
		checkNoGuardStores(t, h, 0)
	}
}
