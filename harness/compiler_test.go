package harness

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// tinyOutcomes runs a tiny program of raw shim accesses in the task context
// under every choice the compiler model allows (DFS, R=limit regions) and
// returns the distinct sequences of commits each run made, as strings.
func tinyOutcomes(t *testing.T, alias bool, prog func(r *runner)) []string {
	t.Helper()
	return tinyExplore(t, alias, prog, func(*runner) string { return "" })
}

// tinyExplore is tinyOutcomes with each run's sequence prefixed by
// label(r) at the run's end.
func tinyExplore(t *testing.T, alias bool, prog func(r *runner), label func(r *runner) string) []string {
	t.Helper()
	sc := &Scenario{Name: "tiny", Variant: fgraph.Latest, StackWords: 64, Tasks: [][]Op{{}},
		Bound: Bound{R: 4}, Alias: alias}
	r, err := newRunner(sc)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	d := &dfs{zero: true}
	for {
		r.reset()
		r.ch, r.opt, r.res = d, RunOptions{NoOracles: true}, &Result{}
		r.tr = &tracer{}
		r.m.SetHooks(r)
		r.ctxs = append(r.ctxs[:0], r.taskCt[0])
		prog(r)
		var commits []string
		for _, l := range TraceText(r.tr.events) {
			if i := strings.Index(l, "commit "); i >= 0 {
				commits = append(commits, strings.Fields(l[i:])[1])
			}
			if i := strings.Index(l, "drop "); i >= 0 {
				commits = append(commits, "-"+strings.Fields(l[i:])[1])
			}
		}
		seen[label(r)+strings.Join(commits, " ")] = true
		if !d.next() {
			break
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Sites used as labels for the tiny programs.
var (
	sA = fgraph.SitePushW1
	sB = fgraph.SitePushW2
	sC = fgraph.SitePushW4
)

func TestCompilerModelRules(t *testing.T) {
	w := func(r *runner, i int) fgraph.Addr { return r.m.WordAddr(0, i) }
	curr := func(r *runner) fgraph.Addr { return r.m.TaskBase(0) + fgraph.TaskCurr }
	tests := []struct {
		name   string
		reason string
		alias  bool
		prog   func(r *runner)
		want   []string
	}{
		{
			name:   "plain-different-addresses",
			reason: "plain stores to different addresses may commit in either order",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Plain)
				r.Store(sB, w(r, 2), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"push.w1 push.w2", "push.w2 push.w1"},
		},
		{
			name:   "same-address",
			reason: "two stores to one address keep program order; the first is dead and may be dropped",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Plain)
				r.Store(sB, w(r, 1), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"-push.w1 push.w2", "push.w1 push.w2"},
		},
		{
			name:   "once-once",
			reason: "ONCE accesses keep program order among themselves",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Once)
				r.Store(sB, w(r, 2), 2, fgraph.Once)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"push.w1 push.w2"},
		},
		{
			name:   "plain-across-once",
			reason: "a plain store may move across ONCE stores, which stay ordered",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Once)
				r.Store(sB, w(r, 2), 2, fgraph.Once)
				r.Store(sC, w(r, 3), 3, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"push.w1 push.w2 push.w4", "push.w1 push.w4 push.w2", "push.w4 push.w1 push.w2"},
		},
		{
			name:   "barrier",
			reason: "a barrier ends the region: nothing moves across it",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
				r.Store(sB, w(r, 2), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"push.w1 push.w2"},
		},
		{
			name:   "one-order-per-static-region",
			reason: "one binary has one order per static region: the second instance repeats the first's",
			prog: func(r *runner) {
				for i := 0; i < 2; i++ {
					r.Store(sA, w(r, 1+2*i), 1, fgraph.Plain)
					r.Store(sB, w(r, 2+2*i), 2, fgraph.Plain)
					r.Fence(fgraph.SiteNone, fgraph.Barrier)
				}
			},
			want: []string{"push.w1 push.w2 push.w1 push.w2", "push.w2 push.w1 push.w2 push.w1"},
		},
		{
			name:   "alias-word-and-field",
			reason: "with alias analysis a ret_stack word store keeps its order against a task-field store",
			alias:  true,
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Plain)
				r.Store(sB, curr(r), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"push.w1 push.w2"},
		},
		{
			name:   "no-alias-word-and-field",
			reason: "without alias knowledge (the default) the same two stores may swap",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Plain)
				r.Store(sB, curr(r), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"push.w1 push.w2", "push.w2 push.w1"},
		},
	}
	for _, tc := range tests {
		if tc.reason == "" {
			t.Fatalf("%s: no reason", tc.name)
		}
		t.Run(tc.name, func(t *testing.T) {
			got := tinyOutcomes(t, tc.alias, tc.prog)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("outcomes %q, want %q\nreason: %s", got, tc.want, tc.reason)
			}
		})
	}
}

