package harness

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// MinimizeOptions configure Minimize. The zero value is valid.
type MinimizeOptions struct {
	// Strict replays every candidate with the known-finding allowances
	// off (RunOptions.Strict), so that a known kernel finding can be
	// minimized; the input must then fail strictly.
	Strict bool
	// MaxReplays bounds the candidate replays; 0 means no bound. When the
	// bound stops the search, MinimizeStats.Minimal is false.
	MaxReplays int
	// Stop, if set, is asked between two candidates; once it says true
	// (a time budget ran out) the search ends and the smallest file so far
	// is returned, with MinimizeStats.Minimal false.
	Stop func() bool
	// run holds unexported test hooks for every replay (RunOptions.wrap).
	run RunOptions
	// MaxLiftOcc is the highest occurrence tried when a nested event is
	// lifted to its parent's context (0 means 24).
	MaxLiftOcc int
	// Known, if set, names a known finding (KnownFindings) to minimize
	// instead of a violation: a candidate is kept if its non-strict replay
	// has no violation and reports that finding (others may show too).
	// Strict is then ignored; the target oracle is the finding's.
	Known string
	// Keep, if set, is a further condition every kept candidate must meet,
	// and the input too: for example that the same schedule passes with
	// the mutant switched off, so that minimizing never wanders into a
	// scenario where the baseline fails as well.
	Keep func(*File) bool

	_ struct{}
}

// FileSize measures a file for the minimizer's report.
type FileSize struct {
	Events int // injected interrupts and remote events
	Orders int // reordered regions
	Ops    int // ops of every task, irq and nmi program
	Tasks  int
	Users  int
}

// SizeOf measures f.
func SizeOf(f *File) FileSize {
	s := FileSize{Events: len(f.Schedule.Events), Orders: len(f.Schedule.Orders)}
	if sc := f.Scenario; sc != nil {
		for _, t := range sc.Tasks {
			s.Ops += len(t)
		}
		s.Ops += len(sc.IRQ) + len(sc.NMI)
		s.Tasks, s.Users = len(sc.Tasks), len(sc.Users)
	}
	return s
}

// Lines is the schedule's length in lines: events plus orders.
func (s FileSize) Lines() int { return s.Events + s.Orders }

func (s FileSize) String() string {
	return fmt.Sprintf("%s (%s, %s), %s, %s, %s", plural(s.Lines(), "schedule line"), plural(s.Events, "event"),
		plural(s.Orders, "order"), plural(s.Ops, "op"), plural(s.Tasks, "task"), plural(s.Users, "user"))
}

// MinimizeStats describe one minimization.
type MinimizeStats struct {
	// Oracle is the target: the oracle of the input's first violation.
	Oracle string
	// Msg is the violation of the minimized file.
	Msg           string
	Before, After FileSize
	// Replays counts the candidates replayed; Accepted those kept.
	Replays, Accepted int
	// Minimal reports that the search reached its fixpoint: the result is
	// 1-minimal (see Minimize). False only when MaxReplays stopped it.
	Minimal bool
}

// ErrNoViolation is returned by Minimize for a file whose replay does not
// fail.
var ErrNoViolation = errors.New("the file's schedule does not fail")

