package mutants

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// Options configure Run. The zero value is valid: the whole catalogue on
// the latest variant, OrderNear, one worker per CPU, every failing
// schedule minimized.
type Options struct {
	// Variant is the baseline the mutants are applied to (zero: latest).
	Variant fgraph.Variant
	// Names selects catalogue entries by name, in any order (nil: all).
	// The report keeps catalogue order.
	Names []string
	// Workers is the number of explorations run at once (0:
	// runtime.GOMAXPROCS(0)). Each exploration is single-threaded.
	Workers int
	// Order is the exploration order (zero: OrderNear).
	Order Order
	// NoMinimize skips minimization; Result.ScheduleLines is then the
	// length of the schedule as found.
	NoMinimize bool
	// OnResult, if set, is called once per mutant as it finishes, in
	// completion order, never concurrently.
	OnResult func(Result)
	// Kernel, if set, gives the C form of a catalogue mutant
	// (ctarget.Mutants): a kernel tree's fgraph.c patched the same way,
	// as a target. Each such mutant is then also explored on the compiled
	// code (Result.C), one at a time after the port's catalogue (the
	// compiled code is one instance per process).
	Kernel func(name string) (harness.Target, error)
	// KernelVariant is the port variant whose arch glue drives the tree
	// (what fgcheck mutants --kernel sets to v6.12).
	KernelVariant fgraph.Variant

	_ struct{}
}

// Result is one mutant's verdict.
type Result struct {
	Name    string
	Origin  string
	Control bool
	// Reason says why a control must survive.
	Reason string
	// Killed: the exploration found a violation beyond the known findings
	// (under the no-alias model, whose runs include kbuild's).
	Killed bool
	// KilledKbuild: a run of kbuild's compiler model (alias-aware,
	// -fno-strict-aliasing) failed. Killed && !KilledKbuild is a kill
	// "only if the compiler can prove no alias" (Verdict).
	KilledKbuild bool
	// Oracle and Msg describe the kill: the first failing kbuild run's
	// first violation if there is one, else the first failing run's
	// (empty if survived).
	Oracle, Msg string
	// Seconds and Runs measure the exploration up to that kill, or the
	// whole exploration if the mutant survived.
	Seconds float64
	Runs    int64
	// SearchSeconds and SearchRuns measure the whole search: up to the
	// first failing kbuild run, or to the end of the bound when there is
	// none (a kill that needs the no-alias model does not settle kbuild's
	// verdict).
	SearchSeconds float64
	SearchRuns    int64
	// Complete reports that the exploration covered the bound (a
	// survivor's, or one killed only under the no-alias model).
	Complete bool
	// ScheduleLines is the length (events plus orders) of the minimized
	// failing schedule.
	ScheduleLines int
	// Found is the failing run as the exploration found it; Minimized is
	// the minimized file, with its story in comments (nil if survived).
	Found, Minimized *harness.File
	// Stats describe the minimization.
	Stats harness.MinimizeStats
	// C is the verdict on the compiled tree, nil when the mutant has no C
	// form or no tree was given.
	C *CResult
}

// CResult is a mutant's verdict on a kernel tree's compiled fgraph.c.
type CResult struct {
	Killed  bool
	Oracle  string
	Msg     string
	Seconds float64
	Runs    int64
	// Complete: a survivor's exploration covered std's bound.
	Complete bool
	// Found is the failing run (not minimized).
	Found *harness.File
}

// Report is the outcome of a catalogue run.
type Report struct {
	Variant fgraph.Variant
	Order   Order
	// Mutants are the results, in catalogue order.
	Mutants []Result
	// Killed and Total count non-control mutants only; KilledKbuild
	// counts those of Killed killed under kbuild's compiler model (the
	// rest are killed only if the compiler can prove no alias).
	Killed, Total int
	KilledKbuild  int
	// Seconds is the wall time of the whole run.
	Seconds float64
}

