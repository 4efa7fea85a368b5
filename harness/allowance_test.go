package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// corrupter is an Observer that, at the first commit of site at level,
// overwrites task 0's word with a bogus value, and puts it back at the next
// commit: a second fault, next to a known finding's and seen only by the
// check at the same yield point, that no allowance covers.
type corrupter struct {
	r           *runner
	site        fgraph.Site
	level, occ  int // the occ-th commit (from 1) of site at level
	word        int
	seen        int
	done, fixed bool
}

func (c *corrupter) Store(_ string, level int, s fgraph.Site, _ fgraph.Addr, _ fgraph.Word) {
	a := c.r.m.WordAddr(0, c.word)
	switch {
	case !c.done && s == c.site && level == c.level:
		if c.seen++; c.seen < c.occ {
			return
		}
		c.done = true
		c.r.m.Mem[a] ^= 0xdead0000
	case c.done && !c.fixed:
		c.fixed = true
		c.r.m.Mem[a] ^= 0xdead0000
	default:
		return
	}
	c.r.ver++ // the in-place oracles look again
}
func (c *corrupter) Fence(string, int, fgraph.Site, fgraph.Fence) {}
func (c *corrupter) Quiescent(*fgraph.Machine)                    {}

// TestAllowancesAreNarrow replays a corpus file of each known finding whose
// allowance is a window (not a message): as it is, the finding is excused
// and nothing else is reported; with one more word broken in the same window
// (a word the finding does not touch, which the same reader reaches), a
// violation is reported: the allowance excuses that window, that word and
// that reader, and nothing else.
func TestAllowancesAreNarrow(t *testing.T) {
	cases := []struct {
		file, known string
		// The second fault: at the occ-th commit of site at level, word
		// of task0 is broken (until the next commit).
		site       fgraph.Site
		level, occ int
		word       int
		why        string
	}{
		{"kernel-callchain-reads-irq-leftover-as-data-word", "reserve-window", fgraph.SiteReserveW2, 0, 2, fgraph.FieldRet,
			"f1's ret word broken as the raise lands: with the DATA word restored the callchain still reaches f1's frame and finds it wrong"},
		{"kernel-irq-push-over-discarded-tail-frame-stale-retp", "inflight-ret-addr", fgraph.SitePushW3, 1, 1, fgraph.FieldRet,
			"f1's ret word broken as the IRQ's frame goes in flight: with the in-flight frame rewritten the walk goes on to f1's slot and finds it wrong"},
		{"kernel-compiler-rewrites-data-word-before-reserve-raise", "reserve-reorder", fgraph.SiteUserPayload, 0, 1, fgraph.FieldFunc,
			"f1's func word broken while the compiler's order keeps the IRQ's word: with the DATA word restored the walker still finds f1's frame wrong"},
	}
	for _, tc := range cases {
		t.Run(tc.known, func(t *testing.T) {
			f := parseTestFile(t, "../corpus/"+tc.file+".txt")
			res := replayed(t, f, RunOptions{KeepGoing: true})
			if len(res.Violations) != 0 || !hasKnown(res, tc.known) {
				t.Fatalf("as it is: violations %v, known %v; want only %s", res.Violations, res.Known, tc.known)
			}
			c := &corrupter{site: tc.site, level: tc.level, occ: tc.occ, word: tc.word}
			res = replayed(t, f, RunOptions{KeepGoing: true, Observe: c, wrap: func(r *runner, ch Chooser) Chooser { c.r = r; return ch }})
			if !c.done {
				t.Fatalf("no commit of %s at level %d", tc.site, tc.level)
			}
			if len(res.Violations) == 0 {
				t.Errorf("%s: the second fault was excused as %v", tc.why, res.Known)
			}
		})
	}
}

// replayed replays f, failing the test on an error.
func replayed(t *testing.T, f *File, opt RunOptions) *Result {
	t.Helper()
	res, err := Replay(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// parseTestFile reads and parses a schedule file, failing the test on an
// error.
func parseTestFile(t *testing.T, path string) *File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(filepath.Base(path), b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func hasKnown(res *Result, name string) bool {
	for _, v := range res.Known {
		if v.Known == name {
			return true
		}
	}
	return false
}

// TestMessageAllowancesAreNarrow: a known finding whose allowance is a
// message matches that message and not its neighbour.
func TestMessageAllowancesAreNarrow(t *testing.T) {
	sc := Standard(fgraph.Latest)
	r, err := newRunner(sc)
	if err != nil {
		t.Fatal(err)
	}
	r.res = &Result{}
	cases := []struct {
		oracle, msg, want, why string
	}{
		{OracleCallback, "retfunc of user 1 (idx 0) ran for func 0xffffffff82000400, whose entry it never accepted (bitmap 0x3)", "F1-bit0", "BIT(0): the user at index 0"},
		{OracleCallback, "retfunc of user 1 (idx 1) ran for func 0xffffffff82000400, whose entry it never accepted (bitmap 0x3)", "", "index 1 is not BIT(0)'s"},
		{OracleCallback, "entryfunc of user 2 re-entered in the same context (level 0) for func 0xffffffff82000600: nested call 1, let through on TRACE_CTX_TRANSITION", "recursion-transition", "the one transition trace_recursion allows"},
		{OracleCallback, "entryfunc of user 2 re-entered in the same context (level 0) for func 0xffffffff82000600 (nested call 2)", "", "a second nesting is refused by the kernel"},
		{OracleRetAddr, "retfunc of user 1 (idx 0) ran for func 0xffffffff82000400, whose entry it never accepted (bitmap 0x3)", "", "F1-bit0 is a callback finding, not a ret-addr one"},
	}
	for _, tc := range cases {
		got := r.known(Violation{Oracle: tc.oracle, Msg: tc.msg})
		if got != tc.want {
			t.Errorf("%s: %q is known %q, want %q", tc.why, strings.TrimSpace(tc.msg), got, tc.want)
		}
	}
}

// TestAllowanceGaps replays schedules that bigger bounds than std's found
// reported as violations although they showed only known findings, each a
// gap in an allowance's counterfactual (now closed): each must pass with
// its findings known, and fail under --strict.
func TestAllowanceGaps(t *testing.T) {
	cases := []struct {
		file  string
		known []string
		why   string
	}{
		{"reserve-reorder-word-reused", []string{"reserve-reorder"},
			"C=3: a second clobbered word lay in a reservation the entry discarded and the tail call's frame reused; putting the reservation's value back broke f5's frame (the allowance forgets a word the code writes again)"},
		{"inflight-over-reorder-clobber", []string{"inflight-ret-addr", "reserve-reorder", "reserve-window"},
			"C=0: inflight-ret-addr's walk went on to a DATA word reserve-reorder left wrong, and reserve-reorder's to the in-flight frame; each counterfactual restored only its own words (they restore every open finding's now)"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			f := parseTestFile(t, "testdata/"+tc.file+".txt")
			res := replayed(t, f, RunOptions{KeepGoing: true})
			if len(res.Violations) != 0 {
				t.Fatalf("%s\nviolations %v", tc.why, res.Violations)
			}
			for _, k := range tc.known {
				if !hasKnown(res, k) {
					t.Errorf("known %v, want %s among them", res.Known, k)
				}
			}
			res = replayed(t, f, RunOptions{KeepGoing: true, Strict: true})
			if len(res.Violations) == 0 {
				t.Fatal("strict: no violation; the schedule no longer reaches the findings")
			}
		})
	}
}
