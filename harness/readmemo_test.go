package harness

import (
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
	var skips, seen atomic.Int64
	readerMemoSkips, readerSeenHits = &skips, &seen
	defer func() { readerMemoSkips, readerSeenHits = nil, nil }()
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
				var off string
				withSet(&readerMemoOff, func() { off = exploredFull(t, m.sc, m.opt) })
				if on := exploredFull(t, m.sc, m.opt); on != off {
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
// curr_ret_stack changes, or one that keeps the earlier clean checks'
// inputs without the values of the words their walks read, changes std's
// result, and the comparison sees it.
func TestReaderMemoCaught(t *testing.T) {
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true}}
	var off string
	withSet(&readerMemoOff, func() { off = exploredFull(t, sc, opt) })
	defer func() { readerMemoDrop = "" }()
	for _, tc := range []struct{ drop, what string }{
		{"curr", "a reader memo blind to curr_ret_stack"},
		{"words", "kept inputs without the words' values"},
	} {
		readerMemoDrop = tc.drop
		if on := exploredFull(t, sc, opt); on == off {
			t.Errorf("%s went unnoticed", tc.what)
		}
	}
}
