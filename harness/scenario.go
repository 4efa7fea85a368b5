package harness

import (
	"fmt"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// OpKind is one step of a context's program.
type OpKind uint8

const (
	OpCall   OpKind = iota // call F: a traced call of function F
	OpTail                 // tail F: the current function tail-calls F
	OpRet                  // ret: return from the current function
	OpSleep                // sleep: the task sleeps; the next task runs until it sleeps or ends
	OpUnwind               // unwind: walk the current task with ftrace_graph_ret_addr and ftrace_graph_get_ret_stack
	OpExit                 // exit: the task exits (ftrace_graph_exit_task)
)

var opNames = [...]string{"call", "tail", "ret", "sleep", "unwind", "exit"}

func (k OpKind) String() string { return opNames[k] }

// Op is one program step.
type Op struct {
	Kind OpKind
	Func int // for call and tail
}

func (o Op) String() string {
	if o.Kind == OpCall || o.Kind == OpTail {
		return fmt.Sprintf("%s %d", o.Kind, o.Func)
	}
	return o.Kind.String()
}

// User is a declarative user (fgraph_ops) of a scenario.
type User struct {
	Name        string
	Filter      []int // empty: every function
	Accept      []int // empty: every function that passed the filter
	DataBytes   int
	CallInEntry int // a traced function the entryfunc calls (F14); 0: none
	// RejectAfter lists functions for which entryfunc reserves its data
	// and then returns 0 (the kernel must discard the reservation).
	RejectAfter []int
	// ParentDepth, if non-zero, makes the user read the shadow stack as
	// the function profiler does (fgraph.Ops.ParentDepth): its own frame
	// and the one ParentDepth levels up, from its callbacks.
	ParentDepth int
}

// RemoteKind is an action of another CPU.
type RemoteKind uint8

const (
	RemoteRegister   RemoteKind = iota // register a user
	RemoteUnregister                   // unregister a user
	RemoteUnwind                       // unwind a task's stack from another CPU
	RemoteReplace                      // unregister User, then register With (switching tracers)
)

var remoteNames = [...]string{"register", "unregister", "unwind", "replace"}

func (k RemoteKind) String() string { return remoteNames[k] }

// Remote is one remote-CPU action available to the scheduler.
type Remote struct {
	Kind RemoteKind
	User int // register, unregister, replace
	With int // replace: the user registered after User is unregistered
	Task int // unwind
}

// Label is the remote action as written in files: "unregister u1".
func (r Remote) Label(s *Scenario) string {
	switch r.Kind {
	case RemoteUnwind:
		return fmt.Sprintf("unwind task%d", r.Task)
	case RemoteReplace:
		return fmt.Sprintf("replace %s %s", s.Users[r.User].Name, s.Users[r.With].Name)
	}
	return fmt.Sprintf("%s %s", r.Kind, s.Users[r.User].Name)
}

// Bound limits the exploration.
type Bound struct {
	K int // interrupts per run (IRQ and NMI deliveries)
	D int // nesting depth of interrupts
	R int // static regions committed in a non-program order
	E int // remote events per run
	// C caps the non-default choices of a run (interrupts, remote events
	// and reordered regions together), CHESS-style; 0 means no cap.
	C int
}

func (b Bound) String() string {
	if b.C > 0 {
		return fmt.Sprintf("K=%d D=%d R=%d E=%d C=%d", b.K, b.D, b.R, b.E, b.C)
	}
	return fmt.Sprintf("K=%d D=%d R=%d E=%d", b.K, b.D, b.R, b.E)
}

// spent reports whether the choice cap is reached.
func (b Bound) spent(k, r, e int) bool { return b.C > 0 && k+r+e >= b.C }

// Fixes are the fix variants (proposals, not upstream) and arch settings.
type Fixes struct {
	NoBit0      bool
	GenCounter  bool
	EntryForAll bool
	// ReserveIrqOff is the fix variant for the reserve-window finding:
	// interrupts masked across fgraph_reserve_data.
	ReserveIrqOff bool
	// RetpGuard is the fix variant for the inflight-ret-addr finding.
	RetpGuard bool
	// DirectFallback is the fix variant for the direct-switch-race finding.
	DirectFallback bool
	// NoTransition is the fix variant for the recursion-transition finding.
	NoTransition bool
}

// fixTable names every fix, in file order, with its field: the one place
// the format, the CLI and the corpus learn the names from.
var fixTable = []struct {
	name string
	on   func(*Fixes) *bool
}{
	{"no-bit0", func(f *Fixes) *bool { return &f.NoBit0 }},
	{"gen-counter", func(f *Fixes) *bool { return &f.GenCounter }},
	{"entry-for-all", func(f *Fixes) *bool { return &f.EntryForAll }},
	{"reserve-irqoff", func(f *Fixes) *bool { return &f.ReserveIrqOff }},
	{"retp-guard", func(f *Fixes) *bool { return &f.RetpGuard }},
	{"direct-fallback", func(f *Fixes) *bool { return &f.DirectFallback }},
	{"no-transition", func(f *Fixes) *bool { return &f.NoTransition }},
}

// FixNames lists the fix names in canonical order.
func FixNames() []string {
	out := make([]string, len(fixTable))
	for i, x := range fixTable {
		out[i] = x.name
	}
	return out
}

// Set switches the named fix on; false for an unknown name.
func (f *Fixes) Set(name string) bool {
	for _, x := range fixTable {
		if x.name == name {
			*x.on(f) = true
			return true
		}
	}
	return false
}

// Names lists the fixes switched on, in canonical order.
func (f Fixes) Names() []string {
	var out []string
	for _, x := range fixTable {
		if *x.on(&f) {
			out = append(out, x.name)
		}
	}
	return out
}

// fixList is "a, b or c" for error messages.
func fixList() string {
	n := FixNames()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Scenario is everything a run needs besides the schedule.
type Scenario struct {
	Name       string
	Variant    fgraph.Variant
	FrameWords int // 0: the variant's default
	StackWords int
	Fixes      Fixes
	Mutant     fgraph.Mutant // 0: none

	Users []User
	// Setup lists the users registered before the run, in order.
	Setup []int
	// Tasks are the task programs; task 0 runs first.
	Tasks [][]Op
	// IRQ runs at nesting level 1, NMI at level 2 and deeper.
	IRQ []Op
	NMI []Op
	// Remotes are the remote-CPU actions the scheduler may deliver.
	Remotes []Remote

	Bound Bound
	// StoresOnly delivers interrupts only at store commits (peer-spin).
	StoresOnly bool
	// Alias models GCC's -fno-strict-aliasing knowledge: stores through
	// the ret_stack pointer keep their order against each other and
	// against stores to task fields.
	Alias bool
	// AnyReader adds the any-instant walker to the real readers
	// (readers.go): the offset chain and every frame are checked at every
	// yield point, whether or not a reader of the kernel would look there,
	// and another CPU may unwind a running task. Its verdicts say so.
	AnyReader bool
	// Target, if set, runs instead of the port (not part of the file
	// format: fgcheck --kernel sets it).
	Target Target
}

// Config is the fgraph configuration of the scenario.
func (s *Scenario) Config() fgraph.Config {
	c := fgraph.DefaultConfig(s.Variant)
	if s.FrameWords != 0 {
		c.FrameWords = s.FrameWords
	}
	if s.StackWords != 0 {
		c.StackWords = s.StackWords
	}
	c.Tasks = len(s.Tasks)
	c.NoBit0 = s.Fixes.NoBit0
	c.GenCounter = s.Fixes.GenCounter
	c.EntryForAll = s.Fixes.EntryForAll
	c.ReserveIrqOff = s.Fixes.ReserveIrqOff
	c.RetpGuard = s.Fixes.RetpGuard
	c.DirectFallback = s.Fixes.DirectFallback
	c.NoTransition = s.Fixes.NoTransition
	if s.Mutant != 0 {
		c.Mutants = c.Mutants.With(s.Mutant)
		mi := s.Mutant.Info()
		c.NoBit0 = c.NoBit0 || mi.NoBit0
		c.GenCounter = c.GenCounter || mi.GenCounter
		c.EntryForAll = c.EntryForAll || mi.EntryForAll
	}
	return c
}

// Validate reports misuse: unknown users, bad programs, bad bounds.
func (s *Scenario) Validate() error {
	if len(s.Tasks) == 0 {
		return fmt.Errorf("scenario %s: no task program", s.Name)
	}
	if err := s.Config().Validate(); err != nil {
		return fmt.Errorf("scenario %s: %v", s.Name, err)
	}
	if len(s.Users) > fgraph.MaxOps {
		return fmt.Errorf("scenario %s: %d users, at most %d", s.Name, len(s.Users), fgraph.MaxOps)
	}
	for _, u := range s.Setup {
		if u < 0 || u >= len(s.Users) {
			return fmt.Errorf("scenario %s: setup names user %d of %d", s.Name, u, len(s.Users))
		}
	}
	for _, r := range s.Remotes {
		if r.Kind != RemoteUnwind && (r.User < 0 || r.User >= len(s.Users)) {
			return fmt.Errorf("scenario %s: remote names user %d of %d", s.Name, r.User, len(s.Users))
		}
		if r.Kind == RemoteReplace && (r.With < 0 || r.With >= len(s.Users) || r.With == r.User) {
			return fmt.Errorf("scenario %s: remote replace names user %d of %d", s.Name, r.With, len(s.Users))
		}
		if r.Kind == RemoteUnwind && (r.Task < 0 || r.Task >= len(s.Tasks)) {
			return fmt.Errorf("scenario %s: remote unwind of task %d of %d", s.Name, r.Task, len(s.Tasks))
		}
	}
	for i, p := range s.Tasks {
		if err := checkProgram(p, true); err != nil {
			return fmt.Errorf("scenario %s: task %d: %v", s.Name, i, err)
		}
	}
	if err := checkProgram(s.IRQ, false); err != nil {
		return fmt.Errorf("scenario %s: irq: %v", s.Name, err)
	}
	if err := checkProgram(s.NMI, false); err != nil {
		return fmt.Errorf("scenario %s: nmi: %v", s.Name, err)
	}
	b := s.Bound
	if b.K < 0 || b.D < 0 || b.R < 0 || b.E < 0 || b.D > 6 || b.K > 16 {
		return fmt.Errorf("scenario %s: bad bound %v", s.Name, b)
	}
	return nil
}

// checkProgram checks calls and returns balance: an interrupt must return
// from everything it calls; a task may end with open calls only if it exits.
// It also checks the size limits of limits.go.
func checkProgram(p []Op, task bool) error {
	if len(p) > MaxProgramOps {
		return fmt.Errorf("%d ops, at most %d (harness.MaxProgramOps)", len(p), MaxProgramOps)
	}
	depth := 0
	for i, op := range p {
		switch op.Kind {
		case OpCall:
			if op.Func <= 0 || op.Func >= 0xfff0 {
				return fmt.Errorf("op %d: function %d out of range 1..65519", i+1, op.Func)
			}
			depth++
			if depth > MaxCallDepth {
				return fmt.Errorf("op %d: more than %d open calls (harness.MaxCallDepth)", i+1, MaxCallDepth)
			}
		case OpTail:
			if depth == 0 {
				return fmt.Errorf("op %d: tail call outside a function", i+1)
			}
			if op.Func <= 0 || op.Func >= 0xfff0 {
				return fmt.Errorf("op %d: function %d out of range", i+1, op.Func)
			}
		case OpRet:
			if depth == 0 {
				return fmt.Errorf("op %d: ret with no open call", i+1)
			}
			depth--
		case OpSleep, OpExit:
			if !task {
				return fmt.Errorf("op %d: %s in an interrupt", i+1, op.Kind)
			}
		}
	}
	if depth != 0 && !task {
		return fmt.Errorf("%d calls never return", depth)
	}
	return nil
}
