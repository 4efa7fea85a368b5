package harness

import (
	"fmt"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TraceKind is what a TraceEvent records.
type TraceKind uint8

const (
	TraceNote      TraceKind = iota // setup, a task going to sleep
	TraceOp                         // a context starts an op of its program ("task0 call 1")
	TraceCommit                     // a store reaches memory: Site, Addr, Where, Value
	TraceBarrier                    // a compiler region ends at Site (barrier(), smp_wmb(), a callback call or return, irq save/restore); not in the text trace
	TraceOrder                      // the chooser picked a commit order other than program order for the region Site
	TraceDrop                       // a dead store at Site is dropped from its region
	TraceEnter                      // an IRQ, NMI or remote action starts: Ctx is the new context
	TraceExit                       // it returns (remote: it is done)
	TraceKnown                      // a violation excused as a known finding
	TraceViolation                  // a violation
	TracePicture                    // Picture holds the shadow stacks at this point
)

var traceKindNames = [...]string{"note", "op", "commit", "barrier", "order", "drop", "enter", "exit", "known", "violation", "picture"}

func (k TraceKind) String() string {
	if int(k) < len(traceKindNames) {
		return traceKindNames[k]
	}
	return fmt.Sprintf("TraceKind(%d)", k)
}

// Context kinds of TraceEvent.CtxKind.
const (
	CtxTask   = "task"
	CtxIRQ    = "irq"
	CtxNMI    = "nmi"
	CtxRemote = "remote"
)

// TraceEvent is one step of a traced run (RunOptions.Trace), in order. The
// text trace (Result.Trace) is derived from the events by TraceText; the
// HTML report (package report) renders the same events.
type TraceEvent struct {
	Kind TraceKind
	// Level is the nesting level the event is drawn at: 0 for a task, 1 for
	// an IRQ or a remote action in a task, 2 for an NMI in an IRQ, ...
	Level int
	// Ctx names the context: "task0", an interrupt's event id ("1"), or
	// "remote 3" for a remote action; CtxKind is CtxTask, CtxIRQ, CtxNMI or
	// CtxRemote. Empty for setup notes.
	Ctx, CtxKind string
	// Site is the yield point of a commit, barrier or drop, the region of an
	// order choice, the position of an enter event ("push.w2#1").
	Site string
	// Addr is the address in fgraph.Machine.Mem of a commit, Where its name
	// ("task0 ret_stack[3]", "fgraph_array[1]"), Value the value stored.
	Addr  int
	Where string
	Value uint64
	// Decoded describes the value of a commit to a shadow-stack word ("BITMAP
	// bits={0} offset=3", "f1+0x4"); "" for other words.
	Decoded string
	// Text is the event's line of the text trace, without indentation.
	Text string
	// Picture is set for TracePicture.
	Picture *Picture
}

// InText reports whether the event has a place in the text trace (barriers
// are only in the events: the text trace predates them and stays compact).
func (e *TraceEvent) InText() bool { return e.Kind != TraceBarrier }

// TraceText is the text trace of events: one line per event, indented two
// spaces per nesting level; a picture takes several lines.
func TraceText(events []TraceEvent) []string {
	var out []string
	for i := range events {
		e := &events[i]
		if !e.InText() {
			continue
		}
		ind := strings.Repeat("  ", e.Level)
		if e.Picture != nil {
			for _, l := range e.Picture.Lines() {
				out = append(out, strings.TrimRight(ind+l, " "))
			}
			continue
		}
		out = append(out, ind+e.Text)
	}
	return out
}

// MaxTraceEvents caps the events a traced run keeps: the first half, and
// the latest half in a ring, with a note between saying how many were left
// out. The run of a program of MaxProgramOps interrupted 16 times makes
// about a million; kept whole they took 0.8 GB (3.8 GB for the page).
const MaxTraceEvents = 1 << 17

// tracer collects the events of a traced run.
type tracer struct {
	events  []TraceEvent    // the head, then (once full) the ring
	ring    int             // the ring's oldest slot, once full
	dropped int64           // events overwritten in the ring
	prev    [][]fgraph.Word // by task: the stack words at its latest picture
}

// add keeps e and returns where it is kept (until the next add).
func (t *tracer) add(e TraceEvent) *TraceEvent {
	if len(t.events) < MaxTraceEvents {
		t.events = append(t.events, e)
		return &t.events[len(t.events)-1]
	}
	head := MaxTraceEvents / 2
	i := head + t.ring
	t.events[i] = e
	t.ring = (t.ring + 1) % (MaxTraceEvents - head)
	t.dropped++
	return &t.events[i]
}

// last is the event added last.
func (t *tracer) last() *TraceEvent {
	if t.dropped == 0 {
		return &t.events[len(t.events)-1]
	}
	head := MaxTraceEvents / 2
	return &t.events[head+(t.ring+MaxTraceEvents-head-1)%(MaxTraceEvents-head)]
}

// all is the kept events in order, with the note where some were left out.
func (t *tracer) all() []TraceEvent {
	if t.dropped == 0 {
		return t.events
	}
	head := MaxTraceEvents / 2
	out := make([]TraceEvent, 0, MaxTraceEvents+1)
	out = append(out, t.events[:head]...)
	out = append(out, TraceEvent{Kind: TraceNote, Text: fmt.Sprintf("... %d events left out: a traced run keeps the first %d and the last %d (harness.MaxTraceEvents)", t.dropped, head, MaxTraceEvents-head)})
	out = append(out, t.events[head+t.ring:]...)
	return append(out, t.events[head:head+t.ring]...)
}

// ctxKind is the CtxKind of a context.
func ctxKind(c *ctx) string {
	switch {
	case c.level == 0:
		return CtxTask
	case c.kind == EvNMI:
		return CtxNMI
	default:
		return CtxIRQ
	}
}

// trace records an event of context c (nil: a setup note) at c's level.
func (r *runner) trace(c *ctx, k TraceKind, text string) *TraceEvent {
	if r.tr == nil || r.stopped {
		return nil
	}
	e := TraceEvent{Kind: k, Text: text}
	if c != nil {
		e.Level, e.Ctx, e.CtxKind = c.level, c.name, ctxKind(c)
	}
	return r.tr.add(e)
}

// tracef records an event of context c with a formatted text.
func (r *runner) tracef(c *ctx, k TraceKind, format string, args ...any) *TraceEvent {
	if r.tr == nil || r.stopped {
		return nil
	}
	return r.trace(c, k, fmt.Sprintf(format, args...))
}

// tracePicture records the shadow stacks of tasks at level.
func (r *runner) tracePicture(level int, label string, tasks ...int) {
	if r.tr == nil || r.stopped {
		return
	}
	r.tr.add(TraceEvent{Kind: TracePicture, Level: level, Text: label, Picture: r.picture(label, tasks)})
}

// fenceText names a region boundary for the trace.
var fenceText = [...]string{
	fgraph.Barrier: "barrier()",
	fgraph.SmpRmb:  "smp_rmb()",
	fgraph.SmpWmb:  "smp_wmb()",
	fgraph.CallIn:  "calls an opaque function",
	fgraph.CallOut: "returns from an opaque function",
	fgraph.OpEnd:   "end of op",
	fgraph.IrqOff:  "local_irq_save()",
	fgraph.IrqOn:   "local_irq_restore()",
}

// addrName names the word at a: a task field, a shadow-stack word or a global.
func (r *runner) addrName(a fgraph.Addr) string {
	m := r.m
	for t := range r.sc.Tasks {
		b := m.TaskBase(t)
		switch {
		case a >= b && a < b+fgraph.TaskWords:
			names := [...]string{"ret_stack", "curr_ret_stack", "curr_ret_depth", "trace_overrun", "recursion bits"}
			if i := int(a - b); i < len(names) {
				return fmt.Sprintf("task%d %s", t, names[i])
			}
			return fmt.Sprintf("task%d field %d", t, a-b)
		case a >= b+fgraph.TaskWords && a < b+fgraph.TaskWords+fgraph.Addr(r.cfg.StackWords):
			return fmt.Sprintf("task%d ret_stack[%d]", t, a-b-fgraph.TaskWords)
		}
	}
	for _, g := range globalNames {
		if a >= g.base && a < g.base+g.n {
			if g.n == 1 {
				return g.name
			}
			return fmt.Sprintf("%s[%d]", g.name, a-g.base)
		}
	}
	if a >= fgraph.AddrOps && a < fgraph.AddrOps+fgraph.MaxOps*fgraph.OpsWords {
		k, f := int(a-fgraph.AddrOps)/fgraph.OpsWords, int(a-fgraph.AddrOps)%fgraph.OpsWords
		name := fmt.Sprintf("ops %d", k)
		if k < len(r.sc.Users) {
			name = r.sc.Users[k].Name
		}
		if f == fgraph.OpsReady {
			return name + " ready"
		}
		return name + " idx"
	}
	return ""
}

// globalNames names the global words and arrays of fgraph.Machine.Mem by
// their kernel names.
var globalNames = []struct {
	base fgraph.Addr
	n    fgraph.Addr // words: 1 for a variable, the length of an array
	name string
}{
	{fgraph.AddrArray, fgraph.FgraphArraySize, "fgraph_array"},
	{fgraph.AddrBitmask, 1, "fgraph_array_bitmask"},
	{fgraph.AddrActive, 1, "ftrace_graph_active"},
	{fgraph.AddrDoDirect, 1, "fgraph_do_direct"},
	{fgraph.AddrDirectGops, 1, "fgraph_direct_gops"},
	{fgraph.AddrFunc, 1, "fgraph_func"},
	{fgraph.AddrRetfunc, 1, "fgraph_retfunc"},
	{fgraph.AddrLRU, fgraph.FgraphArraySize, "fgraph_lru_table"},
	{fgraph.AddrLRUNext, 1, "fgraph_lru_next"},
	{fgraph.AddrLRULast, 1, "fgraph_lru_last"},
	{fgraph.AddrDead, 1, "kill_ftrace_graph"},
	{fgraph.AddrArrayCnt, 1, "fgraph_array_cnt"},
	{fgraph.AddrSlotGen, fgraph.FgraphArraySize, "slot generation"},
}

// DecodeWord describes a word of a shadow stack whose role is not known:
// a meta word if it can be one, else a text address, a retp or a payload.
func DecodeWord(w fgraph.Word) string {
	r := runner{sc: &Scenario{}}
	return r.guessWord(w)
}

// traceRemote records the start or end of a remote action, drawn as a
// context nested in the one it interrupts.
func (r *runner) traceRemote(rc *ctx, k TraceKind, text, site string) {
	if r.tr == nil || r.stopped {
		return
	}
	r.tr.add(TraceEvent{Kind: k, Level: rc.level, Ctx: rc.name, CtxKind: CtxRemote, Site: site, Text: text})
	if k == TraceEnter {
		r.remoteCtx = rc
	} else {
		r.remoteCtx = nil
	}
}

// traceViolation records a violation or known finding in the context that
// detected it (a remote action's, while one runs).
func (r *runner) traceViolation(k TraceKind, prefix string, v Violation) {
	if r.tr == nil || r.stopped {
		return
	}
	e := TraceEvent{Kind: k, Ctx: v.At, Text: prefix + " " + v.String()}
	if len(r.ctxs) > 0 {
		c := r.top()
		e.Level, e.CtxKind = c.level, ctxKind(c)
	}
	if rc := r.remoteCtx; rc != nil {
		e.Level, e.Ctx, e.CtxKind = rc.level, rc.name, CtxRemote
	}
	r.tr.add(e)
}
