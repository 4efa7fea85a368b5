package differential

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// Options tune a differential run.
type Options struct {
	// MaxRuns caps the schedules compared (0: the whole bounded space).
	MaxRuns int64
	// Keep is how many divergences to keep in full (default 5).
	Keep int
}

// Divergence is one schedule on which the port and the C differ.
type Divergence struct {
	Run      int64
	Schedule harness.Schedule
	What     string
}

// Report is the outcome of one scenario.
type Report struct {
	Scenario string
	Variant  fgraph.Variant
	// Runs is the schedules explored on the C and replayed on the port.
	Runs int64
	// Complete: the C's bounded space was explored in full.
	Complete bool
	// Divergent counts the schedules on which the two differ; Divergences
	// keeps the first of them.
	Divergent   int64
	Divergences []Divergence
	// Unreplayable counts the C schedules that inject an event at a
	// position the port never reaches (a yield point only the compiled
	// code has); First names the first such position.
	Unreplayable int64
	FirstUnplay  string
	// Reordered counts regions whose stores the two made in a different
	// order but with the same (address, value) pairs: the compiler's
	// order, not a divergence.
	Reordered int64
	// Violations of each side (the C explored, the port replayed).
	CViolations, PortViolations int64
	// CKnown are the known findings on the C.
	CKnown map[string]int64
}

// Baseline is sc as the differential runs it on variant v: its port mutant
// and fix options off (the compiled tree has neither), named name plus what
// was switched off.
func Baseline(sc *harness.Scenario, name string, v fgraph.Variant) *harness.Scenario {
	b := *sc
	b.Name, b.Variant = name, v
	var off []string
	if b.Mutant != 0 {
		off = append(off, "mutant "+b.Mutant.String())
		b.Mutant = 0
	}
	if b.Fixes != (harness.Fixes{}) {
		off = append(off, "fixes")
		b.Fixes = harness.Fixes{}
	}
	if len(off) > 0 {
		b.Name += " (" + strings.Join(off, ", ") + " off)"
	}
	return &b
}

// Run explores sc on target and holds the port variant sc.Variant to it.
func Run(sc *harness.Scenario, target harness.Target, opt Options) (*Report, error) {
	if opt.Keep == 0 {
		opt.Keep = 5
	}
	cs, ps := *sc, *sc
	cs.Target, ps.Target = target, nil
	l, _ := target.(liner)
	rc, rp := newRecorder(l), newRecorder(nil)
	rep := &Report{Scenario: sc.Name, Variant: sc.Variant}
	var runErr error
	sum, err := harness.Explore(&cs, harness.ExploreOptions{
		Workers:    1,
		MaxRuns:    opt.MaxRuns,
		RunOptions: harness.RunOptions{Observe: rc},
		OnRun: func(res *harness.Result) {
			defer rc.reset()
			rep.Runs++
			rp.reset()
			pres, err := harness.Run(&ps, harness.NewReplay(&ps, res.Schedule), harness.RunOptions{Observe: rp, InOrder: true})
			if err != nil {
				runErr = err
				return
			}
			if pres.Failed() {
				rep.PortViolations++
			}
			if len(pres.Schedule.Events) != len(res.Schedule.Events) {
				rep.Unreplayable++
				if rep.FirstUnplay == "" {
					rep.FirstUnplay = unreached(res.Schedule, pres.Schedule)
				}
				return
			}
			what, reordered := compare(rc, rp)
			rep.Reordered += reordered
			if what != "" {
				rep.Divergent++
				if len(rep.Divergences) < opt.Keep {
					rep.Divergences = append(rep.Divergences, Divergence{Run: rep.Runs, Schedule: res.Schedule, What: what})
				}
			}
		},
	})
	if err != nil {
		return nil, err
	}
	if runErr != nil {
		return nil, runErr
	}
	rep.Complete = sum.Complete
	rep.CViolations = sum.Violations
	rep.CKnown = sum.Known
	return rep, nil
}

// unreached names the first event of want that got did not inject.
func unreached(want, got harness.Schedule) string {
	for _, e := range want.Events {
		found := false
		for _, g := range got.Events {
			found = found || (g.In == e.In && g.At == e.At && g.Kind == e.Kind)
		}
		if !found {
			return fmt.Sprintf("%s in=%s at=%s", e.Kind, e.In, e.At)
		}
	}
	return "?"
}