func TestOwnContextForwarding(t *testing.T) {
	r := tinyTaskRunner(t, false)
	a := r.m.WordAddr(0, 5)
	r.Store(sA, a, 42, fgraph.Plain)
	if got := r.Load(sB, a, fgraph.Plain); got != 42 {
		t.Errorf("own load after a buffered store = %d, want 42 (forwarded)", got)
	}
	if r.m.Mem[a] != 0 {
		t.Errorf("memory holds %d before the region ends, want 0: other contexts must not see it", r.m.Mem[a])
	}
	r.Fence(fgraph.SiteNone, fgraph.Barrier)
	if r.m.Mem[a] != 42 {
		t.Errorf("memory holds %d after the barrier, want 42", r.m.Mem[a])
	}
}

func TestRereadSeesRemoteChange(t *testing.T) {
	r := tinyTaskRunner(t, false)
	a := fgraph.AddrArray + 3
	r.m.Mem[a] = 7
	first := r.Load(fgraph.SiteEnterArray, a, fgraph.Plain)
	r.m.Mem[a] = fgraph.HandleStub // another CPU stores the stub in between
	if got := r.Reread(fgraph.SiteEnterArrayUse, a, first); got != fgraph.HandleStub {
		t.Errorf("re-read of a plain load used twice = %d, want the new value %d", got, fgraph.HandleStub)
	}
}

// TestRereadWhereTheCompilerMay: a further use of a plain load is a
// re-load only where the compiler may make one (docs/fidelity.md, "Loads by
// kind"): not after a region boundary, not after the context's own store to
// the word, and with alias not after any store of the context's region.
func TestRereadWhereTheCompilerMay(t *testing.T) {
	a := fgraph.AddrArray + 3
	other := fgraph.AddrArray + 5
	cases := []struct {
		name, reason string
		alias        bool
		between      func(r *runner)
		reloads      bool
	}{
		{"nothing between", "the compiler may load the word again", false, func(*runner) {}, true},
		{"barrier", "barrier() clobbers memory: the value is kept in a register", false, func(r *runner) { r.Fence(fgraph.SiteNone, fgraph.Barrier) }, false},
		{"opaque call", "a call to an unknown function may write the word", false, func(r *runner) { r.Fence(fgraph.SiteEnterCall, fgraph.CallIn) }, false},
		{"atomic", "atomic_inc is an asm with a memory clobber", false, func(r *runner) { r.AtomicAdd(fgraph.SitePushOverrun, other, 1) }, false},
		{"own store to the word", "a re-load would read the context's own store", false, func(r *runner) { r.Store(fgraph.SiteRegister, a, 9, fgraph.Plain) }, false},
		{"own store elsewhere", "kbuild must assume the store may alias the word, and the no-alias model keeps the value too (one rule for both: every kbuild run is a no-alias run; a keep-or-reload choice is not modelled)", false, func(r *runner) { r.Store(fgraph.SiteRegister, other, 9, fgraph.Plain) }, false},
		{"own store elsewhere, alias", "under -fno-strict-aliasing the store may alias the word", true, func(r *runner) { r.Store(fgraph.SiteRegister, other, 9, fgraph.Plain) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tinyTaskRunner(t, c.alias)
			r.m.Mem[a] = 7
			first := r.Load(fgraph.SiteEnterArray, a, fgraph.Plain)
			c.between(r)
			r.m.Mem[a] = fgraph.HandleStub // another CPU stores the stub
			got := r.Reread(fgraph.SiteEnterArrayUse, a, first)
			if reloaded := got == fgraph.HandleStub; reloaded != c.reloads {
				t.Errorf("re-read gave %d (re-loaded %v), want re-loaded %v: %s", got, reloaded, c.reloads, c.reason)
			}
		})
	}
	// A READ_ONCE is never recorded as a load that may be repeated.
	r := tinyTaskRunner(t, false)
	r.m.Mem[a] = 7
	first := r.Load(fgraph.SiteEnterArray, a, fgraph.Once)
	r.m.Mem[a] = fgraph.HandleStub
	if got := r.Reread(fgraph.SiteEnterArrayUse, a, first); got != first {
		t.Errorf("re-read of a READ_ONCE = %d, want the value it gave (%d)", got, first)
	}
}

