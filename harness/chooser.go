package harness

import (
	"fmt"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// PointKind says what is being chosen.
type PointKind uint8

const (
	PointYield PointKind = iota // a yield point: continue, interrupt or remote action
	PointOrder                  // the commit order of a static region
)

// Point is a choice point, in symbolic terms.
type Point struct {
	Kind  PointKind
	Ctx   string // "task0", "task1", or an interrupt's event ID
	Pos   Pos    // for yields: the site and occurrence; for orders: the region's first store
	Level int
	// Index counts choice points in this run, from 0.
	Index int
	// ord counts the yield points of the context so far (ctx.nyield).
	ord int32
}

// OptKind is the kind of one option at a choice point.
type OptKind uint8

const (
	OptContinue OptKind = iota
	OptIRQ
	OptNMI
	OptRemote
	OptOrder
)

// Option is one alternative at a choice point. Option 0 is always the
// default (continue, or program order).
type Option struct {
	Kind   OptKind
	Remote int   // OptRemote: index into Scenario.Remotes
	Order  []int // OptOrder: indices into the region's stores in commit order
	Drop   []int // OptOrder: dropped dead stores
}

// Chooser drives a run: every engine (exhaustive, random, PCT, replay,
// bytes, rapid, gopter) is a Chooser. Choose returns an index into opts;
// len(opts) >= 2.
type Chooser interface {
	Choose(p *Point, opts []Option) int
}

// ChooserFunc adapts a function.
type ChooserFunc func(p *Point, opts []Option) int

func (f ChooserFunc) Choose(p *Point, opts []Option) int { return f(p, opts) }

// noChoice always continues: the program-order, interrupt-free run.
type noChoice struct{}

func (noChoice) Choose(*Point, []Option) int { return 0 }

// Replay replays a schedule: it injects each event at its symbolic position
// and applies each region order; everything else continues.
type replay struct {
	events map[string]*Event
	orders map[fgraph.Site]*Order
	sc     *Scenario
	used   int
}

// NewReplay returns a Chooser that replays s.
func NewReplay(sc *Scenario, s Schedule) Chooser {
	r := &replay{events: map[string]*Event{}, orders: map[fgraph.Site]*Order{}, sc: sc}
	for i := range s.Events {
		e := &s.Events[i]
		r.events[e.In+"|"+e.At.String()] = e
	}
	for i := range s.Orders {
		r.orders[s.Orders[i].Region] = &s.Orders[i]
	}
	return r
}

func (r *replay) Choose(p *Point, opts []Option) int {
	switch p.Kind {
	case PointYield:
		e := r.events[p.Ctx+"|"+p.Pos.String()]
		if e == nil {
			return 0
		}
		for i, o := range opts {
			switch {
			case e.Kind == EvIRQ && o.Kind == OptIRQ,
				e.Kind == EvNMI && o.Kind == OptNMI,
				e.Kind == EvRemote && o.Kind == OptRemote && o.Remote == e.Remote:
				r.used++
				return i
			}
		}
	case PointOrder:
		o := r.orders[p.Pos.Site]
		if o == nil {
			return 0
		}
		return -1 // resolved by the runner against the order's sites
	}
	return 0
}

// orderFor gives the replayed order of a region, if any.
func (r *replay) orderFor(region fgraph.Site) *Order { return r.orders[region] }

// orderLabel renders an order option in file syntax.
func orderLabel(buf []pending, o Option) string {
	var b strings.Builder
	for i, j := range o.Order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(buf[j].site.String())
	}
	for _, j := range o.Drop {
		fmt.Fprintf(&b, " -%s", buf[j].site)
	}
	return b.String()
}