// Minimize shrinks a failing file to a 1-minimal one that fails with the
// same oracle. The target is the oracle of the first violation of f's
// replay (strict if opt.Strict); a file that does not fail is an error
// wrapping ErrNoViolation, a scenario that does not validate an error, and
// so is an input that does not meet opt.Keep. With opt.Known the target is
// that known finding instead (see MinimizeOptions).
//
// The search is greedy and runs to a fixpoint. It tries candidates in
// domain order and, after each one it keeps, starts again from the first
// kind:
//
//  1. fewer events: drop one event and every event nested in it;
//  2. shallower nesting: lift an event nested in an interrupt into the
//     interrupted context (an nmi in an irq becomes an irq in the task, a
//     remote event in an interrupt moves to the task), at the same site
//     and occurrence 1..MaxLiftOcc, listed before its old parent or in
//     its own place;
//  3. fewer reordered regions: drop an order line, or one dead store it
//     drops;
//  4. earlier sites: move an event to an earlier occurrence of its site
//     (lowest first);
//  5. a smaller scenario: truncate a task program, drop a call and its
//     matching ret, drop a tail, sleep, unwind or exit, the same for the
//     irq and nmi programs (not truncation: they must stay balanced), drop
//     a task, drop a user (with the remote actions and events that name
//     it), drop a user from the setup, drop a remote action (with its
//     events), and simplify a user (data=0, no callin, one fewer function
//     in filter, accept or reject).
//
// A candidate is kept only if it formats to a file that ParseFile accepts,
// its replay fails with the target oracle (or, with opt.Known, shows the
// finding), and it meets opt.Keep. Event ids are renumbered 1..n
// in file order and in= references follow; after a candidate is kept the
// schedule is replaced by the one its replay recorded (what actually fired,
// with the ids the run gave), so the result lists only events that fire. At
// the fixpoint no single candidate of any kind above fails with the target
// oracle: the result is 1-minimal with respect to them. Finally the bound
// is tightened to the schedule (K, D, R, E as used, no C) if that still
// fails the same way.
//
// The result has no comments and expects "violation ORACLE"; f is not
// modified.
func Minimize(f *File, opt MinimizeOptions) (*File, MinimizeStats, error) {
	var st MinimizeStats
	if f == nil || f.Scenario == nil {
		return nil, st, fmt.Errorf("minimize: no scenario")
	}
	if opt.MaxLiftOcc <= 0 {
		opt.MaxLiftOcc = 24
	}
	if opt.Known != "" {
		opt.Strict = false
	}
	ro := opt.run
	ro.Strict = opt.Strict
	res, err := Replay(f, ro)
	if err != nil {
		return nil, st, fmt.Errorf("minimize: %v", err)
	}
	m := &minimizer{opt: opt, st: &st}
	v, ok := m.target1(res)
	if !ok {
		switch {
		case opt.Known != "" && res.Failed():
			return nil, st, fmt.Errorf("minimize: %w of the known finding %s alone (it fails with %s)", ErrNoViolation, opt.Known, res.Violations[0])
		case opt.Known != "":
			return nil, st, fmt.Errorf("minimize: %w: the known finding %s does not show", ErrNoViolation, opt.Known)
		case len(res.Known) > 0 && !opt.Strict:
			return nil, st, fmt.Errorf("minimize: %w (only the known finding %s; minimize it strictly)", ErrNoViolation, res.Known[0].Known)
		}
		return nil, st, fmt.Errorf("minimize: %w", ErrNoViolation)
	}
	if opt.Keep != nil && !opt.Keep(f) {
		return nil, st, fmt.Errorf("minimize: the input does not meet the Keep condition")
	}
	m.target = v.Oracle
	st.Oracle = v.Oracle
	st.Before = SizeOf(f)
	cur := cloneFileDeep(f)
	cur.Comments, cur.Expect = nil, nil
	cur.Schedule = cloneScheduleDeep(res.Schedule)
	m.cur, m.res = cur, res
	passes := []func(*File) iter.Seq[*File]{m.fewerEvents, m.shallower, m.fewerOrders, m.earlierSites, m.smallerScenario}
	st.Minimal = true
search:
	for {
		for _, pass := range passes {
			for c := range pass(m.cur) {
				if opt.MaxReplays > 0 && st.Replays >= opt.MaxReplays || opt.Stop != nil && opt.Stop() {
					st.Minimal = false
					break search
				}
				if m.try(c) {
					continue search
				}
			}
		}
		break
	}
	m.tightenBound()
	out := m.cur
	out.Expect = &Expect{Oracle: st.Oracle}
	st.After = SizeOf(out)
	v, _ = m.target1(m.res)
	st.Msg = v.Msg
	return out, st, nil
}

// target1 is the violation a replay is judged by: the first violation, or
// with opt.Known the known finding's (and then there must be no violation).
func (m *minimizer) target1(res *Result) (Violation, bool) {
	if m.opt.Known == "" {
		if !res.Failed() {
			return Violation{}, false
		}
		return res.Violations[0], true
	}
	if res.Failed() {
		return Violation{}, false
	}
	for _, v := range res.Known {
		if v.Known == m.opt.Known {
			return v, true
		}
	}
	return Violation{}, false
}

