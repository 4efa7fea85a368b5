package harness

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestReaderMemoSound: the explorer that leaves out in-place checks whose
// readers' inputs are those of the last clean one (readerMemo) or of any
// clean one before (readerSeen) and the one that runs them all give the
// same counts, verdicts, known findings, coverage and first violation:
// on std and peer-spin explored completely, with the plain engine and
// with the CLI's (the cache, merged remote placements, and lazy orders on
// peer-spin), and on std with every catalogue mutant explored completely
// at C=1.
func TestReaderMemoSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant twice")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	var skips, seen atomic.Int64
	h := &testHooks{readerMemoSkips: &skips, readerSeenHits: &seen}
	for i, sc := range soundScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			modes := soundModes(i, sc)[:1] // complete (at C=1 for a mutant)
			if i < 2 {
				cli := modes[0]
				cli.name = "complete, as the CLI explores"
				cli.opt.Cache, cli.opt.MergeRemotes = true, true
				if sc.Bound.C == 0 {
					cli.opt.MergeRemotes, cli.opt.LazyOrders = false, true
				}
				modes = append(modes, cli)
			}
			for _, m := range modes {
				off := exploredFull(t, m.sc, hooked(m.opt, &testHooks{readerMemoOff: true}))
				if on := exploredFull(t, m.sc, hooked(m.opt, h)); on != off {
					t.Errorf("%s: the reader memo changes the result:\nwithout:\n%s\nwith:\n%s", m.name, off, on)
				}
			}
		})
	}
	t.Logf("%d in-place checks left out, %d of them by an earlier clean check's inputs", skips.Load(), seen.Load())
	if skips.Load() < 100000 || seen.Load() < 10000 {
		t.Errorf("%d in-place checks left out (%d by an earlier one's inputs): too few to tell", skips.Load(), seen.Load())
	}
}

// TestReaderMemoCaught: a memo that does not forget what it kept when
// curr_ret_stack changes, one that keeps the earlier clean checks'
// inputs without the values of the words their walks read, or one that
// takes the real stack for the one it kept without reading it again when
// its version moved (fgraph.SlotsVersion), changes std's result, and the
// comparison sees it.
func TestReaderMemoCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true}}
	off := exploredFull(t, sc, hooked(opt, &testHooks{readerMemoOff: true}))
	for _, tc := range []struct{ drop, what string }{
		{"curr", "a reader memo blind to curr_ret_stack"},
		{"words", "kept inputs without the words' values"},
	} {
		if on := exploredFull(t, sc, hooked(opt, &testHooks{readerMemoDrop: tc.drop})); on == off {
			t.Errorf("%s went unnoticed", tc.what)
		}
	}
}

// TestReaderMemoSeesRealStack: the memos trust their copy of the real
// stack only while no real stack changed (fgraph.SlotsVersion); after a
// call, a return or a restore they read the slots again and see the
// change, also one that leaves as many slots (a restore of a slot not
// hijacked over one that is). No exploration above tells apart a memo
// that skips this: the calls and returns that change the real stack
// change curr_ret_stack or the words the walks read too, which the memos
// watch. So it is checked here, on the memos themselves.
func TestReaderMemoSeesRealStack(t *testing.T) {
	t.Parallel() // sets no test hook (parallel_test.go)
	for _, miss := range realStackMisses(t, new(testHooks)) {
		t.Error(miss)
	}
}

// TestReaderMemoSeesRealStackCaught: memos that trust their copy of the
// real stack whatever its version says (readerMemoDrop "slots") miss
// those changes, and the test above sees it.
func TestReaderMemoSeesRealStackCaught(t *testing.T) {
	t.Parallel() // its hooks are its runner's (hooks.go)
	if len(realStackMisses(t, &testHooks{readerMemoDrop: "slots"})) == 0 {
		t.Error("memos blind to the real stack's version went unnoticed")
	}
}

// realStackMisses changes task 0's real stack step by step, with the
// memos of a runner with the hooks h, and returns the changes they
// missed.
func realStackMisses(t *testing.T, h *testHooks) []string {
	t.Helper()
	r, err := newRunner(Standard(fgraph.Latest))
	if err != nil {
		t.Fatal(err)
	}
	r.hk = h
	m := r.m
	var plain fgraph.MachineState
	steps := []struct {
		name string
		do   func()
	}{
		{"a call no user traces", func() { m.Call(1, false) }},
		{"the state saved, then its return", func() {
			m.SaveState(&plain)
			m.Return()
		}},
		{"a traced call (the slot hijacked)", func() {
			if m.RegisterFtraceGraph(r.ops[0]) < 0 {
				t.Fatal("user 0 not registered")
			}
			if !m.Call(1, false) {
				t.Fatal("the call was not traced")
			}
		}},
		{"the slot not hijacked put back (as many slots)", func() { m.RestoreState(&plain) }},
		{"a return", func() { m.Return() }},
	}
	var memo readerMemo
	var seen readerSeen
	var misses []string
	memo.save(r, 0, 0)
	seen.setShape(r, 0)
	for _, s := range steps {
		if !memo.same(r, 0) {
			t.Fatalf("before %s: the memo differs from the stack it kept", s.name)
		}
		shape := seen.stack
		s.do()
		if memo.same(r, 0) {
			misses = append(misses, s.name+": the reader memo took the changed real stack for the one it kept")
		}
		seen.setShape(r, 0)
		if seen.stack == shape {
			misses = append(misses, s.name+": readerSeen kept the digest of the real stack before it")
		}
		memo.save(r, 0, 0)
	}
	return misses
}

// TestToFront: a mask that hits moves to the front of its shape's list,
// and no mask is lost or repeated (a lost one would only cost hits, so no
// exploration's counts would show it).
func TestToFront(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []uint64
		i    int
		want []uint64
	}{
		{"the first stays", []uint64{1, 2, 3}, 0, []uint64{1, 2, 3}},
		{"the second swaps with the first", []uint64{1, 2, 3}, 1, []uint64{2, 1, 3}},
		{"the last goes first, the others in order", []uint64{1, 2, 3, 4}, 3, []uint64{4, 1, 2, 3}},
		{"a list of one", []uint64{7}, 0, []uint64{7}},
	} {
		got := slices.Clone(tc.in)
		toFront(got, tc.i)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: toFront(%v, %d) = %v, want %v", tc.name, tc.in, tc.i, got, tc.want)
		}
	}
}
