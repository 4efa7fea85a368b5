package fgraph

import "testing"

// Function numbers of the worked example.
const (
	fnA = 1
	fnB = 2
)

// workedExample builds the setting of kernel-fgraph.md section 1.6 on
// Latest (F = 3, 512 words): user u0 at index 0 takes no data, user u3 at
// index 3 reserves 16 bytes and accepts only A. The LRU hands out 0,1,2,3
// in order, so two dummy users take 1 and 2 and are unregistered again.
func workedExample(t *testing.T) (m *Machine, u0, u3 *Ops) {
	t.Helper()
	m = MustMachine(DefaultConfig(Latest))
	u0 = m.AddOps(&Ops{Name: "u0"})
	d1 := m.AddOps(&Ops{Name: "dummy1"})
	d2 := m.AddOps(&Ops{Name: "dummy2"})
	u3 = m.AddOps(&Ops{Name: "u3", DataBytes: 16, Accept: []int{fnA}})
	mustRegister(t, m, u0, 0)
	mustRegister(t, m, d1, 1)
	mustRegister(t, m, d2, 2)
	mustRegister(t, m, u3, 3)
	m.UnregisterFtraceGraph(d1)
	m.UnregisterFtraceGraph(d2)
	if len(m.Warnings) != 0 {
		t.Fatalf("setup warnings: %v", m.Warnings)
	}
	if got := m.Mem[AddrBitmask]; got != 0b1001 {
		t.Fatalf("fgraph_array_bitmask = %#b, want 0b1001", got)
	}
	if m.Mem[AddrDoDirect] != 0 {
		t.Fatalf("two users active but the direct key is on")
	}
	return m, u0, u3
}

// checkWords compares task 0's shadow stack word by word with want; every
// index not in want must still be zero.
func checkWords(t *testing.T, step string, im Image, want map[int]Word) {
	t.Helper()
	for i, w := range im.Words {
		exp, ok := want[i]
		if !ok {
			exp = 0
		}
		if w != exp {
			t.Errorf("%s: word %d = %#x, want %#x", step, i, w, exp)
		}
	}
}