type minimizer struct {
	opt    MinimizeOptions
	target string
	st     *MinimizeStats
	cur    *File   // the smallest failing file so far
	res    *Result // its replay
}

// try replays candidate c and keeps it if it fails with the target oracle.
func (m *minimizer) try(c *File) bool {
	m.st.Replays++
	res, g, ok := m.check(c)
	if !ok {
		return false
	}
	g.Schedule = cloneScheduleDeep(res.Schedule)
	m.cur, m.res = g, res
	m.st.Accepted++
	return true
}

// check formats and re-parses c (the parser is the validator) and replays
// it; ok if it fails with the target oracle.
func (m *minimizer) check(c *File) (*Result, *File, bool) {
	c.Comments, c.Expect = nil, nil
	g, err := ParseFile("candidate", c.Format())
	if err != nil {
		return nil, nil, false
	}
	ro := m.opt.run
	ro.Strict = m.opt.Strict
	res, err := Replay(g, ro)
	if err != nil {
		return nil, nil, false
	}
	if v, ok := m.target1(res); !ok || v.Oracle != m.target {
		return nil, nil, false
	}
	if m.opt.Keep != nil && !m.opt.Keep(g) {
		return nil, nil, false
	}
	return res, g, true
}

// tightenBound sets the bound to what the schedule uses, if the result
// still fails the same way.
func (m *minimizer) tightenBound() {
	c := cloneFileDeep(m.cur)
	var b Bound
	levels := eventLevels(c.Schedule.Events)
	for i, e := range c.Schedule.Events {
		switch e.Kind {
		case EvIRQ, EvNMI:
			b.K++
			b.D = max(b.D, levels[i])
		case EvRemote:
			b.E++
		}
	}
	b.R = len(c.Schedule.Orders)
	if b == c.Scenario.Bound {
		return
	}
	c.Scenario.Bound = b
	if res, g, ok := m.check(c); ok {
		g.Schedule = cloneScheduleDeep(res.Schedule)
		m.cur, m.res = g, res
	}
}

// ---- candidates ----

// fewerEvents drops one event (and the events nested in it), last first.
func (m *minimizer) fewerEvents(f *File) iter.Seq[*File] {
	return func(yield func(*File) bool) {
		for i := len(f.Schedule.Events) - 1; i >= 0; i-- {
			c := cloneFileDeep(f)
			c.Schedule.Events = dropEventsNested(c.Schedule.Events, func(j int, _ Event) bool { return j == i })
			if !yield(c) {
				return
			}
		}
	}
}

// shallower lifts an event nested in an interrupt into the parent's
// context.
func (m *minimizer) shallower(f *File) iter.Seq[*File] {
	return func(yield func(*File) bool) {
		evs := f.Schedule.Events
		for i, e := range evs {
			p := eventParent(evs, e)
			if p < 0 {
				continue
			}
			for occ := 1; occ <= m.opt.MaxLiftOcc; occ++ {
				for _, before := range []bool{true, false} {
					c := cloneFileDeep(f)
					if !liftEvent(c, i, occ, before) {
						continue
					}
					if !yield(c) {
						return
					}
				}
			}
		}
	}
}

// fewerOrders drops an order line, or one dead store of an order.
func (m *minimizer) fewerOrders(f *File) iter.Seq[*File] {
	return func(yield func(*File) bool) {
		for i := range f.Schedule.Orders {
			c := cloneFileDeep(f)
			c.Schedule.Orders = slices.Delete(c.Schedule.Orders, i, i+1)
			if !yield(c) {
				return
			}
		}
		for i, o := range f.Schedule.Orders {
			for k := range o.Drop {
				c := cloneFileDeep(f)
				c.Schedule.Orders[i].Drop = slices.Delete(c.Schedule.Orders[i].Drop, k, k+1)
				if !yield(c) {
					return
				}
			}
		}
	}
}

