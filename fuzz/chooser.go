package fuzz

import (
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// Chooser is the bytes-backed harness.Chooser: every choice point consumes
// one byte of the stream (two when it injects and more than one
// alternative is offered). When the stream runs out every later choice is
// the default, so a short input is a short prefix of injections and the
// empty stream is the program-order run.
//
// At a yield point a byte injects when it is at least 256-256>>Density
// (probability 2^-Density for a uniform byte, so byte 0 never injects); at
// a region's commit order a byte of 0xc0 or more reorders (probability
// 1/4). Then, if there is more than one alternative, the next byte modulo
// their number picks one (two bytes beyond 256 alternatives).
type Chooser struct {
	Data    []byte
	Density int // 1..8; 0 means 6
	pos     int
}

// NewChooser returns a chooser over stream.
func NewChooser(stream []byte, density int) *Chooser {
	return &Chooser{Data: stream, Density: density}
}

// Used is the number of bytes consumed so far.
func (c *Chooser) Used() int { return c.pos }

func (c *Chooser) next() (byte, bool) {
	if c.pos >= len(c.Data) {
		return 0, false
	}
	b := c.Data[c.pos]
	c.pos++
	return b, true
}

// Choose consumes the point's byte(s).
func (c *Chooser) Choose(p *harness.Point, opts []harness.Option) int {
	n := len(opts) - 1 // alternatives
	b, ok := c.next()
	if !ok {
		return 0
	}
	if p.Kind == harness.PointOrder {
		if b < 0xc0 {
			return 0
		}
	} else if int(b) < InjectThreshold(c.Density) {
		return 0
	}
	return 1 + c.pick(n)
}

// pick consumes the byte (two beyond 256 alternatives) that picks one of n
// alternatives.
func (c *Chooser) pick(n int) int {
	if n == 1 {
		return 0
	}
	b, _ := c.next()
	k := int(b)
	if n > 256 {
		b, _ = c.next()
		k = k<<8 | int(b)
	}
	return k % n
}

// InjectThreshold is the smallest byte that injects at a yield point.
func InjectThreshold(density int) int {
	if density <= 0 {
		density = 6
	}
	density = min(density, 8)
	return 256 - 256>>density
}

// Shape is one of the scenario shapes FuzzSchedule decodes into.
type Shape struct {
	Name string
	Make func(v fgraph.Variant) *harness.Scenario
}

// Shapes are the scenarios of FuzzSchedule: the written-down std and
// peer-spin, std with the alias option, peer-spin with interrupts at loads
// too, and (Options.Wide only) two small ones of this package: nested
// interrupts three deep, and two tasks with data and a user churn. The
// wide shapes find counterexamples on the baselines that the harness has
// not triaged yet (docs/engines.md), so baseline campaigns leave them off.
var Shapes = []Shape{
	{"std", harness.Standard},
	{"peer-spin", harness.PeerSpin},
	{"std-alias", func(v fgraph.Variant) *harness.Scenario {
		sc := harness.Standard(v)
		sc.Name, sc.Alias = "std-alias", true
		return sc
	}},
	{"peer-spin-loads", func(v fgraph.Variant) *harness.Scenario {
		sc := harness.PeerSpin(v)
		sc.Name, sc.StoresOnly = "peer-spin-loads", false
		return sc
	}},
	{"nested", Nested},
	{"churn", Churn},
}

// NarrowShapes is the number of Shapes a baseline campaign uses.
const NarrowShapes = 4

// Nested is one task of depth two, an IRQ of depth two, an NMI that unwinds
// inside a traced call, and a bound of three interrupts three deep.
func Nested(v fgraph.Variant) *harness.Scenario {
	return &harness.Scenario{
		Name: "nested", Variant: v, StackWords: 64,
		Users: []harness.User{{Name: "u0", DataBytes: 16}, {Name: "u1", Filter: []int{1, 10, 20}}},
		Setup: []int{0, 1},
		Tasks: [][]harness.Op{{{Kind: harness.OpCall, Func: 1}, {Kind: harness.OpCall, Func: 2}, {Kind: harness.OpRet}, {Kind: harness.OpRet}}},
		IRQ:   []harness.Op{{Kind: harness.OpCall, Func: 10}, {Kind: harness.OpCall, Func: 11}, {Kind: harness.OpRet}, {Kind: harness.OpRet}},
		NMI:   []harness.Op{{Kind: harness.OpCall, Func: 20}, {Kind: harness.OpUnwind}, {Kind: harness.OpRet}},
		Bound: harness.Bound{K: 3, D: 3, R: 1, E: 0, C: 3},
	}
}

// Churn is two tasks with a sleep, users with 8 and 16 bytes of data, one
// remote unregister or register, and an IRQ that unwinds.
func Churn(v fgraph.Variant) *harness.Scenario {
	return &harness.Scenario{
		Name: "churn", Variant: v, StackWords: 64,
		Users: []harness.User{
			{Name: "u0", DataBytes: 16},
			{Name: "u1", Filter: []int{2, 3, 10}, DataBytes: 8},
			{Name: "u2", Accept: []int{2, 4}},
		},
		Setup: []int{0, 1},
		Tasks: [][]harness.Op{
			{{Kind: harness.OpCall, Func: 1}, {Kind: harness.OpSleep}, {Kind: harness.OpCall, Func: 2}, {Kind: harness.OpRet}, {Kind: harness.OpRet}},
			{{Kind: harness.OpCall, Func: 3}, {Kind: harness.OpTail, Func: 4}, {Kind: harness.OpRet}},
		},
		IRQ:     []harness.Op{{Kind: harness.OpCall, Func: 10}, {Kind: harness.OpUnwind}, {Kind: harness.OpRet}},
		NMI:     []harness.Op{{Kind: harness.OpCall, Func: 20}, {Kind: harness.OpRet}},
		Remotes: []harness.Remote{{Kind: harness.RemoteUnregister, User: 1}, {Kind: harness.RemoteRegister, User: 2}},
		Bound:   harness.Bound{K: 2, D: 2, R: 1, E: 1, C: 3},
	}
}

// Options configure Decode.
type Options struct {
	// Mutants makes the third header byte pick a non-control mutant of
	// the catalogue (for measuring the fuzzer against mutants; a baseline
	// campaign leaves it off).
	Mutants bool
	// Mutant, if set, is applied to every input (and Mutants is ignored).
	Mutant fgraph.Mutant
	// Wide decodes into all of Shapes, not only the first NarrowShapes.
	Wide bool
	// Target, if set, runs every input on compiled code (a kernel tree's
	// fgraph.c, ctarget/cload) with the arch glue of TargetVariant, whatever
	// variant the header names.
	Target        harness.Target
	TargetVariant fgraph.Variant
}

// Input is a decoded fuzz input.
type Input struct {
	Variant fgraph.Variant
	Shape   int
	Mutant  fgraph.Mutant
	Density int
	Stream  []byte
}

// HeaderLen is the number of header bytes Decode reads.
func (o Options) HeaderLen() int {
	if o.Mutants && o.Mutant == 0 {
		return 3
	}
	return 2
}

func (o Options) shapes() int {
	if o.Wide {
		return len(Shapes)
	}
	return NarrowShapes
}

var variants = []fgraph.Variant{fgraph.Latest, fgraph.V611, fgraph.Seed}

// NonControl lists the catalogue's non-control mutants, in order.
func NonControl() []fgraph.Mutant {
	var out []fgraph.Mutant
	for _, mi := range fgraph.Catalogue {
		if !mi.Control {
			out = append(out, mi.Mutant)
		}
	}
	return out
}

// Decode reads a fuzz input: byte 0 picks the variant (mod 3) and the
// shape (div 3, mod the number of shapes in use), byte 1 the density (1 + mod 8),
// with Options.Mutants byte 2 a mutant; the rest is the choice stream.
// Missing header bytes read as 0: every input decodes.
func Decode(data []byte, o Options) Input {
	at := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	in := Input{
		Variant: variants[int(at(0))%len(variants)],
		Shape:   int(at(0)) / len(variants) % o.shapes(),
		Density: 1 + int(at(1))%8,
		Mutant:  o.Mutant,
	}
	if o.Target != nil {
		in.Variant = o.TargetVariant
	}
	h := o.HeaderLen()
	if h == 3 {
		nc := NonControl()
		in.Mutant = nc[int(at(2))%len(nc)]
	}
	if len(data) > h {
		in.Stream = data[h:]
	}
	return in
}

// Header encodes the header of an input (the inverse of Decode's header).
func Header(v fgraph.Variant, shape, density int, o Options, m fgraph.Mutant) []byte {
	vi := 0
	for i, x := range variants {
		if x == v {
			vi = i
		}
	}
	h := []byte{byte(shape*len(variants) + vi), byte((density - 1) & 7)}
	if o.HeaderLen() == 3 {
		for i, x := range NonControl() {
			if x == m {
				h = append(h, byte(i))
			}
		}
		if len(h) == 2 {
			h = append(h, 0)
		}
	}
	return h
}

// Scenario is the input's scenario.
func (in Input) Scenario() *harness.Scenario {
	sc := Shapes[in.Shape].Make(in.Variant)
	sc.Mutant = in.Mutant
	return sc
}

// Chooser is the input's chooser.
func (in Input) Chooser() *Chooser { return NewChooser(in.Stream, in.Density) }
