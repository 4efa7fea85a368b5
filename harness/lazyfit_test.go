package harness

import (
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestLazyFits: the --orders auto rule's probe counts the orders of the
// regions the all-default schedule meets. On v6.12, v6.11 and the seed the
// push's fourth region buffers five stores (5! = 120 orders, none dropping
// a store), more than a pending region's 64-bit mask holds; on latest,
// four (24 orders), and every region fits.
func TestLazyFits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sc   *Scenario
		most int
		fits bool
		why  string
	}{
		{Standard(fgraph.Latest), 24, true, "latest's largest region has four stores"},
		{Standard(fgraph.V612), 120, false, "v6.12's push.w4 region buffers five stores, as v6.11's"},
		{Standard(fgraph.V611), 120, false, "v6.11's push.w4 region buffers five stores"},
		{Standard(fgraph.Seed), 120, false, "the seed's too"},
		{PeerSpin(fgraph.Latest), 24, true, "peer-spin runs latest's push"},
	} {
		if got := mostRegionOrders(c.sc); got != c.most || LazyFits(c.sc) != c.fits {
			t.Errorf("%s on %s: most orders %d (fits %v), want %d (%v): %s", c.sc.Name, c.sc.Variant, got, LazyFits(c.sc), c.most, c.fits, c.why)
		}
	}
}