// earlierSites moves an event to an earlier occurrence of its site, the
// earliest first.
func (m *minimizer) earlierSites(f *File) iter.Seq[*File] {
	return func(yield func(*File) bool) {
		for i, e := range f.Schedule.Events {
			for occ := 1; occ < e.At.Occ; occ++ {
				if positionTaken(f.Schedule.Events, i, e.In, Pos{e.At.Site, occ}) {
					continue
				}
				c := cloneFileDeep(f)
				c.Schedule.Events[i].At.Occ = occ
				if !yield(c) {
					return
				}
			}
		}
	}
}

// smallerScenario shrinks the programs, tasks, users and remote actions.
func (m *minimizer) smallerScenario(f *File) iter.Seq[*File] {
	return func(yield func(*File) bool) {
		sc := f.Scenario
		// Task programs: truncation (shortest first), then single edits.
		for t, prog := range sc.Tasks {
			for n := 0; n < len(prog); n++ {
				c := cloneFileDeep(f)
				c.Scenario.Tasks[t] = c.Scenario.Tasks[t][:n]
				if !yield(c) {
					return
				}
			}
			for _, edit := range programEdits(prog) {
				c := cloneFileDeep(f)
				c.Scenario.Tasks[t] = edit
				if !yield(c) {
					return
				}
			}
		}
		if len(sc.Tasks) > 1 {
			for t := range sc.Tasks {
				c := cloneFileDeep(f)
				dropTaskFrom(c, t)
				if !yield(c) {
					return
				}
			}
		}
		for _, which := range []int{0, 1} {
			prog := sc.IRQ
			if which == 1 {
				prog = sc.NMI
			}
			for _, edit := range programEdits(prog) {
				c := cloneFileDeep(f)
				if which == 0 {
					c.Scenario.IRQ = edit
				} else {
					c.Scenario.NMI = edit
				}
				if !yield(c) {
					return
				}
			}
		}
		for u := range sc.Users {
			c := cloneFileDeep(f)
			dropUserFrom(c, u)
			if !yield(c) {
				return
			}
		}
		for k := range sc.Setup {
			c := cloneFileDeep(f)
			c.Scenario.Setup = slices.Delete(c.Scenario.Setup, k, k+1)
			if !yield(c) {
				return
			}
		}
		for r := range sc.Remotes {
			c := cloneFileDeep(f)
			dropRemoteFrom(c, r)
			if !yield(c) {
				return
			}
		}
		for u := range sc.Users {
			for _, edit := range userEdits(sc.Users[u]) {
				c := cloneFileDeep(f)
				c.Scenario.Users[u] = edit
				if !yield(c) {
					return
				}
			}
		}
	}
}

// ---- edits ----

// dropEventsNested returns the events without those drop selects and without
// every event nested (transitively) in a dropped one, renumbered 1..n in
// order with their in= references updated.
func dropEventsNested(evs []Event, drop func(i int, e Event) bool) []Event {
	newID := map[string]string{} // old interrupt id -> new, for kept events
	var out []Event
	for i, e := range evs {
		in := e.In
		if !strings.HasPrefix(in, "task") {
			n, ok := newID[in]
			if !ok {
				continue // the parent was dropped
			}
			in = n
		}
		if drop(i, e) {
			continue
		}
		e.In = in
		old := strconv.Itoa(e.ID)
		e.ID = len(out) + 1
		newID[old] = strconv.Itoa(e.ID)
		out = append(out, e)
	}
	return out
}

// renumber gives evs ids 1..n in order; ids maps each event's old id, in
// the same order, and in= references follow.
func renumberEvents(evs []Event) {
	newID := map[string]string{}
	for i := range evs {
		newID[strconv.Itoa(evs[i].ID)] = strconv.Itoa(i + 1)
	}
	for i := range evs {
		if n, ok := newID[evs[i].In]; ok && !strings.HasPrefix(evs[i].In, "task") {
			evs[i].In = n
		}
		evs[i].ID = i + 1
	}
}

// eventParent is the index of the event e is nested in, or -1 if e fires in
// a task.
func eventParent(evs []Event, e Event) int {
	if strings.HasPrefix(e.In, "task") {
		return -1
	}
	for i, x := range evs {
		if strconv.Itoa(x.ID) == e.In {
			return i
		}
	}
	return -1
}

