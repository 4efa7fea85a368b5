package properties

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"pgregory.net/rapid"
)

var (
	gopterTests = flag.Int("gopter.tests", 100, "gopter: number of successful tests per property (the CI props job raises it)")
	gopterSeed  = flag.Int64("gopter.seed", 0, "gopter: seed to start with (0: from the clock; printed on failure)")
)

// wide widens the generated scenarios beyond what the harness has triaged:
// fully generated users and remote actions in the state machine, and
// unregistering the last user in the differential property. The
// counterexamples it finds today are in testdata/triage/ and the report in
// docs/engines.md.
var wide = flag.Bool("fgcheck.wide", os.Getenv("FGCHECK_WIDE") != "", "generate scenarios beyond the triaged space (also FGCHECK_WIDE=1)")

var variants = []fgraph.Variant{fgraph.Latest, fgraph.V611, fgraph.Seed}

// fixedScenarios are the written-down scenarios of variant v.
func fixedScenarios(v fgraph.Variant) []*harness.Scenario {
	return []*harness.Scenario{harness.Standard(v), harness.PeerSpin(v)}
}

// withMutant returns a copy of sc with mutant m.
func withMutant(sc *harness.Scenario, m fgraph.Mutant) *harness.Scenario {
	c := *sc
	c.Mutant = m
	return &c
}

// scenarioName names a subtest: "latest-std", "v6.11-peer-spin+M-push-1".
func scenarioName(sc *harness.Scenario) string {
	s := sc.Variant.String() + "-" + sc.Name
	if sc.Mutant != 0 {
		s += "+" + sc.Mutant.String()
	}
	return s
}

// flips picks a RapidChooser's Flips for a fixed scenario: about as many
// injections per run as the bound allows.
func flipsFor(sc *harness.Scenario) int {
	res, err := harness.Run(sc, harness.ChooserFunc(func(*harness.Point, []harness.Option) int { return 0 }), harness.RunOptions{NoOracles: true})
	if err != nil {
		panic(err)
	}
	want := sc.Bound.K + sc.Bound.E
	if sc.Bound.C > 0 {
		want = min(want, sc.Bound.C)
	}
	return PointsFlips(res.Points, want)
}

// reporter is shared by the rapid and gopter properties: it counts runs and
// checks, remembers the first kill, and writes and prints failures.
type reporter struct {
	engine string
	test   string
	quiet  bool // count only: no files, no logs (kill tests, comparison)

	mu        sync.Mutex
	path      string
	start     time.Time
	checks    int
	runs      int
	remotes   int // remote actions delivered (differential vacuity)
	killCheck int // check of the first failing run (1-based), 0: none
	killRuns  int
	killTime  time.Duration
	first     *harness.Result
	last      *Failure // the latest failure (after shrinking: the minimal one)
}

func newReporter(engine, test string, quiet bool) *reporter {
	return &reporter{engine: engine, test: test, quiet: quiet, start: time.Now()}
}

// begin counts one check (one generated test case).
func (r *reporter) begin() {
	r.mu.Lock()
	r.checks++
	r.mu.Unlock()
}

// run runs sc under ch and counts it.
func (r *reporter) run(sc *harness.Scenario, ch harness.Chooser) (*harness.Result, error) {
	r.mu.Lock()
	r.runs++
	r.mu.Unlock()
	return harness.Run(sc, ch, harness.RunOptions{})
}

// fail records a failing run and, unless quiet, writes its schedule file
// and returns the report text.
func (r *reporter) fail(sc *harness.Scenario, res *harness.Result, notes ...string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.killCheck == 0 {
		r.killCheck, r.killRuns, r.killTime, r.first = r.checks, r.runs, time.Since(r.start), res
	}
	f := &Failure{Engine: r.engine, Test: r.test, Scenario: sc, Result: res, Notes: notes}
	r.last = f
	if r.quiet {
		return res.Violations[0].String()
	}
	if r.path == "" {
		r.path = FailPath(r.test)
	}
	text, _ := f.Write(r.path)
	return text
}

