package properties

import (
	"math/bits"
	"strconv"

	"github.com/fgcheck/fgcheck/harness"
	"pgregory.net/rapid"
)

var (
	coin = rapid.Bool()
)

// RapidChooser is a harness.Chooser that draws every choice of a run from a
// rapid.T, so that rapid records, replays and shrinks schedules like any
// other generated value. The runner only offers options the scenario's
// bound allows; the chooser only picks among them.
//
// Injection is biased toward option 0: a point injects only if Flips coin
// draws in a row come up true, and only then is the option drawn. Rapid
// shrinks every draw toward false and 0, so a shrunk schedule has fewer
// injections, and the ones it keeps pick the first alternative.
type RapidChooser struct {
	T *rapid.T
	// Flips sets the injection probability at a yield point to 2^-Flips;
	// 0 means 5. PointsFlips picks it from the run's size.
	Flips int
	// OrderFlips is the same for the commit order of a region; 0 means 2.
	OrderFlips int
	// Allow, if set, restricts the non-default options the chooser may
	// pick (for example: remote actions at op.start only).
	Allow func(p *harness.Point, o harness.Option) bool

	alts []int
}

// PointsFlips returns the number of flips that makes about want injections
// in a run of points choice points: log2(points/want), at least 1.
func PointsFlips(points, want int) int {
	if want < 1 {
		want = 1
	}
	n := bits.Len(uint(points/want)) - 1
	return max(n, 1)
}

// Choose draws whether to inject at p and, if so, which option.
func (c *RapidChooser) Choose(p *harness.Point, opts []harness.Option) int {
	alts := c.alts[:0]
	for i := 1; i < len(opts); i++ {
		if c.Allow == nil || c.Allow(p, opts[i]) {
			alts = append(alts, i)
		}
	}
	c.alts = alts
	if len(alts) == 0 {
		return 0
	}
	flips := c.Flips
	if flips == 0 {
		flips = 5
	}
	what := "inject at "
	if p.Kind == harness.PointOrder {
		what = "reorder "
		flips = c.OrderFlips
		if flips == 0 {
			flips = 2
		}
	}
	label := what + PointLabel(p)
	for i := 0; i < flips; i++ {
		if !coin.Draw(c.T, label) {
			return 0
		}
	}
	if len(alts) == 1 {
		return alts[0]
	}
	k := rapid.IntRange(0, len(alts)-1).Draw(c.T, "option at "+PointLabel(p))
	return alts[k]
}

// PointLabel names a choice point as schedule files do: "task0 push.w3#2".
func PointLabel(p *harness.Point) string {
	return p.Ctx + " " + p.Pos.Site.String() + "#" + strconv.Itoa(p.Pos.Occ)
}
