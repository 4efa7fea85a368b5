package harness

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// modelCounts is what one compiler model's verdict of an exploration is
// compared by: schedules, failing schedules, schedules per known finding,
// and the set of (oracle, known finding) verdicts its runs reported.
type modelCounts struct {
	runs, viol int64
	known      string
	verdicts   []string
}

func (m modelCounts) String() string {
	return fmt.Sprintf("runs %d violations %d known {%s} verdicts %v", m.runs, m.viol, m.known, m.verdicts)
}

func countsText(known map[string]int64) string {
	var ks []string
	for k, n := range known {
		ks = append(ks, fmt.Sprintf("%s:%d", k, n))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

func verdictsOf(r *Result, seen map[string]bool) {
	for _, v := range r.Violations {
		seen[v.Oracle+"/-"] = true
	}
	for _, v := range r.Known {
		seen[v.Oracle+"/"+v.Known] = true
	}
}

func sortedKeys(seen map[string]bool) []string {
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bothModels explores sc (the no-alias model) and returns its kbuild
// verdict as the summary counts it and as the runs marked Kbuild show it,
// and its whole (no-alias) verdict.
func bothModels(t *testing.T, sc *Scenario, opt ExploreOptions) (kbuild, kbuildRuns, all modelCounts) {
	t.Helper()
	seenK, seenAll := map[string]bool{}, map[string]bool{}
	opt.OnRun = func(r *Result) {
		verdictsOf(r, seenAll)
		if !r.Kbuild() {
			return
		}
		kbuildRuns.runs++
		if r.Failed() {
			kbuildRuns.viol++
		}
		verdictsOf(r, seenK)
	}
	s, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	kbuild = modelCounts{runs: s.Kbuild.Runs, viol: s.Kbuild.Violations, known: countsText(s.Kbuild.Known), verdicts: sortedKeys(seenK)}
	kbuildRuns.known, kbuildRuns.verdicts = kbuild.known, kbuild.verdicts
	all = modelCounts{runs: s.Runs, viol: s.Violations, known: countsText(s.Known), verdicts: sortedKeys(seenAll)}
	return kbuild, kbuildRuns, all
}

// TestKbuildIsTheAliasExploration: the default exploration judges every
// schedule under the no-alias model, and the runs it marks as kbuild's
// (Result.Kbuild: no order chosen that only the no-alias model allows) are
// exactly the runs of the alias-aware exploration (Scenario.Alias, explore
// --alias): the same number of schedules, of failing schedules, of
// schedules per known finding, and the same (oracle, known finding)
// verdicts. That is what lets one exploration report both verdicts. Held
// on peer-spin and (at C=1, completely, every
// violation of every run counted) on std with every catalogue mutant; the
// same holds with the state cache on. An alias-aware exploration's kbuild
// verdict is the whole of it.
func TestKbuildIsTheAliasExploration(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std on every variant and every mutant at C=1 under both models")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	type tcase struct {
		name, reason string
		sc           *Scenario
	}
	// (TestStd holds std's counts on every variant to the alias-aware
	// exploration's.)
	cases := []tcase{{"peer-spin", "interrupts at store commits only (stores-only)", PeerSpin(fgraph.Latest)}}
	for _, mi := range fgraph.Catalogue {
		sc := Standard(fgraph.Latest)
		sc.Mutant = mi.Mutant
		sc.Name = "std+" + mi.Name
		sc.Bound.C = 1
		cases = append(cases, tcase{"C1-" + mi.Name, "a mutant's violations, every one of every run (KeepGoing), split by model", sc})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reason == "" {
				t.Fatal("case without a reason")
			}
			opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true}}
			kb, kbRuns, all := bothModels(t, tc.sc, opt)
			if kb.String() != kbRuns.String() {
				t.Errorf("Summary.Kbuild disagrees with the runs marked Kbuild:\nsummary: %s\nruns:    %s", kb, kbRuns)
			}
			asc := *tc.sc
			asc.Alias = true
			akb, _, aall := bothModels(t, &asc, opt)
			if kb.String() != aall.String() {
				t.Errorf("(%s) kbuild's verdict of the default exploration differs from the alias-aware exploration:\ndefault, kbuild: %s\n--alias:         %s\ndefault, all:    %s", tc.reason, kb, aall, all)
			}
			if akb.String() != aall.String() {
				t.Errorf("the alias-aware exploration's kbuild verdict is not the whole of it:\nkbuild: %s\nall:    %s", akb, aall)
			}
			if all.runs < kb.runs || all.viol < kb.viol {
				t.Errorf("kbuild's verdict is not a part of the whole: kbuild %s, all %s", kb, all)
			}
			if ok, _ := Cacheable(tc.sc); ok {
				copt := opt
				copt.Cache = true
				ckb, _, call := bothModels(t, tc.sc, copt)
				// OnRun sees only the runs the cache did not prune:
				// compare the counts, not the verdict sets.
				ckb.verdicts, call.verdicts = kb.verdicts, all.verdicts
				if ckb.String() != kb.String() || call.String() != all.String() {
					t.Errorf("with the state cache: kbuild %s, all %s; without: kbuild %s, all %s", ckb, call, kb, all)
				}
			}
		})
	}
}

