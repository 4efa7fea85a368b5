package harness

import (
	"path/filepath"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/fgraph"
)

// The state cache on the compiled target: a kernel tree's fgraph.c
// ($FGCHECK_KERNEL; without a tree these tests skip, saying why, and CI,
// which installs one, never skips them). The compiled code's locals are on
// C stacks; the cache encodes them as the port's, by the contexts' input
// digests, with the object's statics and the loads the harness does not
// see added (ctarget/cload/state.go).

// kernelCacheScenarios are std and peer-spin on the compiled tree, and
// every corpus scenario the cache can explore there (E <= 1).
func kernelCacheScenarios(t *testing.T) []*Scenario {
	k := cload.TestTree(t, 64)
	std, ps := Standard(fgraph.V612), PeerSpin(fgraph.V612)
	std.Target, ps.Target = k, k
	out := []*Scenario{std, ps}
	files, err := filepath.Glob("../corpus/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus (%v)", err)
	}
	for _, p := range files {
		f := parseTestFile(t, p)
		sc := f.Scenario
		if sc.Config().StackWords != 64 {
			continue // the tree is built for one stack size
		}
		sc.Variant, sc.Target = fgraph.V612, k
		if ok, _ := Cacheable(sc); ok {
			sc.Name = filepath.Base(p)
			out = append(out, sc)
		}
	}
	return out
}

// TestEngineSoundKernel: on the compiled tree, the plain DFS (no prefix
// sharing, no cache), the same with prefix sharing (runs resume from snaps
// of the object's statics, resume.go) and the cached explorer give the
// same schedule, choice-point, violation and known-finding counts,
// verdicts, sites interrupted and first violation, on std, peer-spin and
// every corpus scenario, each explored completely (KeepGoing); with prefix
// sharing the whole coverage table, lines included, is the plain one's.
func TestEngineSoundKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std on the compiled tree three times")
	}
	// The only parallel test of the compiled tree, whose loaded object
	// (cload) one exploration at a time drives: the others set the
	// hook cload.StateDrop, and have ended before it starts.
	t.Parallel()
	scs := kernelCacheScenarios(t)
	ran := int64(0)
	for _, sc := range scs {
		keep := ExploreOptions{Workers: 1, RunOptions: RunOptions{KeepGoing: true}}
		var plainFull string
		var plain outcome
		plain, s0 := exploredSummary(t, sc, withoutResume(keep))
		plainFull = full(plain, s0)
		if resumed := exploredFull(t, sc, keep); resumed != plainFull {
			t.Errorf("%s: prefix sharing changes the result on the compiled tree:\nwithout:\n%s\nwith:\n%s", sc.Name, plainFull, resumed)
		}
		keep.Cache = true
		cached, s := exploredSummary(t, sc, keep)
		if plain.String() != cached.String() {
			t.Errorf("%s: cached explorer differs from plain on the compiled tree:\nplain:\n%s\ncached:\n%s", sc.Name, plain, cached)
		}
		ran += s.Executed
		if sc.Name == "std" && s.Executed >= s.Runs {
			t.Errorf("std: the cache ran %d schedules for %d: it pruned nothing", s.Executed, s.Runs)
		}
	}
	t.Logf("%d scenarios, %d schedules run by the cached explorer", len(scs), ran)
}

// TestCacheIncompleteStateCaughtKernel: on the compiled tree, a state
// without the contexts (their input digests: the C stacks) is caught on
// std with the any-instant walker: its outcome differs from the cached
// explorer's with the whole state, which TestEngineSoundKernel holds to the
// plain DFS there. (On peer-spin at K=2 it is not caught any more: the
// states that only the contexts tell apart there are those of a context
// under an interrupt still running, alone in cache.go, which are not
// looked up; with alone off it is caught there too.) The compiled code's
// own parts are dropped too, on peer-spin, and what that does is logged:
// on these scenarios the statics the runtime does not mirror
// (fgraph_initialized, the users' fgraph_ops, the arena's task list) and
// the loads of them are the same in every run or implied by memory and
// the program position (measured: dropping either leaves every count of
// std unchanged). They stay in the state: nothing guarantees that for
// every scenario.
func TestCacheIncompleteStateCaughtKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std and peer-spin on the compiled tree once per part dropped")
	}
	scs := kernelCacheScenarios(t)
	st, ps := scs[0], scs[1]
	st.AnyReader, ps.AnyReader = true, true
	keep := ExploreOptions{Workers: 1, RunOptions: RunOptions{KeepGoing: true}}
	whole := keep
	whole.Cache = true
	drop := whole
	drop.cacheDrop = stContexts + 1
	if want, got := explored(t, st, whole), explored(t, st, drop); got.String() == want.String() {
		t.Errorf("a state without the contexts was not caught on the compiled tree")
	} else {
		t.Logf("without the contexts: %d schedules instead of %d", got.runs, want.runs)
	}
	want := explored(t, ps, keep).String()
	defer func() { cload.StateDrop = "" }()
	for _, part := range []string{"statics", "unseen"} {
		cload.StateDrop = part
		if got := explored(t, ps, whole); got.String() != want {
			t.Logf("without the compiled code's %s: caught (%d schedules)", part, got.runs)
		} else {
			t.Logf("without the compiled code's %s: no difference on peer-spin", part)
		}
	}
}

// TestCacheVerifyEverySubtreeKernel re-explores, on the compiled tree, every
// subtree whose state the cache has seen (verify mode) and requires the
// totals of its first visit: no two suffixes with one state and different
// outcomes, on peer-spin and every corpus scenario.
func TestCacheVerifyEverySubtreeKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("explores the compiled tree in verify mode")
	}
	verifySubtrees(t, kernelCacheScenarios(t)[1:], ExploreOptions{Workers: 1, Cache: true, RunOptions: RunOptions{KeepGoing: true}})
}

// TestResumeIncompleteSnapCaughtKernel: a snap of the compiled target
// without the object's statics (the run resumes with fgraph.c's statics
// as at the start, memory as at the snap) is caught by
// TestEngineSoundKernel's comparison on peer-spin, or by the explorer's
// own check of a replayed prefix.
func TestResumeIncompleteSnapCaughtKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("explores peer-spin on the compiled tree twice")
	}
	ps := kernelCacheScenarios(t)[1]
	opt := ExploreOptions{Workers: 1, RunOptions: RunOptions{KeepGoing: true}}
	plain := exploredFull(t, ps, withoutResume(opt))
	cload.StateDrop = "snap"
	defer func() { cload.StateDrop = "" }()
	if _, err := Explore(ps, opt); err != nil {
		t.Logf("a snap without the statics: %v", err)
		return
	}
	if got := exploredFull(t, ps, opt); got == plain {
		t.Errorf("a snap without the compiled code's statics went unnoticed")
	}
}

// TestCacheLogWindowKernel is TestCacheLogWindow on the compiled tree: std,
// peer-spin and every corpus scenario the cache explores there.
func TestCacheLogWindowKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std on the compiled tree")
	}
	checkLogWindow(t, kernelCacheScenarios(t), 2)
}