// tinyRuns is tinyOutcomes with each run's commit sequence marked "kbuild"
// when the run is one of kbuild's model (Result.Kbuild: no order chosen
// that only the no-alias model allows), else "no-alias".
func tinyRuns(t *testing.T, alias bool, prog func(r *runner)) []string {
	t.Helper()
	return tinyExplore(t, alias, prog, func(r *runner) string {
		if r.aliasDep {
			return "no-alias: "
		}
		return "kbuild: "
	})
}

// TestKbuildRunsAreAliasRuns: the runs the no-alias model marks as
// kbuild's are exactly the runs of the alias-aware model, also where a
// region's later instance has a shape its first did not (the ranking is
// then applied under kbuild's constraints while the run is kbuild-legal).
// Each case lists the runs of the no-alias model, marked, and the alias
// model's must be its "kbuild" ones.
func TestKbuildRunsAreAliasRuns(t *testing.T) {
	w := func(r *runner, i int) fgraph.Addr { return r.m.WordAddr(0, i) }
	curr := func(r *runner) fgraph.Addr { return r.m.TaskBase(0) + fgraph.TaskCurr }
	depth := func(r *runner) fgraph.Addr { return r.m.TaskBase(0) + fgraph.TaskDepth }
	tests := []struct {
		name, reason string
		prog         func(r *runner)
		want         []string // the no-alias model's runs, marked
	}{
		{
			name:   "word-and-field",
			reason: "the swap of a word store and a task-field store is the no-alias model's alone",
			prog: func(r *runner) {
				r.Store(sA, w(r, 1), 1, fgraph.Plain)
				r.Store(sB, curr(r), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"kbuild: push.w1 push.w2", "no-alias: push.w2 push.w1"},
		},
		{
			name: "two-fields",
			reason: "two task fields may swap under kbuild too (-fno-strict-aliasing says nothing about " +
				"two distinct fields of one struct)",
			prog: func(r *runner) {
				r.Store(sA, curr(r), 1, fgraph.Plain)
				r.Store(sB, depth(r), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{"kbuild: push.w1 push.w2", "kbuild: push.w2 push.w1"},
		},
		{
			name: "later-instance-with-a-word",
			reason: "the first instance swaps two task fields (kbuild-legal); the second has a word store " +
				"between them, which kbuild keeps after the first field and before the second: applying " +
				"the ranking under the no-alias constraints would give w2 w1 w4 there, an order kbuild " +
				"cannot emit, in a run marked kbuild's",
			prog: func(r *runner) {
				r.Store(sA, curr(r), 1, fgraph.Plain)
				r.Store(sB, depth(r), 2, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
				r.Store(sA, curr(r), 3, fgraph.Plain)
				r.Store(sC, w(r, 1), 4, fgraph.Plain)
				r.Store(sB, depth(r), 5, fgraph.Plain)
				r.Fence(fgraph.SiteNone, fgraph.Barrier)
			},
			want: []string{
				"kbuild: push.w1 push.w2 push.w1 push.w4 push.w2",
				"kbuild: push.w2 push.w1 push.w1 push.w4 push.w2",
			},
		},
	}
	for _, tc := range tests {
		if tc.reason == "" {
			t.Fatalf("%s: no reason", tc.name)
		}
		t.Run(tc.name, func(t *testing.T) {
			got := tinyRuns(t, false, tc.prog)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("no-alias model's runs %q, want %q\nreason: %s", got, tc.want, tc.reason)
			}
			var kb []string
			for _, g := range got {
				if strings.HasPrefix(g, "kbuild: ") {
					kb = append(kb, g)
				}
			}
			if alias := tinyRuns(t, true, tc.prog); fmt.Sprint(alias) != fmt.Sprint(kb) {
				t.Errorf("the alias-aware model's runs %q, want the no-alias model's kbuild runs %q\nreason: %s", alias, kb, tc.reason)
			}
		})
	}
}

// tinyTaskRunner is a runner of a one-task scenario with no ops, reset,
// with the task's context on the CPU: the hooks can be called directly.
func tinyTaskRunner(t *testing.T, alias bool) *runner {
	t.Helper()
	sc := &Scenario{Name: "tiny", Variant: fgraph.Latest, StackWords: 64, Tasks: [][]Op{{}}, Alias: alias}
	r, err := newRunner(sc)
	if err != nil {
		t.Fatal(err)
	}
	r.reset()
	r.ch, r.res = noChoice{}, &Result{}
	r.ctxs = append(r.ctxs[:0], r.taskCt[0])
	return r
}