// TestWorkedExampleBitExact drives section 1.6 through the public API and
// checks the word image index by index.
func TestWorkedExampleBitExact(t *testing.T) {
	m, u0, u3 := workedExample(t)

	// Literal addresses of the simulated text and real stack, so that a
	// change of the address scheme is noticed here too.
	const (
		aRet  Word = 0xffffffff82000004 // CallSite(0, 0): the task's first call
		aFunc Word = 0xffffffff82000100 // FuncAddr(A)
		aRetp Word = 0xffffc90000000000 // first real stack slot of task 0, level 0
		bRet  Word = 0xffffffff82000108 // CallSite(A, 1): inside A
		bFunc Word = 0xffffffff82000200 // FuncAddr(B)
		bRetp Word = 0xffffc90000000008 // second slot
		// Pattern(3, gen 4, A, depth 0, i): u3 is ops 3, the 4th registration.
		pay0 Word = 0xda30040001000000
		pay1 Word = 0xda30040001000001
	)
	if CallSite(0, 0) != aRet || FuncAddr(fnA) != aFunc || CallSite(fnA, 1) != bRet || FuncAddr(fnB) != bFunc {
		t.Fatalf("address scheme changed")
	}
	if u3.Gen() != 4 || Pattern(u3.Index(), u3.Gen(), fnA, 0, 0) != pay0 || Pattern(u3.Index(), u3.Gen(), fnA, 0, 1) != pay1 {
		t.Fatalf("payload pattern changed: gen %d, %#x", u3.Gen(), Pattern(u3.Index(), u3.Gen(), fnA, 0, 0))
	}

	// A entered, both users accept.
	if !m.Call(fnA, false) {
		t.Fatalf("Call(A) not hijacked; warnings %v", m.Warnings)
	}
	afterA := map[int]Word{0: aRet, 1: aFunc, 2: aRetp, 3: 0x9403, 4: pay0, 5: pay1, 6: 0x61806}
	im := m.Snapshot(0)
	checkWords(t, "after A", im, afterA)
	if im.Curr != 7 || im.Depth != 0 || im.Overrun != 0 || !im.HasStack {
		t.Fatalf("after A: curr %d depth %d overrun %d, want 7 0 0", im.Curr, im.Depth, im.Overrun)
	}

	// B entered, only u0 accepts; u3's rejection leaves no DATA word.
	if !m.Call(fnB, false) {
		t.Fatalf("Call(B) not hijacked")
	}
	afterB := map[int]Word{7: bRet, 8: bFunc, 9: bRetp, 10: 0x1403}
	for k, v := range afterA {
		afterB[k] = v
	}
	im = m.Snapshot(0)
	checkWords(t, "after B", im, afterB)
	if im.Curr != 11 || im.Depth != 1 {
		t.Fatalf("after B: curr %d depth %d, want 11 1", im.Curr, im.Depth)
	}

	// The unwind of section 1.6: word 10 -> frame 7; word 6 -> frame 0.
	for n, want := range []Frame{{Start: 7, Ret: bRet, Func: bFunc, Retp: bRetp}, {Start: 0, Ret: aRet, Func: aFunc, Retp: aRetp}} {
		got, ok := m.FtraceGraphGetRetStack(0, n)
		if !ok || got != want {
			t.Errorf("FtraceGraphGetRetStack(0, %d) = %+v %v, want %+v", n, got, ok, want)
		}
	}
	if _, ok := m.FtraceGraphGetRetStack(0, 2); ok {
		t.Errorf("a third frame below frame start 0")
	}

	// B returns: frame 7, only idx 0's retfunc, curr := 7. The words stay.
	logLen := len(m.Log)
	got, want := m.Return()
	if got != want || got != bRet {
		t.Fatalf("B returned to %#x, want %#x", got, bRet)
	}
	im = m.Snapshot(0)
	checkWords(t, "after B returned", im, afterB)
	if im.Curr != 7 || im.Depth != 0 {
		t.Fatalf("after B returned: curr %d depth %d, want 7 0", im.Curr, im.Depth)
	}
	if rs := m.Log[logLen:]; len(rs) != 1 || rs[0].Kind != RecReturn || rs[0].Ops != u0.Index() || rs[0].Func != bFunc || rs[0].Depth != 1 {
		t.Fatalf("B's return callbacks = %+v, want one retfunc of u0", rs)
	}

	// A returns: idx 0 then idx 3, which retrieves its payload at 4..5.
	logLen = len(m.Log)
	got, want = m.Return()
	if got != want || got != aRet {
		t.Fatalf("A returned to %#x, want %#x", got, aRet)
	}
	im = m.Snapshot(0)
	checkWords(t, "after A returned", im, afterB)
	if im.Curr != 0 || im.Depth != -1 {
		t.Fatalf("after A returned: curr %d depth %d, want 0 -1", im.Curr, im.Depth)
	}
	rs := m.Log[logLen:]
	if len(rs) != 2 || rs[0].Ops != u0.Index() || rs[1].Ops != u3.Index() || rs[1].Idx != 3 || rs[1].Func != aFunc {
		t.Fatalf("A's return callbacks = %+v, want u0 then u3", rs)
	}
	if d := rs[1].Data; len(d) != 2 || d[0] != pay0 || d[1] != pay1 {
		t.Fatalf("u3 retrieved %s, want the payload %#x %#x of words 4..5", hexWords(d), pay0, pay1)
	}

	// The entry side of the log: u3 rejected B and wrote no data for it.
	ents := records(m.Log, RecEntry, u3.Index())
	if len(ents) != 2 || !ents[0].Accepted || ents[1].Accepted || ents[1].Data != nil {
		t.Fatalf("u3 entry records = %+v", ents)
	}
	if len(m.Warnings) != 0 {
		t.Fatalf("warnings: %v", m.Warnings)
	}
}

// TestWorkedExampleRetrieveData checks fgraph_retrieve_data's walk of
// section 1.6 from inside the frame (curr = 7): index 3 finds words 4..5,
// index 0 (no data) and a stranger find nothing.
func TestWorkedExampleRetrieveData(t *testing.T) {
	m, _, _ := workedExample(t)
	m.Call(fnA, false)
	cases := []struct {
		idx    int
		want   []Word
		reason string
	}{
		{3, []Word{0xda30040001000000, 0xda30040001000001}, "word 6 is DATA owned by 3, size 2: payload at 6-2 = 4"},
		{0, nil, "word 6 is owned by 3; the next word down (3) is the BITMAP: end of chain"},
		{5, nil, "no such owner"},
	}
	for _, c := range cases {
		got := m.RetrieveData(c.idx)
		if hexWords(got) != hexWords(c.want) {
			t.Errorf("RetrieveData(%d) = [%s], want [%s] (%s)", c.idx, hexWords(got), hexWords(c.want), c.reason)
		}
	}
}