// eventLevels gives each event's nesting level: 1 for an interrupt in a
// task, its parent's plus one when nested; a remote event has its
// context's level.
func eventLevels(evs []Event) []int {
	lv := make([]int, len(evs))
	for i, e := range evs {
		base := 0
		if p := eventParent(evs, e); p >= 0 {
			base = lv[p]
		}
		if e.Kind == EvRemote {
			lv[i] = base
		} else {
			lv[i] = base + 1
		}
	}
	return lv
}

// occupied reports whether an event other than skip already fires at pos
// in context in.
func positionTaken(evs []Event, skip int, in string, pos Pos) bool {
	for j, x := range evs {
		if j != skip && x.In == in && x.At == pos {
			return true
		}
	}
	return false
}

// liftEvent moves event i, which must be nested in an interrupt, into that
// interrupt's own context at occurrence occ of its site: an nmi lifted
// into a task becomes an irq. The event is listed just before its old
// parent if before is set, else in its own place; ids are renumbered. It
// reports false if the move is not possible (i is not nested, or the
// position is taken).
func liftEvent(f *File, i, occ int, before bool) bool {
	evs := f.Schedule.Events
	p := eventParent(evs, evs[i])
	if p < 0 {
		return false
	}
	e := evs[i]
	e.In = evs[p].In
	e.At.Occ = occ
	if e.Kind == EvNMI && strings.HasPrefix(e.In, "task") {
		e.Kind = EvIRQ
	}
	if positionTaken(evs, i, e.In, e.At) {
		return false
	}
	out := make([]Event, 0, len(evs))
	for j, x := range evs {
		if before && j == p {
			out = append(out, e)
		}
		if j == i {
			if !before {
				out = append(out, e)
			}
			continue
		}
		out = append(out, x)
	}
	renumberEvents(out)
	f.Schedule.Events = out
	return true
}

// programEdits lists the single-step simplifications of a program: drop a
// call and its matching ret (or an unmatched call), and drop one tail,
// sleep, unwind or exit. Edits that break the program are left to the
// validator.
func programEdits(prog []Op) [][]Op {
	var out [][]Op
	for i, op := range prog {
		switch op.Kind {
		case OpCall:
			j := retOfCall(prog, i)
			e := slices.Clone(prog)
			if j >= 0 {
				e = slices.Delete(e, j, j+1)
			}
			e = slices.Delete(e, i, i+1)
			out = append(out, e)
		case OpTail, OpSleep, OpUnwind, OpExit:
			out = append(out, slices.Delete(slices.Clone(prog), i, i+1))
		}
	}
	return out
}

