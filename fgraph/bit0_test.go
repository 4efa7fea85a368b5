package fgraph

import "testing"

// TestBit0 (kernel-fgraph.md section 4 F1): function_graph_enter ORs BIT(0)
// into every bitmap word ("fgraph_idx = 0 is used as a tail-call checking
// flag", a stale comment) on every variant, so the return loop calls the
// user at index 0 for frames it never accepted. Config.NoBit0 is the fix
// proposed in the seed review; the F1 mutant puts the bit back on it.
func TestBit0(t *testing.T) {
	cases := []struct {
		name    string
		reason  string
		variant Variant
		noBit0  bool
		mutants MutantSet
		bit0    bool // BIT(0) in the frame of g, which only user 1 accepts
	}{
		{"latest", "still in 000aa47a51233", Latest, false, 0, true},
		{"v6.11", "still in fe835e3ca40e", V611, false, 0, true},
		{"seed", "[PATCH 04/20]: the reviewers asked to drop it; it stayed", Seed, false, 0, true},
		{"latest no-bit0 fix", "only accepted bits", Latest, true, 0, false},
		{"v6.11 no-bit0 fix", "only accepted bits", V611, true, 0, false},
		{"seed no-bit0 fix", "only accepted bits", Seed, true, 0, false},
		{"F1 mutant on the fix", "the mutant sets BIT(0) again", Latest, true, MutantSet(0).With(MF1Bit0), true},
	}
	const f, g = 1, 2
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig(c.variant)
			cfg.NoBit0 = c.noBit0
			cfg.Mutants = c.mutants
			m := MustMachine(cfg)
			// u0 at index 0 traces and accepts only f; u1 at index 1 only g.
			// (The seed has no filter test in the loop: u0's entryfunc runs
			// for g and rejects it through Accept.)
			u0 := m.AddOps(&Ops{Name: "u0", Filter: []int{f}, Accept: []int{f}})
			u1 := m.AddOps(&Ops{Name: "u1", Filter: []int{g}, Accept: []int{g}})
			mustRegister(t, m, u0, 0)
			mustRegister(t, m, u1, 1)
			F := cfg.FrameWords

			if !m.Call(g, false) {
				t.Fatalf("g not traced")
			}
			want := uint16(1 << 1)
			if c.bit0 {
				want |= 1
			}
			w := stackWord(m, 0, F)
			if GetType(w) != FgraphTypeBitmap || GetFrameOffset(w) != F || GetBitmapBits(w) != want {
				t.Fatalf("bitmap word %#x: bits %#b, want %#b (%s)", w, GetBitmapBits(w), want, c.reason)
			}
			if got, want := m.Return(); got != want {
				t.Fatalf("returned to %#x, want %#x", got, want)
			}
			// u0 never accepted g ...
			for _, r := range records(m.Log, RecEntry, u0.Index()) {
				if r.Func == FuncAddr(g) && r.Accepted {
					t.Fatalf("u0 accepted g: %+v", r)
				}
			}
			// ... but with BIT(0) its retfunc runs for g.
			phantom := 0
			for _, r := range records(m.Log, RecReturn, u0.Index()) {
				if r.Func == FuncAddr(g) {
					phantom++
				}
			}
			if (phantom > 0) != c.bit0 {
				t.Errorf("u0's retfunc ran %d times for g, want called=%v (%s)", phantom, c.bit0, c.reason)
			}
			if n := len(records(m.Log, RecReturn, u1.Index())); n != 1 {
				t.Errorf("u1's retfunc ran %d times, want 1", n)
			}

			// A frame u0 accepts has bit 0 for the honest reason.
			if !m.Call(f, false) {
				t.Fatalf("f not traced")
			}
			if bits := GetBitmapBits(stackWord(m, 0, F)); bits != 1 {
				t.Errorf("f's bitmap %#b, want 0b1", bits)
			}
			m.Return()
		})
	}
}

// TestBit0DirectMode: with one user in direct mode at an index other than
// 0, BIT(0) is still set, but the return path tests only the direct user's
// bit, so no phantom callback can happen (and there is no user 0).
func TestBit0DirectMode(t *testing.T) {
	m := MustMachine(DefaultConfig(Latest))
	d := m.AddOps(&Ops{Name: "dummy"})
	u := m.AddOps(&Ops{Name: "u"})
	mustRegister(t, m, d, 0)
	m.UnregisterFtraceGraph(d)
	mustRegister(t, m, u, 1)
	if readDirect(m).fn != OpsHandle(u.Index()) || m.Mem[AddrDoDirect] != 1 {
		t.Fatalf("not in direct mode: %+v", readDirect(m))
	}
	m.Call(1, false)
	if bits := GetBitmapBits(stackWord(m, 0, 3)); bits != 0b11 {
		t.Fatalf("bitmap %#b, want 0b11 (index 1 plus BIT(0))", bits)
	}
	m.Return()
	if n := len(records(m.Log, RecReturn, -2)); n != 1 {
		t.Fatalf("%d return callbacks, want 1", n)
	}
}