// Run explores every selected catalogue entry and reports. Errors are
// misuse: an unknown mutant name, a scenario that does not validate.
func Run(opt Options) (*Report, error) {
	var infos []fgraph.MutantInfo
	if opt.Names == nil {
		infos = fgraph.Catalogue
	} else {
		want := map[fgraph.Mutant]bool{}
		for _, n := range opt.Names {
			mi, err := fgraph.LookupMutant(n)
			if err != nil {
				return nil, err
			}
			want[mi.Mutant] = true
		}
		for _, mi := range fgraph.Catalogue {
			if want[mi.Mutant] {
				infos = append(infos, mi)
			}
		}
	}
	if opt.Order > OrderIDDFS {
		return nil, fmt.Errorf("unknown exploration order %d", opt.Order)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	rep := &Report{Variant: opt.Variant, Order: opt.Order, Mutants: make([]Result, len(infos))}
	// Controls cost a whole exploration: start them first, so that the
	// short kills fill the gaps at the end.
	var queue []int
	for pass := range 2 {
		for i, mi := range infos {
			if mi.Control == (pass == 0) {
				queue = append(queue, i)
			}
		}
	}
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				res, err := runOne(infos[i], opt)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				rep.Mutants[i] = res
				if err == nil && opt.OnResult != nil {
					opt.OnResult(res)
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range queue {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if opt.Kernel != nil {
		for i := range rep.Mutants {
			m := &rep.Mutants[i]
			if _, ok := ctarget.LookupMutant(m.Name); !ok {
				continue
			}
			c, err := runC(m.Name, opt)
			if err != nil {
				return nil, err
			}
			m.C = c
			if opt.OnResult != nil {
				opt.OnResult(*m)
			}
		}
	}
	for _, r := range rep.Mutants {
		if r.Control {
			continue
		}
		rep.Total++
		if r.Killed {
			rep.Killed++
		}
		if r.KilledKbuild {
			rep.KilledKbuild++
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// runC explores std on the tree patched with the C form of mutant name,
// stopping at the first violation.
func runC(name string, opt Options) (*CResult, error) {
	t, err := opt.Kernel(name)
	if err != nil {
		return nil, fmt.Errorf("mutant %s on the tree: %v", name, err)
	}
	sc := harness.Standard(opt.KernelVariant)
	sc.Target = t
	t0 := time.Now()
	out, err := explore(sc, opt.Order, true)
	c := &CResult{Seconds: time.Since(t0).Seconds()}
	if err != nil {
		return nil, fmt.Errorf("mutant %s on the tree: %v", name, err)
	}
	c.Runs, c.Complete = out.runs, out.complete
	if out.first != nil {
		v := out.first.Violations[0]
		c.Killed, c.Oracle, c.Msg = true, v.Oracle, v.Msg
		c.Found = &harness.File{Scenario: sc, Schedule: out.first.Schedule, Expect: &harness.Expect{Oracle: v.Oracle}}
	}
	return c, nil
}

// Scenario is the scenario a mutant is explored in: harness.Standard on
// variant v with the mutant on.
func Scenario(mi fgraph.MutantInfo, v fgraph.Variant) *harness.Scenario {
	sc := harness.Standard(v)
	sc.Mutant = mi.Mutant
	return sc
}

func runOne(mi fgraph.MutantInfo, opt Options) (Result, error) {
	res := Result{Name: mi.Name, Origin: mi.Origin, Control: mi.Control, Reason: mi.Reason}
	sc := Scenario(mi, opt.Variant)
	t0 := time.Now()
	out, err := explore(sc, opt.Order, true)
	res.SearchSeconds = time.Since(t0).Seconds()
	if err != nil {
		return res, fmt.Errorf("mutant %s: %v", mi.Name, err)
	}
	res.SearchRuns, res.Complete = out.runs, out.complete
	res.Runs, res.Seconds = res.SearchRuns, res.SearchSeconds
	kill := out.firstK
	switch {
	case kill != nil:
		res.KilledKbuild = true
		res.Runs, res.Seconds = out.kRuns, out.kAt.Seconds()
	case out.first != nil:
		kill = out.first
		res.Runs, res.Seconds = out.firstRuns, out.firstAt.Seconds()
	default:
		return res, nil
	}
	v := kill.Violations[0]
	res.Killed, res.Oracle, res.Msg = true, v.Oracle, v.Msg
	res.Found = &harness.File{Scenario: sc, Schedule: kill.Schedule, Expect: &harness.Expect{Oracle: v.Oracle}}
	res.ScheduleLines = kill.Schedule.Len()
	if opt.NoMinimize {
		return res, nil
	}
	if err := PassesBaselines(res.Found); err != nil {
		return res, fmt.Errorf("mutant %s: not a kill: %v", mi.Name, err)
	}
	keep := func(f *harness.File) bool {
		if PassesBaselines(f) != nil {
			return false
		}
		if !res.KilledKbuild {
			return true
		}
		// A kill under kbuild stays one: the smaller schedule must fail
		// in a run of kbuild's model too.
		r, err := harness.Replay(f, harness.RunOptions{})
		return err == nil && r.Failed() && r.Kbuild()
	}
	small, st, err := harness.Minimize(res.Found, harness.MinimizeOptions{Keep: keep})
	if err != nil {
		return res, fmt.Errorf("mutant %s: %v", mi.Name, err)
	}
	res.Stats = st
	res.ScheduleLines = st.After.Lines()
	small.Comments = story(res, opt)
	res.Minimized = small
	return res, nil
}

// Baselines are the scenarios a mutant's failing schedule must pass on, so
// that the failure is the mutant's and nothing else's: the same scenario
// with the mutant off on every kernel variant (latest, v6.11, seed), plus,
// when the mutant implies fixes (F1 no-bit0, F10 entry-for-all), the
// scenario's own variant with those fixes on. For a scenario without a
// mutant they are the scenario on every kernel variant.
func Baselines(sc *harness.Scenario) []*harness.Scenario {
	var out []*harness.Scenario
	for _, v := range fgraph.Variants() {
		b := *sc
		b.Mutant, b.Variant = 0, v
		out = append(out, &b)
	}
	if sc.Mutant != 0 {
		mi := sc.Mutant.Info()
		if mi.NoBit0 || mi.GenCounter || mi.EntryForAll {
			b := *sc
			b.Mutant = 0
			b.Fixes.NoBit0 = b.Fixes.NoBit0 || mi.NoBit0
			b.Fixes.GenCounter = b.Fixes.GenCounter || mi.GenCounter
			b.Fixes.EntryForAll = b.Fixes.EntryForAll || mi.EntryForAll
			out = append(out, &b)
		}
	}
	return out
}

// PassesBaselines replays f's schedule on every baseline of its scenario
// (non-strict: known findings are allowed) and returns the first
// violation, or nil.
func PassesBaselines(f *harness.File) error {
	for _, b := range Baselines(f.Scenario) {
		res, err := harness.Replay(&harness.File{Scenario: b, Schedule: f.Schedule}, harness.RunOptions{})
		if err != nil {
			return fmt.Errorf("baseline %s: %v", describeBaseline(b), err)
		}
		if res.Failed() {
			return fmt.Errorf("the schedule fails without the mutant too, on %s: %v", describeBaseline(b), res.Violations[0])
		}
	}
	return nil
}

func describeBaseline(b *harness.Scenario) string {
	s := b.Variant.String()
	if b.Fixes.NoBit0 {
		s += "+no-bit0"
	}
	if b.Fixes.GenCounter {
		s += "+gen-counter"
	}
	if b.Fixes.EntryForAll {
		s += "+entry-for-all"
	}
	return s
}
