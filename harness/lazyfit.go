package harness

// Whether the lazy engine can take a scenario's regions (the --orders auto
// rule of fgcheck explore on a capped bound).
//
// A pending region's live options are a 64-bit mask, so a region whose
// first instance has more than lzMaxOptions orders that drop no store is
// never pending (lzShape): each of its orders is an eager choice. Where
// that is the region met most often, the lazy engine runs about as many
// schedules as the eager one and loses what merged remote placements save
// (they do not combine with pending orders): on std at C=2, v6.11's and the
// seed's push.w4 region buffers five stores (120 orders), and the lazy
// engine executes 20 % and 4.9 % more instructions than the eager one with
// merged placements; on latest, where every region fits, 13 % fewer (C=3:
// 8.7 %). docs/state-cache.md, twenty-seventh session.

// lzMaxOptions is the most options a pending region can have (lzPend's
// mask).
const lzMaxOptions = 64

// LazyFits reports whether every region that the all-default schedule of
// sc meets has at most 64 orders that drop no store, so that the lazy
// engine can keep each of them pending. The all-default run offers every
// region's orders (it spends no budget). A run that fails stops where it
// fails, and its regions so far decide; one that panics (a broken
// mutant's) reports false.
func LazyFits(sc *Scenario) bool {
	return mostRegionOrders(sc) <= lzMaxOptions
}

// mostRegionOrders is the most orders that drop no store of any region the
// all-default schedule of sc meets (0 if it meets none; lzMaxOptions+1 if
// the run cannot be made or panics).
func mostRegionOrders(sc *Scenario) int {
	c := &orderCounter{}
	if !runDefault(sc, c, RunOptions{}, nil) {
		return lzMaxOptions + 1
	}
	return c.most
}

// orderCounter is a chooser that takes every default and keeps the most
// orders that drop no store offered at a region's choice point.
type orderCounter struct{ most int }

func (o *orderCounter) Choose(p *Point, opts []Option) int {
	if p.Kind == PointOrder {
		n := 0
		for _, x := range opts {
			if x.Kind == OptOrder && x.Drop == nil {
				n++
			}
		}
		o.most = max(o.most, n)
	}
	return 0
}
