package properties

import (
	"math/rand/v2"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/fuzz"
	"github.com/fgcheck/fgcheck/harness"
)

// kill is how an engine did against one scenario: whether it found a
// violation within its budget, after how many harness runs and checks
// (generated test cases; equal to runs for the engines that run one
// schedule per case), and how long it took to the first failing run
// (shrinking excluded).
type kill struct {
	Killed bool
	Runs   int64
	Checks int64
	Time   time.Duration
	Msg    string
}

// engine runs one engine with a fixed seed and budget on sc.
type engine struct {
	Name   string
	Budget string
	Run    func(sc *harness.Scenario) kill
}

const (
	compareSeed   = 1
	sampleBudget  = 20000 // random, pct, fuzz-like: runs
	rapidBudgetN  = 2000  // rapid: checks
	gopterBudgetN = 2000  // gopter: tests
)

func summaryKill(s *harness.Summary, d time.Duration) kill {
	k := kill{Runs: s.Runs, Checks: s.Runs, Time: d}
	if s.First != nil {
		k.Killed, k.Msg = true, s.First.Violations[0].String()
	}
	return k
}

func reporterKill(rep *reporter) kill {
	k := kill{Runs: int64(rep.runs), Checks: int64(rep.checks), Time: time.Since(rep.start)}
	if rep.killCheck > 0 {
		k = kill{Killed: true, Runs: int64(rep.killRuns), Checks: int64(rep.killCheck), Time: rep.killTime, Msg: rep.first.Violations[0].String()}
	}
	return k
}

// rapidKill runs the rapid schedule property (a RapidChooser over the
// fixed scenario) for at most checks checks from seed.
func rapidKill(sc *harness.Scenario, checks int, seed uint64) kill {
	rep := newReporter("rapid", "budget", true)
	rapidBudget("budget", checks, seed, time.Millisecond, scheduleProp(sc, rep))
	return reporterKill(rep)
}

// rapidMachineKill runs the rapid state machine in fixed-program mode.
func rapidMachineKill(sc *harness.Scenario, checks int, seed uint64) kill {
	rep := newReporter("rapid", "budget", true)
	base := withMutant(sc, 0)
	rapidBudget("budget", checks, seed, time.Millisecond, machineProp(sc.Variant, sc.Mutant, base, rep))
	return reporterKill(rep)
}

// gopterKill runs the gopter commands property in fixed-program mode.
func gopterKill(sc *harness.Scenario, tests int, seed int64) kill {
	rep := gopterBudget(sc.Variant, sc.Mutant, withMutant(sc, 0), tests, seed)
	return reporterKill(rep)
}

// engines is the comparison's line-up, each with a fixed seed and budget.
func engines() []engine {
	return []engine{
		{"exhaustive", "whole space", func(sc *harness.Scenario) kill {
			st := time.Now()
			s, err := harness.Explore(sc, harness.ExploreOptions{StopAtFirst: true})
			if err != nil {
				panic(err)
			}
			return summaryKill(s, time.Since(st))
		}},
		{"random", "20000 runs", func(sc *harness.Scenario) kill {
			st := time.Now()
			s, err := harness.Sample(sc, compareSeed, sampleBudget, "random", harness.ExploreOptions{StopAtFirst: true})
			if err != nil {
				panic(err)
			}
			return summaryKill(s, time.Since(st))
		}},
		{"pct", "20000 runs", func(sc *harness.Scenario) kill {
			st := time.Now()
			s, err := harness.Sample(sc, compareSeed, sampleBudget, "pct", harness.ExploreOptions{StopAtFirst: true})
			if err != nil {
				panic(err)
			}
			return summaryKill(s, time.Since(st))
		}},
		{"fuzz-like", "20000 runs", func(sc *harness.Scenario) kill { return fuzzLikeKill(sc, sampleBudget, compareSeed) }},
		{"rapid", "2000 checks", func(sc *harness.Scenario) kill { return rapidKill(sc, rapidBudgetN, compareSeed) }},
		{"rapid-sm", "2000 checks", func(sc *harness.Scenario) kill { return rapidMachineKill(sc, rapidBudgetN, compareSeed) }},
		{"gopter", "2000 tests", func(sc *harness.Scenario) kill { return gopterKill(sc, gopterBudgetN, compareSeed) }},
	}
}

// nonControl lists the catalogue's non-control mutants.
func nonControl() []fgraph.MutantInfo {
	var out []fgraph.MutantInfo
	for _, mi := range fgraph.Catalogue {
		if !mi.Control {
			out = append(out, mi)
		}
	}
	return out
}

// fuzzLikeKill is the "fuzz-like" engine: the bytes chooser of fuzz/
// (fuzz.Chooser, the one FuzzSchedule uses) fed from a seeded PRNG stream,
// one fresh random stream and density per run. It is not go's fuzzing
// driver: no coverage guidance and no corpus, only the decoder under
// uniformly random input, which is what the driver mutates from.
func fuzzLikeKill(sc *harness.Scenario, runs int, seed uint64) kill {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	buf := make([]byte, 512)
	st := time.Now()
	for i := 1; i <= runs; i++ {
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		res, err := harness.Run(sc, fuzz.NewChooser(buf, 1+rng.IntN(8)), harness.RunOptions{})
		if err != nil {
			panic(err)
		}
		if res.Failed() {
			return kill{Killed: true, Runs: int64(i), Checks: int64(i), Time: time.Since(st), Msg: res.Violations[0].String()}
		}
	}
	return kill{Runs: int64(runs), Checks: int64(runs), Time: time.Since(st)}
}
