package mutants

import (
	"fmt"
	"slices"
	"time"

	"github.com/fgcheck/fgcheck/harness"
)

// Order is the order in which an exploration visits the schedules of a
// bound. Every order visits the same set of schedules, each exactly once
// (except OrderIDDFS, which visits the schedules with at most one
// non-default choice twice); only the time to the first violation differs.
type Order uint8

const (
	// OrderNear visits schedules by their number of non-default choices
	// (all schedules with one choice before any with two), and within one
	// number by the distance, in choice points, between the last choice
	// and the one before it (an interrupt right after a reordered region
	// comes before one at the end of the run). Ties keep discovery order.
	// It is the default.
	OrderNear Order = iota
	// OrderDFS is harness.Explore's depth-first odometer: the last choice
	// point of a run varies fastest, so a choice near the start of a run
	// (a region order, chosen at the region's first instance) changes
	// last.
	OrderDFS
	// OrderIDDFS runs harness.Explore with the choice cap C=1 and then
	// with the full bound: iterative deepening. The second pass re-runs
	// the schedules of the first; runs counts both passes.
	OrderIDDFS
)

var orderNames = [...]string{"near", "dfs", "iddfs"}

func (o Order) String() string {
	if int(o) < len(orderNames) {
		return orderNames[o]
	}
	return fmt.Sprintf("Order(%d)", o)
}

// ParseOrder maps a name ("near", "dfs", "iddfs") to an Order.
func ParseOrder(s string) (Order, error) {
	for i, n := range orderNames {
		if n == s {
			return Order(i), nil
		}
	}
	return 0, fmt.Errorf("unknown exploration order %q (want near, dfs or iddfs)", s)
}

// outcome is what one exploration found.
type outcome struct {
	runs     int64
	first    *harness.Result // the first failing run, nil if none
	complete bool            // the whole bound was explored
	// firstK is the first failing run of kbuild's compiler model
	// (harness.Result.Kbuild), nil if none. With stop set the exploration
	// stops there, not at first: a violation that needs the no-alias
	// model leaves kbuild's verdict open, and the exploration goes on
	// until a kbuild run fails or the bound is exhausted.
	firstK *harness.Result
	// firstRuns and kRuns count the runs up to first and firstK, and
	// firstAt and kAt the time since the exploration began.
	firstRuns, kRuns int64
	firstAt, kAt     time.Duration
}

// hit records a failing run found after runs runs (this one included).
func (o *outcome) hit(res *harness.Result, runs int64, at time.Duration) {
	if o.first == nil {
		o.first, o.firstRuns, o.firstAt = res, runs, at
	}
	if o.firstK == nil && res.Kbuild() {
		o.firstK, o.kRuns, o.kAt = res, runs, at
	}
}

// explore runs the exhaustive exploration of sc in the given order,
// single-threaded, stopping at the first failing run of kbuild's model if
// stop is set.
func explore(sc *harness.Scenario, order Order, stop bool) (outcome, error) {
	switch order {
	case OrderDFS:
		return exploreDFS(sc, stop)
	case OrderIDDFS:
		b := sc.Bound
		if b.C == 1 {
			return exploreDFS(sc, stop)
		}
		small := *sc
		small.Bound.C = 1
		t1 := time.Now()
		o1, err := exploreDFS(&small, stop)
		if err != nil || stop && o1.firstK != nil {
			o1.complete = false
			return o1, err
		}
		pass1 := time.Since(t1)
		o2, err := exploreDFS(sc, stop)
		// The second pass counts on from the first's runs and time; a
		// failing run the first pass found stays the first.
		if o1.first != nil {
			o2.first, o2.firstRuns, o2.firstAt = o1.first, o1.firstRuns, o1.firstAt
		} else {
			o2.firstRuns, o2.firstAt = o2.firstRuns+o1.runs, o2.firstAt+pass1
		}
		if o1.firstK != nil {
			o2.firstK, o2.kRuns, o2.kAt = o1.firstK, o1.kRuns, o1.kAt
		} else {
			o2.kRuns, o2.kAt = o2.kRuns+o1.runs, o2.kAt+pass1
		}
		o2.runs += o1.runs
		return o2, err
	case OrderNear:
		return exploreNear(sc, harness.RunOptions{}, stop)
	}
	return outcome{}, fmt.Errorf("unknown exploration order %d", order)
}

func exploreDFS(sc *harness.Scenario, stop bool) (outcome, error) {
	var out outcome
	t0 := time.Now()
	s, err := harness.Explore(sc, harness.ExploreOptions{StopAtFirst: stop, Workers: 1,
		OnViolation: func(r *harness.Result) { out.hit(r, r.Run, time.Since(t0)) }})
	if err != nil {
		return outcome{}, err
	}
	out.runs, out.complete = s.Runs, s.Complete
	return out, nil
}