// compare returns the first difference between the C run c and the port
// run p ("" if none), and how many regions differ only in order.
func compare(c, p *recorder) (string, int64) {
	var reordered int64
	n := min(len(c.regions), len(p.regions))
	for i := 0; i < n; i++ {
		a, b := &c.regions[i], &p.regions[i]
		if a.Ctx != b.Ctx {
			return fmt.Sprintf("region %d: the C's is in %s, the port's in %s", i, a.Ctx, b.Ctx), reordered
		}
		if equalStores(a.Stores, b.Stores) {
			continue
		}
		if sameSet(a.Stores, b.Stores) {
			reordered++
			continue
		}
		return fmt.Sprintf("region %d of %s (ending at %s %s on the C, %s %s on the port): stores differ\n  C:    %s\n  port: %s",
			i, a.Ctx, a.End, a.Site, b.End, b.Site, storesText(a.Stores), storesText(b.Stores)), reordered
	}
	if len(c.regions) != len(p.regions) {
		extra := c.regions
		who := "C"
		if len(p.regions) > len(c.regions) {
			extra, who = p.regions, "port"
		}
		g := extra[n]
		return fmt.Sprintf("%d regions on the C, %d on the port; the %s's region %d (%s) is extra: %s",
			len(c.regions), len(p.regions), who, n, g.Ctx, storesText(g.Stores)), reordered
	}
	if len(c.snaps) != len(p.snaps) {
		return fmt.Sprintf("%d quiescent points on the C, %d on the port", len(c.snaps), len(p.snaps)), reordered
	}
	for i := range c.snaps {
		if d := diffSnap(&c.snaps[i], &p.snaps[i]); d != "" {
			return fmt.Sprintf("quiescent point %d: %s", i, d), reordered
		}
	}
	return "", reordered
}

func equalStores(a, b []store) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Addr != b[i].Addr || a[i].Val != b[i].Val {
			return false
		}
	}
	return true
}

func sameSet(a, b []store) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(s store) [2]uint64 { return [2]uint64{uint64(s.Addr), uint64(s.Val)} }
	x, y := make([][2]uint64, len(a)), make([][2]uint64, len(b))
	for i := range a {
		x[i], y[i] = key(a[i]), key(b[i])
	}
	cmp := func(p, q [2]uint64) int {
		if p[0] != q[0] {
			return int(int64(p[0]) - int64(q[0]))
		}
		switch {
		case p[1] < q[1]:
			return -1
		case p[1] > q[1]:
			return 1
		}
		return 0
	}
	slices.SortFunc(x, cmp)
	slices.SortFunc(y, cmp)
	return slices.Equal(x, y)
}

func storesText(s []store) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = x.String()
	}
	return strings.Join(parts, "; ")
}

func diffSnap(c, p *snapshot) string {
	// The log is compared context level by context level: a callback of
	// an interrupt and one of the context it interrupted are appended in
	// the order they finish, which depends on whether the interrupted
	// user's last store was buffered (the port) or made at once (the C).
	for lv := 0; lv < 8; lv++ {
		a, b := atLevel(c.Log, lv), atLevel(p.Log, lv)
		for i := 0; i < max(len(a), len(b)); i++ {
			switch {
			case i >= len(a):
				return fmt.Sprintf("callback log at level %d: the port has %+v more", lv, b[i])
			case i >= len(b):
				return fmt.Sprintf("callback log at level %d: the C has %+v more", lv, a[i])
			case !reflect.DeepEqual(a[i], b[i]):
				return fmt.Sprintf("callback log at level %d, record %d: C %+v, port %+v", lv, i, a[i], b[i])
			}
		}
	}
	for t := range c.Tasks {
		a, b := &c.Tasks[t], &p.Tasks[t]
		ia, ib := a.Image, b.Image
		switch {
		case ia.HasStack != ib.HasStack || ia.Curr != ib.Curr || ia.Depth != ib.Depth || ia.Overrun != ib.Overrun:
			return fmt.Sprintf("task%d: ret_stack %v curr_ret_stack %d depth %d overrun %d on the C; %v %d %d %d on the port",
				t, ia.HasStack, ia.Curr, ia.Depth, ia.Overrun, ib.HasStack, ib.Curr, ib.Depth, ib.Overrun)
		case ia.HasStack:
			for i := range ia.Words {
				if i < len(ib.Words) && ia.Words[i] != ib.Words[i] {
					return fmt.Sprintf("task%d: ret_stack[%d] = %#x on the C, %#x on the port", t, i, ia.Words[i], ib.Words[i])
				}
			}
		}
		if !slices.Equal(a.RetAddr, b.RetAddr) {
			return fmt.Sprintf("task%d: ftrace_graph_ret_addr over the hijacked slots: %#x on the C, %#x on the port", t, a.RetAddr, b.RetAddr)
		}
		if !slices.Equal(a.Frames, b.Frames) {
			return fmt.Sprintf("task%d: ftrace_graph_get_ret_stack: %+v on the C, %+v on the port", t, a.Frames, b.Frames)
		}
	}
	return ""
}

func atLevel(log []fgraph.Record, lv int) []fgraph.Record {
	var out []fgraph.Record
	for _, r := range log {
		if r.Level == lv {
			out = append(out, r)
		}
	}
	return out
}
