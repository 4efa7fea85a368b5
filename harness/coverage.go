package harness

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// MaxLevel bounds the nesting levels coverage tracks.
const MaxLevel = 4

// Coverage counts, per site, the interrupts delivered there at each level,
// and the commits seen.
type Coverage struct {
	Hits    [fgraph.NumSites][MaxLevel + 1]int64
	Commits [fgraph.NumSites]int64
	// Lines counts, on a compiled target, the interrupts delivered right
	// after a store of each source line (nil on the port).
	Lines map[int]int64
}

// hitLine, hit and commit add d to a count: 1 as a run goes, and again
// for a resumed run's prefix (applyCov); -1 when a halted run's counts are
// taken back (takeBackCov).
func (c *Coverage) hitLine(line int, d int64) {
	if c.Lines == nil {
		c.Lines = map[int]int64{}
	}
	if c.Lines[line] += d; c.Lines[line] == 0 {
		delete(c.Lines, line)
	}
}

func (c *Coverage) hit(s fgraph.Site, level int, d int64) {
	c.Hits[s][min(level, MaxLevel)] += d
}

func (c *Coverage) commit(s fgraph.Site, d int64) { c.Commits[s] += d }

// addEvent adds d to the count of e, a coverage event as runs log them
// (runner.covHitAt, covLineAt, covCommitAt).
func (c *Coverage) addEvent(e uint32, d int64) {
	site := fgraph.Site(e >> 8 & 0x3fffff)
	switch e & covKind {
	case covHit:
		c.hit(site, int(e&0xff), d)
	case covLine:
		c.hitLine(int(e&^covKind), d)
	default:
		c.commit(site, d)
	}
}

// Merge adds o into c.
func (c *Coverage) Merge(o *Coverage) {
	for s := range c.Hits {
		for l := range c.Hits[s] {
			c.Hits[s][l] += o.Hits[s][l]
		}
		c.Commits[s] += o.Commits[s]
	}
	for l, n := range o.Lines {
		if c.Lines == nil {
			c.Lines = map[int]int64{}
		}
		c.Lines[l] += n
	}
}

// Hit reports whether an interrupt was ever delivered at s.
func (c *Coverage) Hit(s fgraph.Site) bool {
	for _, n := range c.Hits[s] {
		if n > 0 {
			return true
		}
	}
	return false
}

// RequiredSites are the push, reservation and pop sites the std run must
// hit with an interrupt. Interrupts come at store commits (and op starts,
// docs/compiler-model.md), so these are the store sites of push, set_bitmap,
// fgraph_reserve_data and the return path.
func RequiredSites(sc *Scenario) []fgraph.Site {
	s := []fgraph.Site{
		fgraph.SitePushW1, fgraph.SitePushW2, fgraph.SitePushW3, fgraph.SitePushW4,
		fgraph.SitePushW5Ret, fgraph.SitePushW5Func, fgraph.SitePushW5Retp,
		fgraph.SiteSetBitmap, fgraph.SiteRetLower, fgraph.SiteRetDepth,
	}
	data := false
	for _, u := range sc.Users {
		if u.DataBytes > 0 {
			data = true
		}
	}
	if data && sc.Variant != fgraph.Seed && !sc.Fixes.ReserveIrqOff {
		s = append(s, fgraph.SiteReserveW1, fgraph.SiteReserveW2, fgraph.SiteReserveW3)
	}
	return s
}

// Missing lists the required sites never hit.
func (c *Coverage) Missing(sc *Scenario) []fgraph.Site {
	var out []fgraph.Site
	for _, s := range RequiredSites(sc) {
		if !c.Hit(s) {
			out = append(out, s)
		}
	}
	return out
}

// Table renders the sites that saw interrupts, by level.
func (c *Coverage) Table() string {
	type row struct {
		name string
		h    [MaxLevel + 1]int64
	}
	var rows []row
	for s := 1; s < fgraph.NumSites; s++ {
		if c.Hit(fgraph.Site(s)) {
			rows = append(rows, row{fgraph.Site(s).String(), c.Hits[s]})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %10s %10s %10s\n", "site", "level1", "level2", "level3")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-24s %10d %10d %10d\n", r.name, r.h[1], r.h[2], r.h[3])
	}
	return b.String()
}
