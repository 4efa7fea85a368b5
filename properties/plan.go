package properties

import (
	"fmt"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// StepKind is the kind of one step of a Plan.
type StepKind uint8

const (
	// StepOp runs one task-level operation. In a generated plan it appends
	// Step.Op (call, tail, ret or unwind) to the running task; in a fixed
	// plan it only advances to the next operation of the fixed program.
	StepOp StepKind = iota
	// StepSleep (generated plans) makes the running task sleep; the next
	// task takes the CPU.
	StepSleep
	// StepIRQ, StepNMI and StepRemote inject an interrupt or a remote-CPU
	// action during the next operation: after Skip offered choice points of
	// that operation have passed, at the first point that offers the kind.
	StepIRQ
	StepNMI
	StepRemote
	// StepOrder commits the Nth static region the run offers a choice for
	// in its Alt-th non-program order.
	StepOrder
)

// Step is one command of a Plan.
type Step struct {
	Kind   StepKind
	Op     harness.Op // StepOp in a generated plan
	Skip   int        // StepIRQ, StepNMI, StepRemote
	Remote int        // StepRemote: index into Scenario.Remotes
	Nth    int        // StepOrder
	Alt    int        // StepOrder
}

func (s Step) String() string {
	switch s.Kind {
	case StepOp:
		if s.Op == (harness.Op{}) {
			return "step"
		}
		return s.Op.String()
	case StepSleep:
		return "sleep"
	case StepIRQ:
		return fmt.Sprintf("irq+%d", s.Skip)
	case StepNMI:
		return fmt.Sprintf("nmi+%d", s.Skip)
	case StepRemote:
		return fmt.Sprintf("remote%d+%d", s.Remote, s.Skip)
	case StepOrder:
		return fmt.Sprintf("order%d/%d", s.Nth, s.Alt)
	}
	return fmt.Sprintf("Step(%d)", s.Kind)
}

// Plan is a stateful property's test case as data: a base scenario and a
// list of task-level operations and injections. Build turns it into a
// scenario and a deterministic Chooser, so a plan is replayed exactly by
// harness.Run and printed as a canonical schedule file.
//
// A generated plan (Fixed false) takes the users, interrupt programs,
// remotes and bound from Base and builds the task programs from its op and
// sleep steps, always appending to the task that runs last, so the
// execution order is the step order. A fixed plan (Fixed true) runs Base's
// task programs unchanged; its op steps only count operations, so an
// injection lands in the operation it precedes.
type Plan struct {
	Base  *harness.Scenario
	Fixed bool
	// Tasks is the number of tasks of a generated plan (1..8).
	Tasks int
	Steps []Step
}

// Cursor is what a plan's prefix has built: the running task, the open
// calls of each task and the number of operations that will execute.
type Cursor struct {
	Cur   int
	Depth []int
	Ops   int
}

// cursor replays the op and sleep steps.
func (p *Plan) cursor() (Cursor, [][]harness.Op) {
	n := p.Tasks
	if p.Fixed || n < 1 {
		n = 1
	}
	c := Cursor{Depth: make([]int, n)}
	progs := make([][]harness.Op, n)
	for _, s := range p.Steps {
		switch s.Kind {
		case StepOp:
			if p.Fixed {
				c.Ops++
				continue
			}
			if !c.valid(s.Op) {
				continue
			}
			progs[c.Cur] = append(progs[c.Cur], s.Op)
			switch s.Op.Kind {
			case harness.OpCall:
				c.Depth[c.Cur]++
			case harness.OpRet:
				c.Depth[c.Cur]--
			}
			c.Ops++
		case StepSleep:
			if p.Fixed {
				continue
			}
			progs[c.Cur] = append(progs[c.Cur], harness.Op{Kind: harness.OpSleep})
			c.Cur = (c.Cur + 1) % n
		}
	}
	return c, progs
}

// Cursor returns the state after the plan's steps.
func (p *Plan) Cursor() Cursor {
	c, _ := p.cursor()
	return c
}

// valid reports whether op may run next in the running task: ret and tail
// need an open call.
func (c *Cursor) valid(op harness.Op) bool {
	switch op.Kind {
	case harness.OpCall:
		return op.Func > 0
	case harness.OpTail:
		return op.Func > 0 && c.Depth[c.Cur] > 0
	case harness.OpRet:
		return c.Depth[c.Cur] > 0
	case harness.OpUnwind:
		return true
	}
	return false
}

// Valid reports whether a generated plan may take op next.
func (p *Plan) Valid(op harness.Op) bool {
	c := p.Cursor()
	return c.valid(op)
}

// Scenario returns the scenario the plan runs.
func (p *Plan) Scenario() *harness.Scenario {
	sc := *p.Base
	if p.Fixed {
		return &sc
	}
	_, progs := p.cursor()
	sc.Tasks = progs
	return &sc
}

// injection is a pending StepIRQ/StepNMI/StepRemote.
type injection struct {
	kind   harness.OptKind
	remote int
	skip   int
}

// Chooser returns the plan's deterministic chooser; it keeps per-run state,
// so use a new one for every run.
func (p *Plan) Chooser() harness.Chooser {
	c := &planChooser{op: -1, orders: map[int]int{}}
	// Count operations exactly as cursor does (invalid generated ops are
	// dropped) and attach injections to the operation they precede.
	cur := Cursor{Depth: make([]int, max(p.Tasks, 1))}
	ops := 0
	for _, s := range p.Steps {
		switch s.Kind {
		case StepOp:
			if !p.Fixed {
				if !cur.valid(s.Op) {
					continue
				}
				switch s.Op.Kind {
				case harness.OpCall:
					cur.Depth[cur.Cur]++
				case harness.OpRet:
					cur.Depth[cur.Cur]--
				}
			}
			ops++
		case StepSleep:
			if !p.Fixed {
				cur.Cur = (cur.Cur + 1) % len(cur.Depth)
			}
		case StepIRQ, StepNMI, StepRemote:
			for len(c.inj) <= ops {
				c.inj = append(c.inj, nil)
			}
			in := injection{kind: harness.OptIRQ, skip: s.Skip}
			switch s.Kind {
			case StepNMI:
				in.kind = harness.OptNMI
			case StepRemote:
				in.kind, in.remote = harness.OptRemote, s.Remote
			}
			c.inj[ops] = append(c.inj[ops], in)
		case StepOrder:
			if _, dup := c.orders[s.Nth]; !dup {
				c.orders[s.Nth] = s.Alt
			}
		}
	}
	return c
}

// planChooser follows a plan. It tells task-level operations apart by their
// op.start yield points: when such a point is not offered to the chooser,
// no interrupt or remote action can be offered later in the run either
// (the bounds only get used up), so the count is exact wherever it matters.
type planChooser struct {
	inj    [][]injection // by operation, in execution order
	orders map[int]int
	op     int // current task-level operation
	head   int // next injection of the operation
	seen   int // offered points of the operation since the last injection
	norder int
}

func (c *planChooser) Choose(p *harness.Point, opts []harness.Option) int {
	if p.Kind == harness.PointOrder {
		n := c.norder
		c.norder++
		if alt, ok := c.orders[n]; ok {
			return 1 + alt%(len(opts)-1)
		}
		return 0
	}
	if p.Level == 0 && p.Pos.Site == fgraph.SiteOpStart {
		c.op++
		c.head, c.seen = 0, 0
	}
	if c.op < 0 || c.op >= len(c.inj) || c.head >= len(c.inj[c.op]) {
		return 0
	}
	in := c.inj[c.op][c.head]
	if c.seen < in.skip {
		c.seen++
		return 0
	}
	for i, o := range opts {
		if o.Kind == in.kind && (o.Kind != harness.OptRemote || o.Remote == in.remote) {
			c.head++
			c.seen = 0
			return i
		}
	}
	return 0
}

// String lists the steps.
func (p *Plan) String() string {
	s := make([]string, len(p.Steps))
	for i, st := range p.Steps {
		s[i] = st.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// Run runs the plan once.
func (p *Plan) Run() (*harness.Result, error) {
	return harness.Run(p.Scenario(), p.Chooser(), harness.RunOptions{})
}