// node is one schedule of the choice tree: its parent's choices plus one
// more non-default choice, option o of the n offered at choice point j
// (harness.Point.Index) of the run. The root (parent -1) is the run with
// no non-default choice. Every schedule is the last-choice child of
// exactly one other, so visiting every node once visits every schedule
// once, whatever the order.
type node struct {
	parent int32
	j      int32
	o, n   int16
	dist   int32 // j minus the parent's j: the gap since the previous choice
}

type step struct {
	j    int
	o, n int
}

// tree is the choice tree discovered so far.
type tree struct {
	nodes []node
	path  []step // scratch: the current node's choices, first choice first
}

// prefix fills t.path with id's choices, first choice first.
func (t *tree) prefix(id int32) {
	t.path = t.path[:0]
	for x := id; x > 0; x = t.nodes[x].parent {
		nd := t.nodes[x]
		t.path = append(t.path, step{int(nd.j), int(nd.o), int(nd.n)})
	}
	slices.Reverse(t.path)
}

// firstDiff is the first choice point at which a run with choices b may
// choose otherwise than the run with choices a before it: where their
// steps first differ (the smaller point of the two), or where one has a
// step the other lacks; never past last+1, so that every choice point
// after b's last choice runs (its children are recorded there).
func firstDiff(a, b []step, last int) int {
	d := last + 1
	for i := 0; ; i++ {
		switch {
		case i == len(a) && i == len(b):
		case i == len(a):
			d = b[i].j
		case i == len(b):
			d = a[i].j
		case a[i] != b[i]:
			d = min(a[i].j, b[i].j)
		default:
			continue
		}
		return min(d, last+1)
	}
}

// noShare, in tests, runs every schedule of the near order from the start
// (no prefix sharing between consecutive runs).
var noShare bool

// exploreNear visits the tree level by level (a level is a number of
// non-default choices); each level is sorted by dist, discovery order
// breaking ties. A run re-executes its node's choices (stateless, like
// harness.Explore) and records every later choice point as a child. The
// first failing run is the outcome's first, the first failing run of
// kbuild's model its firstK (where stop stops it).
func exploreNear(sc *harness.Scenario, ro harness.RunOptions, stop bool) (outcome, error) {
	t0 := time.Now()
	if err := sc.Validate(); err != nil {
		return outcome{}, err
	}
	t := &tree{nodes: []node{{parent: -1, j: -1}}}
	// One runner for all the runs: each resumes from the deepest snap it
	// shares with the run before and reuses that run's checks
	// (harness.Session), as Explore's runs do.
	sess, err := harness.NewSession(sc, ro)
	if err != nil {
		return outcome{}, err
	}
	var prev []step
	var out outcome
	level := []int32{0}
	var kids []int32
	var bad error
	for len(level) > 0 {
		kids = kids[:0]
		for _, id := range level {
			t.prefix(id)
			last := int(t.nodes[id].j)
			shared := firstDiff(prev, t.path, last)
			if noShare {
				shared = -1
			}
			prev = append(prev[:0], t.path...)
			k := 0
			ch := harness.ChooserFunc(func(p *harness.Point, opts []harness.Option) int {
				for k < len(t.path) && t.path[k].j < p.Index {
					k++ // a choice of the prefix a resumed run skipped
				}
				if k < len(t.path) && p.Index == t.path[k].j {
					s := t.path[k]
					k++
					if len(opts) != s.n && bad == nil {
						bad = fmt.Errorf("mutants: nondeterministic run of %s: %d options at choice point %d, had %d", sc.Name, len(opts), p.Index, s.n)
					}
					if s.o >= len(opts) {
						return 0
					}
					return s.o
				}
				if p.Index > last {
					for o := 1; o < len(opts); o++ {
						t.nodes = append(t.nodes, node{parent: id, j: int32(p.Index), o: int16(o), n: int16(len(opts)), dist: int32(p.Index - last)})
						kids = append(kids, int32(len(t.nodes)-1))
					}
				}
				return 0
			})
			res := sess.Run(ch, shared)
			if bad != nil {
				return out, bad
			}
			out.runs++
			if res.Failed() {
				out.hit(res, out.runs, time.Since(t0))
				if stop && out.firstK != nil {
					return out, nil
				}
			}
		}
		// Sort the next level by dist; the sort is stable, so ties keep
		// discovery order (parent order, then choice point, then option).
		slices.SortStableFunc(kids, func(a, b int32) int { return int(t.nodes[a].dist - t.nodes[b].dist) })
		level = append(level[:0], kids...)
	}
	out.complete = true
	return out, nil
}