// retOfCall is the index of the ret of the call at i, or -1.
func retOfCall(prog []Op, i int) int {
	depth := 0
	for j := i; j < len(prog); j++ {
		switch prog[j].Kind {
		case OpCall:
			depth++
		case OpRet:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// userEdits lists the single-step simplifications of a user: no data, no
// callin, and one function fewer in filter, accept or reject (a filter or
// accept list keeps at least one function: empty means every function).
func userEdits(u User) []User {
	var out []User
	if u.DataBytes != 0 {
		v := cloneUserDeep(u)
		v.DataBytes = 0
		out = append(out, v)
	}
	if u.CallInEntry != 0 {
		v := cloneUserDeep(u)
		v.CallInEntry = 0
		out = append(out, v)
	}
	lists := func(v *User) []*[]int { return []*[]int{&v.Filter, &v.Accept, &v.RejectAfter} }
	for li := range 3 {
		l := *lists(&u)[li]
		if li < 2 && len(l) < 2 {
			continue
		}
		for k := range l {
			v := cloneUserDeep(u)
			p := lists(&v)[li]
			*p = slices.Delete(*p, k, k+1)
			out = append(out, v)
		}
	}
	return out
}

// dropTaskFrom removes task t: its program, the events in it (and nested in
// them) and the remote unwinds of it; later tasks are renumbered.
func dropTaskFrom(f *File, t int) {
	sc := f.Scenario
	sc.Tasks = slices.Delete(sc.Tasks, t, t+1)
	for r := len(sc.Remotes) - 1; r >= 0; r-- {
		if sc.Remotes[r].Kind == RemoteUnwind && sc.Remotes[r].Task == t {
			dropRemoteFrom(f, r)
		}
	}
	for r := range sc.Remotes {
		if sc.Remotes[r].Kind == RemoteUnwind && sc.Remotes[r].Task > t {
			sc.Remotes[r].Task--
		}
	}
	name := "task" + strconv.Itoa(t)
	f.Schedule.Events = dropEventsNested(f.Schedule.Events, func(_ int, e Event) bool { return e.In == name })
	for i, e := range f.Schedule.Events {
		if n, ok := strings.CutPrefix(e.In, "task"); ok {
			if k, _ := strconv.Atoi(n); k > t {
				f.Schedule.Events[i].In = "task" + strconv.Itoa(k-1)
			}
		}
	}
}

// dropUserFrom removes user u: from the setup, with every remote action that
// names it (and their events); later users are renumbered.
func dropUserFrom(f *File, u int) {
	sc := f.Scenario
	for r := len(sc.Remotes) - 1; r >= 0; r-- {
		x := sc.Remotes[r]
		if x.Kind != RemoteUnwind && (x.User == u || (x.Kind == RemoteReplace && x.With == u)) {
			dropRemoteFrom(f, r)
		}
	}
	sc.Users = slices.Delete(sc.Users, u, u+1)
	var setup []int
	for _, s := range sc.Setup {
		switch {
		case s < u:
			setup = append(setup, s)
		case s > u:
			setup = append(setup, s-1)
		}
	}
	sc.Setup = setup
	for r := range sc.Remotes {
		x := &sc.Remotes[r]
		if x.Kind == RemoteUnwind {
			continue
		}
		if x.User > u {
			x.User--
		}
		if x.Kind == RemoteReplace && x.With > u {
			x.With--
		}
	}
}

// dropRemoteFrom removes remote action r and the events that deliver it (with
// the events nested in them); later actions are renumbered.
func dropRemoteFrom(f *File, r int) {
	sc := f.Scenario
	sc.Remotes = slices.Delete(sc.Remotes, r, r+1)
	evs := dropEventsNested(f.Schedule.Events, func(_ int, e Event) bool { return e.Kind == EvRemote && e.Remote == r })
	for i := range evs {
		if evs[i].Kind == EvRemote && evs[i].Remote > r {
			evs[i].Remote--
		}
	}
	f.Schedule.Events = evs
}

// ---- deep copies ----

func cloneFileDeep(f *File) *File {
	g := &File{Comments: slices.Clone(f.Comments), Schedule: cloneScheduleDeep(f.Schedule)}
	if f.Expect != nil {
		e := *f.Expect
		g.Expect = &e
	}
	if f.Scenario != nil {
		g.Scenario = cloneScenarioDeep(f.Scenario)
	}
	return g
}

// cloneScenarioDeep returns a deep copy of sc.
func cloneScenarioDeep(sc *Scenario) *Scenario {
	c := *sc
	c.Users = make([]User, len(sc.Users))
	for i, u := range sc.Users {
		c.Users[i] = cloneUserDeep(u)
	}
	c.Setup = slices.Clone(sc.Setup)
	c.Tasks = make([][]Op, len(sc.Tasks))
	for i, t := range sc.Tasks {
		c.Tasks[i] = slices.Clone(t)
	}
	c.IRQ, c.NMI = slices.Clone(sc.IRQ), slices.Clone(sc.NMI)
	c.Remotes = slices.Clone(sc.Remotes)
	return &c
}

func cloneUserDeep(u User) User {
	u.Filter, u.Accept, u.RejectAfter = slices.Clone(u.Filter), slices.Clone(u.Accept), slices.Clone(u.RejectAfter)
	return u
}

func cloneScheduleDeep(s Schedule) Schedule {
	c := Schedule{Events: slices.Clone(s.Events)}
	if s.Orders != nil {
		c.Orders = make([]Order, len(s.Orders))
		for i, o := range s.Orders {
			c.Orders[i] = Order{Region: o.Region, Sites: slices.Clone(o.Sites), Drop: slices.Clone(o.Drop)}
		}
	}
	return c
}
