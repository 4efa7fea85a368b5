package fuzz

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"github.com/fgcheck/fgcheck/harness"
)

// The converter between the record (schedule files) and its views
// (`go test fuzz v1` seed entries).

const entryHeader = "go test fuzz v1"

// SeedEntry returns the `go test fuzz v1` file of a fuzz target with one
// []byte argument, byte for byte what the go command writes.
func SeedEntry(data []byte) []byte {
	return fmt.Appendf(nil, "%s\n[]byte(%q)\n", entryHeader, data)
}

// EntryName is the file name the go command gives an entry: the first 16
// hex digits of the SHA-256 of its contents.
func EntryName(entry []byte) string {
	return fmt.Sprintf("%x", sha256.Sum256(entry))[:16]
}

// ParseSeedEntry returns the argument of a `go test fuzz v1` file with one
// []byte or string argument.
func ParseSeedEntry(entry []byte) ([]byte, error) {
	lines := strings.Split(string(entry), "\n")
	if strings.TrimSuffix(lines[0], "\r") != entryHeader {
		return nil, fmt.Errorf("not a %q file", entryHeader)
	}
	var vals []string
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			vals = append(vals, l)
		}
	}
	if len(vals) != 1 {
		return nil, fmt.Errorf("%d values, want 1", len(vals))
	}
	expr, err := parser.ParseExpr(vals[0])
	if err != nil {
		return nil, fmt.Errorf("malformed value %q: %v", vals[0], err)
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("malformed value %q: want []byte(\"...\") or string(\"...\")", vals[0])
	}
	switch fn := call.Fun.(type) {
	case *ast.ArrayType:
		if id, ok := fn.Elt.(*ast.Ident); !ok || id.Name != "byte" || fn.Len != nil {
			return nil, fmt.Errorf("malformed value %q: want []byte", vals[0])
		}
	case *ast.Ident:
		if fn.Name != "string" {
			return nil, fmt.Errorf("malformed value %q: want []byte or string", vals[0])
		}
	default:
		return nil, fmt.Errorf("malformed value %q: want []byte or string", vals[0])
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil, fmt.Errorf("malformed value %q: want a string literal", vals[0])
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// CanonicalFromEntry turns a FuzzScheduleFile seed entry back into the
// canonical schedule file it holds.
func CanonicalFromEntry(entry []byte) ([]byte, error) {
	data, err := ParseSeedEntry(entry)
	if err != nil {
		return nil, err
	}
	f, err := harness.ParseFile("entry", data)
	if err != nil {
		return nil, err
	}
	return f.Format(), nil
}

// FileFromInput runs a FuzzSchedule input and returns the schedule file of
// the run (with the violation as its expected verdict, if any) and the
// result: a FuzzSchedule entry turned back into a schedule file.
func FileFromInput(data []byte, o Options) (*harness.File, *harness.Result, error) {
	in := Decode(data, o)
	sc := in.Scenario()
	sc.Target = o.Target
	res, err := harness.Run(sc, in.Chooser(), harness.RunOptions{})
	if err != nil {
		return nil, nil, err
	}
	f := &harness.File{
		Comments: []string{
			fmt.Sprintf("FuzzSchedule input %s: shape %s, variant %s, density %d, %d stream bytes",
				EntryName(SeedEntry(data)), Shapes[in.Shape].Name, in.Variant, in.Density, len(in.Stream)),
		},
		Scenario: sc,
		Schedule: res.Schedule,
		Expect:   &harness.Expect{Pass: true},
	}
	if res.Failed() {
		v := res.Violations[0]
		f.Comments = append(f.Comments, "violation: "+strings.ReplaceAll(v.String(), "\n", " "))
		f.Expect = &harness.Expect{Oracle: v.Oracle}
	}
	return f, res, nil
}

// decision is one choice of a run being encoded.
type decision struct {
	order  bool
	n      int // alternatives
	choice int
}

// indexChooser replays decisions by choice-point index, then picks next at
// the point after them, then the default.
type indexChooser struct {
	ds   []decision
	next int
}

func (c *indexChooser) Choose(p *harness.Point, opts []harness.Option) int {
	switch {
	case p.Index < len(c.ds):
		return c.ds[p.Index].choice
	case p.Index == len(c.ds):
		return c.next
	}
	return 0
}

// encoder picks, at every choice point, the option that follows the
// target schedule.
type encoder struct {
	sc     *harness.Scenario
	target harness.Schedule
	ds     []decision
	err    error
}

func (e *encoder) Choose(p *harness.Point, opts []harness.Option) int {
	if p.Index != len(e.ds) {
		e.err = fmt.Errorf("choice point %d out of sequence", p.Index)
	}
	d := decision{order: p.Kind == harness.PointOrder, n: len(opts) - 1}
	if d.order {
		d.choice = e.order(p, opts)
	} else {
		d.choice = e.yield(p, opts)
	}
	e.ds = append(e.ds, d)
	return d.choice
}

func (e *encoder) yield(p *harness.Point, opts []harness.Option) int {
	for _, ev := range e.target.Events {
		if ev.In != p.Ctx || ev.At != p.Pos {
			continue
		}
		for i, o := range opts {
			switch {
			case ev.Kind == harness.EvIRQ && o.Kind == harness.OptIRQ,
				ev.Kind == harness.EvNMI && o.Kind == harness.OptNMI,
				ev.Kind == harness.EvRemote && o.Kind == harness.OptRemote && o.Remote == ev.Remote:
				return i
			}
		}
	}
	return 0
}

// order finds the option that commits the region as the target says by
// probing each alternative (options name stores by buffer index, the file
// by site).
func (e *encoder) order(p *harness.Point, opts []harness.Option) int {
	var want *harness.Order
	for i := range e.target.Orders {
		if e.target.Orders[i].Region == p.Pos.Site {
			want = &e.target.Orders[i]
		}
	}
	if want == nil {
		return 0
	}
	for i := 1; i < len(opts); i++ {
		res, err := harness.Run(e.sc, &indexChooser{ds: slices.Clone(e.ds), next: i}, harness.RunOptions{NoOracles: true})
		if err != nil {
			e.err = err
			return 0
		}
		for _, o := range res.Schedule.Orders {
			if o.Region == want.Region && slices.Equal(o.Sites, want.Sites) && slices.Equal(o.Drop, want.Drop) {
				return i
			}
		}
	}
	e.err = fmt.Errorf("no option commits region %s as the schedule says", want.Region)
	return 0
}

// EncodeSchedule returns a choice stream with which Chooser (at any
// density) replays schedule s on scenario sc, and checks that it does. The
// schedule is what replaying s does (a file may name positions no run
// reaches); a replayed region order beyond the bound's R cannot be encoded.
func EncodeSchedule(sc *harness.Scenario, s harness.Schedule) ([]byte, error) {
	rep, err := harness.Run(sc, harness.NewReplay(sc, s), harness.RunOptions{NoOracles: true})
	if err != nil {
		return nil, err
	}
	s = rep.Schedule
	e := &encoder{sc: sc, target: s}
	if _, err := harness.Run(sc, e, harness.RunOptions{NoOracles: true}); err != nil {
		return nil, err
	}
	if e.err != nil {
		return nil, e.err
	}
	// Trailing defaults are what an exhausted stream gives anyway.
	last := len(e.ds)
	for last > 0 && e.ds[last-1].choice == 0 {
		last--
	}
	var out []byte
	for _, d := range e.ds[:last] {
		if d.choice == 0 {
			out = append(out, 0)
			continue
		}
		out = append(out, 0xff)
		switch {
		case d.n > 256:
			out = append(out, byte((d.choice-1)>>8), byte(d.choice-1))
		case d.n > 1:
			out = append(out, byte(d.choice-1))
		}
	}
	// Check the stream replays the schedule.
	for _, density := range []int{1, 8} {
		res, err := harness.Run(sc, NewChooser(out, density), harness.RunOptions{NoOracles: true})
		if err != nil {
			return nil, err
		}
		if got, want := harness.FormatSchedule(sc, res.Schedule), harness.FormatSchedule(sc, s); got != want {
			return nil, fmt.Errorf("the stream replays\n%swant\n%s", got, want)
		}
	}
	return out, nil
}

// MatchShape finds the shape and variant whose scenario is sc, except for
// its name and mutant.
func MatchShape(sc *harness.Scenario) (shape int, ok bool) {
	want := scenarioText(sc)
	for i, s := range Shapes {
		c := s.Make(sc.Variant)
		c.Name, c.Mutant = sc.Name, sc.Mutant
		if bytes.Equal(scenarioText(c), want) {
			return i, true
		}
	}
	return 0, false
}

func scenarioText(sc *harness.Scenario) []byte {
	return (&harness.File{Scenario: sc}).Format()
}

// ScheduleInput turns a schedule file into a FuzzSchedule input. If the
// file's scenario is one of Shapes, the input replays its schedule exactly;
// otherwise (a minimized corpus scenario) its events and orders are
// projected onto std of the same variant: what a replay of them on std
// realizes (remote actions matched by label) becomes the input, if
// anything. Any mutant is dropped: the inputs seed the baseline campaign.
func ScheduleInput(f *harness.File, density int) ([]byte, error) {
	sc, s := f.Scenario, f.Schedule
	shape, ok := MatchShape(sc)
	if !ok {
		shape = 0
		std := Shapes[shape].Make(sc.Variant)
		var proj harness.Schedule
		for _, e := range s.Events {
			if e.Kind == harness.EvRemote {
				label := sc.Remotes[e.Remote].Label(sc)
				e.Remote = -1
				for i, r := range std.Remotes {
					if r.Label(std) == label {
						e.Remote = i
					}
				}
				if e.Remote < 0 {
					continue
				}
			}
			proj.Events = append(proj.Events, e)
		}
		proj.Orders = s.Orders
		res, err := harness.Run(std, harness.NewReplay(std, proj), harness.RunOptions{NoOracles: true})
		if err != nil {
			return nil, err
		}
		if res.Schedule.Len() == 0 {
			return nil, fmt.Errorf("scenario %s is not a fuzz shape and none of its schedule happens on std", sc.Name)
		}
		sc, s = std, res.Schedule
	}
	stream, err := EncodeSchedule(sc, s)
	if err != nil {
		return nil, err
	}
	return append(Header(sc.Variant, shape, density, Options{}, 0), stream...), nil
}
