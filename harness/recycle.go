package harness

// Recycled results. The explorer runs tens of thousands of schedules a
// second and keeps the result of almost none: it counts a run and moves
// on. A fresh Result, its schedule's events and orders and its
// violations for every run were about 45 % of what std allocated (a
// memory profile of BenchmarkStdCache, 3 Dec 2026), and the collector
// that this garbage kept busy took CPU from the second worker: two
// workers ran ×1.3-1.6 faster than one on std at C=2, ×1.8-1.9 with a
// collector five times as lazy (GOGC=400).
//
// So the explorer hands back the results it did not keep (recycle), and
// the runner builds a later run's result in their slices. A result is
// handed out (Summary.First, OnViolation, OnRun) or recycled, never
// both: only a run that did not fail, with no OnRun or OnChoice callback
// to see it, is recycled.

// resultPool is a runner's recycled results.
type resultPool struct {
	// released is the result handed back last; it becomes spare when the
	// explorer hands back the one after it. (The next run read it until 7
	// Dec 2026, when the check records of the shared prefix pointed into
	// its lists; they hold copies now, reuse.viol. The second step stays:
	// it costs one result.)
	released *Result
	// spare is a result no run reads any more: the next run's.
	spare *Result
	// evs and ords are the slices of the run's result's schedule, before
	// the run takes them (events, orders); nil once taken.
	evs  []Event
	ords []Order
}

// recycle hands back res, the result of this runner's last run, once the
// caller is done with it (it passed it to no callback of its own). A
// failing run's result is kept (Summary.First holds it), and so is one
// whose schedule an OnChoice callback saw.
func (r *runner) recycle(res *Result) {
	if res.Failed() || r.opt.OnChoice != nil {
		return
	}
	p := &r.pool
	p.spare, p.released = p.released, res
}

// get is a run's empty result: the spare one, emptied, or a new one.
func (p *resultPool) get() *Result {
	res := p.spare
	if res == nil {
		p.evs, p.ords = nil, nil
		return &Result{}
	}
	p.spare = nil
	p.evs, p.ords = res.Schedule.Events[:0], res.Schedule.Orders[:0]
	*res = Result{Violations: res.Violations[:0], Known: res.Known[:0], dets: res.dets[:0]}
	return res
}

// settle gives res the nil slices of a new result where it has nothing,
// so that a recycled result looks like a fresh one (cmp tells an empty
// slice from nil).
func settle(res *Result) {
	if len(res.Violations) == 0 {
		res.Violations = nil
	}
	if len(res.Known) == 0 {
		res.Known = nil
	}
}

// giveBack gives the pool back the current run's schedule slices evs and
// ords, about to be replaced (loadData), where it has none: they are no
// result's yet (and no OnChoice callback saw them: it may keep them).
func (p *resultPool) giveBack(evs []Event, ords []Order) {
	if p.evs == nil {
		p.evs = evs
	}
	if p.ords == nil {
		p.ords = ords
	}
}

// events is the slice for the run's events, with room for n.
func (p *resultPool) events(n int) []Event { return take(&p.evs, n) }

// orders is the slice for the run's orders, with room for n.
func (p *resultPool) orders(n int) []Order { return take(&p.ords, n) }

// take hands out *s emptied, or a new slice if it has no room for n, and
// forgets it: a slice is handed out once.
func take[T any](s *[]T, n int) []T {
	x := *s
	*s = nil
	if cap(x) < n {
		return make([]T, 0, n)
	}
	return x[:0]
}