// TestStopAtFirstWaitsForKbuild: StopAtFirst does not stop at a violation
// that needs the no-alias model; the exploration goes on until a kbuild run
// fails (and then Kbuild.First is that run) or the space is exhausted (and
// then Kbuild.First is nil and Complete is set), so that both verdicts are
// known when it stops. On every catalogue mutant at std's bound with C=1
// (M-push-barrier1 is killed there only under the no-alias model; the
// whole std bound is mutants.TestCatalogue's), the kbuild verdict is the
// alias-aware exploration's.
func TestStopAtFirstWaitsForKbuild(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every mutant under both models")
	}
	for _, mi := range fgraph.Catalogue {
		t.Run(mi.Name, func(t *testing.T) {
			sc := Standard(fgraph.Latest)
			sc.Mutant = mi.Mutant
			sc.Bound.C = 1
			s, err := Explore(sc, ExploreOptions{StopAtFirst: true})
			if err != nil {
				t.Fatal(err)
			}
			asc := *sc
			asc.Alias = true
			a, err := Explore(&asc, ExploreOptions{StopAtFirst: true})
			if err != nil {
				t.Fatal(err)
			}
			if (s.Kbuild.First != nil) != (a.First != nil) {
				t.Fatalf("killed under kbuild: default exploration %v, alias-aware %v", s.Kbuild.First != nil, a.First != nil)
			}
			switch {
			case s.Kbuild.First != nil:
				if !s.Kbuild.First.Kbuild() || !s.Kbuild.First.Failed() {
					t.Errorf("Kbuild.First is not a failing kbuild run: %+v", s.Kbuild.First)
				}
				if s.First == nil || s.First.Run > s.Kbuild.First.Run {
					t.Errorf("First (run %v) comes after Kbuild.First (run %d)", s.First, s.Kbuild.First.Run)
				}
				// The kbuild run replays under the alias-aware model with
				// the same verdict.
				res, err := Replay(&File{Scenario: &asc, Schedule: s.Kbuild.First.Schedule}, RunOptions{})
				if err != nil || !res.Failed() || res.Violations[0].Oracle != s.Kbuild.First.Violations[0].Oracle {
					t.Errorf("kbuild's first failing schedule does not fail the same way under --alias: %v %v", err, res)
				}
			case s.First != nil:
				if !s.Complete || s.First.Kbuild() || !s.First.Violations[0].AliasDependent {
					t.Errorf("killed only under no-alias, but complete %v, first run kbuild %v", s.Complete, s.First.Kbuild())
				}
			default:
				if !s.Complete {
					t.Errorf("survived, but the exploration is not complete")
				}
			}
		})
	}
}