// runPattern is the -run pattern that selects exactly the test name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// rapidCheck runs prop with rapid.Check and, if the test fails, logs the
// exact commands that reproduce it: the rapid fail file rapid just wrote
// and the schedule file the reporter wrote.
func rapidCheck(t *testing.T, rep *reporter, prop func(*rapid.T)) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var b strings.Builder
		b.WriteString("[fgcheck] to reproduce:\n")
		pat := filepath.Join("testdata", "rapid", SafeName(t.Name()), SafeName(t.Name())+"-*.fail")
		files, _ := filepath.Glob(pat)
		sort.Strings(files)
		if len(files) > 0 {
			fmt.Fprintf(&b, "  go test ./properties -run '%s' -rapid.failfile=%s\n", runPattern(t.Name()), files[len(files)-1])
		} else {
			fmt.Fprintf(&b, "  go test ./properties -run '%s'   (plus -rapid.seed=N as printed above)\n", runPattern(t.Name()))
		}
		if rep.path != "" {
			fmt.Fprintf(&b, "  fgcheck replay properties/%s\n", rep.path)
		}
		t.Log(b.String())
	})
	rapid.Check(t, prop)
}

// captureTB is a rapid.TB that records a failure instead of failing the
// test: it lets a test assert that a property does fail (on a mutant).
type captureTB struct {
	name   string
	failed bool
	log    strings.Builder
}

func (c *captureTB) Helper()                           {}
func (c *captureTB) Name() string                      { return c.name }
func (c *captureTB) Logf(format string, args ...any)   { fmt.Fprintf(&c.log, format+"\n", args...) }
func (c *captureTB) Log(args ...any)                   { fmt.Fprintln(&c.log, args...) }
func (c *captureTB) Skipf(format string, args ...any)  { c.Logf(format, args...) }
func (c *captureTB) Skip(args ...any)                  { c.Log(args...) }
func (c *captureTB) SkipNow()                          {}
func (c *captureTB) Errorf(format string, args ...any) { c.failed = true; c.Logf(format, args...) }
func (c *captureTB) Error(args ...any)                 { c.failed = true; c.Log(args...) }
func (c *captureTB) Fatalf(format string, args ...any) { c.failed = true; c.Logf(format, args...) }
func (c *captureTB) Fatal(args ...any)                 { c.failed = true; c.Log(args...) }
func (c *captureTB) FailNow()                          { c.failed = true }
func (c *captureTB) Fail()                             { c.failed = true }
func (c *captureTB) Failed() bool                      { return c.failed }

// rapidFlagsMu serialises the tests that set rapid's (global) flags.
var rapidFlagsMu sync.Mutex

// withRapidFlags runs f with rapid's command-line flags set as given, and
// restores them afterwards.
func withRapidFlags(set map[string]string, f func()) {
	rapidFlagsMu.Lock()
	defer rapidFlagsMu.Unlock()
	old := map[string]string{}
	for k, v := range set {
		fl := flag.Lookup(k)
		if fl == nil {
			panic("no flag " + k)
		}
		old[k] = fl.Value.String()
		if err := flag.Set(k, v); err != nil {
			panic(err)
		}
	}
	defer func() {
		for k, v := range old {
			_ = flag.Set(k, v)
		}
	}()
	f()
}

// rapidBudget runs prop with rapid for at most checks checks from a fixed
// seed, capturing the outcome: whether it failed, and rapid's report.
// Shrinking is bounded by shrink.
func rapidBudget(name string, checks int, seed uint64, shrink time.Duration, prop func(*rapid.T)) (failed bool, log string) {
	if testing.Short() {
		checks *= 5 // rapid divides -rapid.checks by 5 under -short
	}
	tb := &captureTB{name: name}
	withRapidFlags(map[string]string{
		"rapid.checks":     fmt.Sprint(checks),
		"rapid.seed":       fmt.Sprint(seed),
		"rapid.nofailfile": "true",
		"rapid.shrinktime": shrink.String(),
		"rapid.steps":      "30",
	}, func() {
		rapid.Check(tb, prop)
	})
	return tb.failed, tb.log.String()
}
