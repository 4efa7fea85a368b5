package harness

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/model"
)

// pending is a store in a context's compiler store buffer.
type pending struct {
	site fgraph.Site
	addr fgraph.Addr
	val  fgraph.Word
	kind fgraph.Kind
}

// inflightEntry tracks a context's call while function_graph_enter runs.
type inflightEntry struct {
	ret, fn, retp fgraph.Word
	modelPos      int  // model frames below it when the call started
	pushed        bool // W3 committed: the frame is on the stack
	base, top     int  // frame start; the context's latest curr_ret_stack
	ok            [3]bool
}

// inflightReserve tracks a context inside fgraph_reserve_data.
type inflightReserve struct {
	addr   fgraph.Addr // the DATA word
	val    fgraph.Word
	raised bool // reserve.w2 committed
}

// inflightPop tracks a context's return while handlers run.
type inflightPop struct {
	modelTop int // model frames when the return started
	lowered  int // frames dropped from memory (ret.lower committed)
}

// ctx is one execution context on the CPU: a task, or an interrupt.
type ctx struct {
	// windowRead: a callback of this context read its shadow stack
	// (callbackReader) while a reservation's window was open, and what it
	// read depended on the clobbered DATA word (known finding
	// reserve-window, for the profiler's and retrieve-data's checks).
	windowRead bool
	name       string
	level      int
	kind       EventKind // interrupts: EvIRQ or EvNMI
	task       int
	buf        []pending
	// rest holds the stores of the region being committed that have not
	// committed yet, in commit order.
	rest    []pending
	spare   []pending // the other half of the double-buffered store buffer
	restBuf []pending
	occ     [fgraph.NumSites]int32
	entry   *inflightEntry
	pop     *inflightPop
	resv    *inflightReserve
	irqOff  int // local_irq_save depth
	// lastSite is the site of the context's latest yield point.
	lastSite fgraph.Site
	// inCallback counts entry callbacks running in this context.
	inCallback int
	// nyield counts the context's yield points: with its name, a yield's
	// position whatever the commit orders (lazy.go's runs name their
	// events by it when a failing one is run again eagerly).
	nyield int32
	// lz is the instance of a pending region the context is committing
	// (lazy.go).
	lz *lzInst
	// Merged remote placements (remotes.go): the state of the current
	// segment, the kind of the remote action this context fired as a
	// representative (0: none), and whether the region being committed
	// ends at a plain fence.
	rcls, rrep uint8
	plain      bool
	// rws are the writers (bits by remote index) whose next offer point
	// is the same placement as the last one; rrepW is the writer this
	// context represents, repWS the words it wrote; wsOK and wsIdx name
	// the stores of the writers for this segment's global memory
	// (writerstores.go).
	rws   uint32
	rrepW uint8
	wsOK  bool
	wsIdx int32
	repWS wsSet
	// ux is the remote unwind's extension across commits (unwindext.go).
	ux uint8
	// logFrom is where this context's current operation's records start.
	logFrom int
	// nest is 0 for a task or an interrupt; n for the traced call an entry
	// callback makes at nesting n (runner.nestedCall).
	nest int
	// With the state cache (runner.hashing): hist digests every input the
	// context's code has read since its current op began (hook answers,
	// the clock, the harness's own locals), which stands for its Go stack;
	// base digests what the context was created with; nops counts its ops
	// (state.go).
	hist, base uint64
	nops       int
	// For Reread (loads by kind): the context's plain loads (with how many
	// of its stores preceded each) and the addresses of its own stores,
	// since its last region boundary.
	loads  [16]loadRec // a power of two (noteLoad)
	nload  int
	stored []fgraph.Addr
	// The storage entry, pop and resv point to while set: a context has
	// at most one of each in flight, and contexts are reused (newCtx).
	entryV inflightEntry
	popV   inflightPop
	resvV  inflightReserve
}

type loadRec struct {
	addr fgraph.Addr
	nst  int
}

// noteLoad remembers a plain load of a since the last region boundary.
func (c *ctx) noteLoad(a fgraph.Addr) {
	c.loads[c.nload&(len(c.loads)-1)] = loadRec{addr: a, nst: len(c.stored)} // a power of two: a mask, not a signed division
	c.nload++
}

// boundary forgets the loads and stores of the region that just ended: no
// value loaded before a barrier, an opaque call or an atomic may be loaded
// again after it.
func (c *ctx) boundary() {
	c.nload = 0
	c.stored = c.stored[:0]
}

// reloadable reports whether the compiler may load a again for a further
// use of a plain load of a by c: the load happened in the current region
// (no barrier, opaque call or atomic since), and c has not stored to a
// since, nor, with alias, to any word (a store through a pointer may alias
// a under -fno-strict-aliasing). A value the compiler cannot re-load is
// kept in a register. A load pushed out of the ring by 16 newer ones counts
// as not reloadable (fewer re-loads, never one the compiler could not make).
func (c *ctx) reloadable(a fgraph.Addr, alias bool) bool {
	n := min(c.nload, len(c.loads))
	for i := 1; i <= n; i++ {
		l := c.loads[(c.nload-i)&(len(c.loads)-1)]
		if l.addr != a {
			continue
		}
		if alias {
			return len(c.stored) == l.nst
		}
		for _, x := range c.stored[l.nst:] {
			if x == a {
				return false
			}
		}
		return true
	}
	return false
}

// runner executes one scenario under one chooser. It implements fgraph.Hooks.
type runner struct {
	sc  *Scenario
	cfg fgraph.Config
	// maxOff and varBase are cfg's SHADOW_STACK_MAX_OFFSET and first task
	// variable (-1: none), read at every commit (checkCapacity).
	maxOff, varBase int
	stacks          []taskStack // per task (visible, checkCapacity)
	// stackAt is, per word of memory, the task whose shadow stack holds
	// it, or -1 (at most MaxTasks tasks: fgraph.Config.Validate): a
	// commit's visible and checkCapacity look it up there instead of
	// trying each task.
	stackAt []int8
	rmemo   readerMemo  // the in-place readers' last clean inputs (readers.go)
	kwalks  knownWalks  // the in-place walks that found a known finding (knownwalk.go)
	krec    knownRec    // the reports of the in-place walk running (knownwalk.go)
	rseen   *readerSeen // the inputs of the clean in-place checks so far (readseen.go)
	// knownFor: per oracle, the known findings of the scenario's variant
	// it can report (knownCandidates).
	knownFor [][]*KnownFinding
	rwatch   readWatch // the reads of an in-place walk (readers.go)
	mcfg     model.Config
	m        *fgraph.Machine
	ops      []*fgraph.Ops
	model    *model.State
	ch       Chooser
	// orderBuf and dropBuf are applyOrder's scratch, one per nesting
	// level.
	orderBuf, dropBuf [][]int
	// shield is r.ch's storage (run sets r.ch = &r.shield): one value a
	// runner instead of an interface conversion a run.
	shield shielded
	rep    *replay
	opt    RunOptions
	// hk is the test hooks of the options (noHooks without: hooks.go).
	hk *testHooks

	ctxs   []*ctx
	taskCt []*ctx
	pc     []int // per-task program counter
	direct int   // >0: remote CPU code: no buffering, no yields

	kUsed, rUsed, eUsed int
	remoteUsed          []bool
	finish              []tail // run at the next quiescent point
	later               []tail // queued by finish's tails, for the one after
	// pending[i] is 1+user for a registration of slot i whose tail
	// (ftrace_startup_subops and the publish) has not run yet.
	pending [model.Slots]int
	orders  chosenOrders // the region orders chosen (buffer.go)
	nextID  int
	points  int

	sched    Schedule
	aliasDep bool
	res      *Result
	// pool holds the results the explorer handed back, and the slices of
	// the one this run was built in (recycle.go).
	pool     resultPool
	stopped  bool
	logSeen  int
	warnSeen int
	opts     []Option // reused option slice
	pt       Point    // reused choice point
	ptOrder  Point    // reused choice point of a region order
	// yieldOpts caches the option lists of yield points (yieldOptions).
	yieldOpts [][]Option
	// free holds contexts of finished interrupts and nested calls for
	// reuse (newCtx), with their store buffers.
	free     []*ctx
	mineBuf  []*fgraph.Record
	ident    []int // 0, 1, 2, ...
	sigBuf   []byte
	extCache map[string][]Option // commit orders by region shape (orderOptions)
	recBuf   []*fgraph.Record
	slab     model.Slab // the model's frames' arrays (model.Slab)
	// liveBuf holds, per interrupt level, the live words the interrupt
	// found (the transparency oracle's before); liveAfter its after.
	liveBuf   [8][]fgraph.Word
	liveAfter []fgraph.Word
	// entBuf and retBuf are the storage of the model's last call and
	// return results (CallWithBuf, ReturnWithBuf).
	entBuf  []model.EntryCall
	retBuf  []model.RetCall
	walkBuf []int
	expBuf  []expectFrame
	ver     uint64 // bumped whenever memory or the model changes
	checked uint64 // ver at the last in-place check
	// inReserveWindow: a context has raised curr_ret_stack in
	// fgraph_reserve_data and its rewrite of the DATA word (W3) is still
	// pending while the word in memory differs from it.
	inReserveWindow bool
	// staleRetp: the ret-addr violation being reported comes from an
	// in-flight frame (known finding inflight-ret-addr).
	staleRetp bool
	// clobbered: a reservation returned with its DATA word overwritten;
	// clobberedFixes are those words and the values reserve.w1 wrote.
	clobbered      bool
	clobberedFixes []wordFix
	// clobberSpread: the frame over the clobbered word returned while the
	// word was still wrong (known finding reserve-reorder).
	clobberSpread bool
	// model0 is the model's initial state, copied into model at every
	// reset (model.State.CopyTo reuses model's storage).
	model0 *model.State
	// abs is the model oracle's abstraction storage, reused at every check.
	abs model.Scratch
	// directRace: during this task-level op, a remote action switched
	// direct mode while this CPU was between reading the static key and
	// using fgraph_direct_gops (known finding direct-switch-race).
	directRace bool
	// rd is the reader running now (readers.go), for Violation.Reader and
	// a counterfactual re-run; cbRd is the one a callback's read
	// interrupted. probe: such a re-run is on, and violate only sets
	// probeFail. parentDepth is the deepest Ops.ParentDepth of the users.
	rd, cbRd         readerCall
	probe, probeFail bool
	parentDepth      int
	tr               *tracer
	remoteCtx        *ctx // the remote action running, while traced
	// compiled: the core is compiled code (Scenario.Target): each store
	// commits where the code makes it, in the compiler's order.
	compiled bool
	// short: the hooks take the short way after the run stopped
	// (stopped.go).
	short bool
	cov   *Coverage
	// covAdded lists the counts the run added to cov, when Stop may cut it
	// short (logCov, applyCov; takeBackCov).
	covAdded []uint32
	// steps counts this run's shared accesses against budget; halted: the
	// run was cut short by RunOptions.stop, it has no verdict (abort.go).
	steps, budget int64
	nextLook      int64 // step: the count at which to look again (look)
	// Runs by change (changes.go): the accesses steps counts that the
	// run did not execute (a snap it restored stands for them), the
	// choice point the DFS changed (-1: none), the kind of change there
	// and the accesses executed before it.
	skipped, chgExec int64
	chgAt, chg       int
	chgRem           int // the remote action of a ChangeRemote (changes.go)
	// hitExec is executed() when the run hit the cache (-1: it did not);
	// the code under test runs on to the end of its op after that.
	hitExec int64
	halted  bool
	// cursors: the unwinder oracle's idx cursors, one per nesting
	// (checkRetAddrs).
	cursors     [8]int
	cursorDepth int
	// unwMsgs: the unwinder oracle's messages rendered so far (unwMsg).
	unwMsgs map[unwKey]string
	// The remote unwind merged across commits (unwindext.go): the remote
	// action (-1: off), and the last evaluation of it (at ver and the
	// real stacks' version uxSlots, with current uxCur); evalAny catches
	// every report of one.
	uxIdx   int
	uxVer   uint64
	uxSlots uint64
	uxCur   int
	uxOK    bool
	evalAny bool
	// hashing: the explorer caches visited states (state.go): every
	// context keeps the digest of its inputs. digest: the inputs are
	// digested now (not while the run replays the previous run's prefix;
	// histRec keeps what the contexts' digests were at each choice point,
	// digest.go).
	hashing, digest bool
	// reduced: appendState encodes the state without the lazy engine's
	// live options (split.go's reduced key).
	reduced bool
	histRec [][]uint64
	// tails, with the cache: the DFS, asked at each quiescent point of a
	// run that can make no more choices whether the rest of the run is a
	// tail it has seen (cache.go); between is set while it encodes.
	tails   *dfs
	between bool
	// afterEv is set while the state right after an interrupt returned
	// is encoded (cache.go, afterEvent).
	afterEv bool
	// Merged remote placements (ExploreOptions.MergeRemotes, remotes.go):
	// mergeOpt asks for them, mergeRem has them in this run (not for a
	// compiled target); rmult is the schedules the run stands for by
	// them; quietStop is a violation or crash deferred to the end of a
	// representative's segment; remOpts is remFilter's storage.
	mergeOpt, mergeRem bool
	rmult              int64
	quietStop          bool
	remOpts            []Option
	// supW are the writers the yield being chosen at does not offer;
	// remWriters the scenario's writers, remWide those whose sets go on
	// across loads of words they do not write; wsTab their stores by
	// global memory (wsLast the entry last used, wsSave the machine's
	// state during a dry run), wsGot the stores of the remote action
	// being fired (writerstores.go).
	supW, remWriters, remWide uint32
	wsTab                     []wsEntry
	wsLast                    int
	wsSave                    fgraph.MachineState
	wsGot                     wsSet
	// tailN counts the run's tail lookups: with points, the clock of a
	// detection (det) and of a recorded point.
	tailN int64
	// diffs are the model oracle's rendered differences (diff.go).
	diffs diffMemo
	// reuse, with the cache: the in-place checks of the previous run,
	// applied instead of run again over the shared prefix (reuse.go).
	reuse *reuse
	// snaps, if set: runs resume from the last quiescent point they share
	// with an earlier run (resume.go).
	snaps *snaps
	// evs, with snaps: the event snaps along the DFS path (evsnap.go);
	// skipper is the chooser they set past the choice points they skip.
	evs     *evSnaps
	opPend  opPend    // an op snap the next op takes (evsnap.go)
	opUse   opSnapUse // the op snaps taken and put back, per level and op (evsnap.go)
	opEarly struct {
		e  evSnap
		ok bool
	} // opSnapVerify's snap before the lookup
	skipper skipper
	// ent, with the event snaps: the entry snaps of the tasks'
	// interrupts along the DFS path (irqstart.go).
	ent *entrySnaps
	// The replayed choice points' fast path (fastreplay.go): the DFS
	// chooser, if the run asks it directly; whether this run takes the
	// fast path; the yield points reached so far (choose calls); and at
	// each choice point index, the yield point it was.
	fdfs    *dfs
	fastRep bool
	nchoose int32
	cpAt    []int32
	// deadLog, in tests (checkDeadLog), marks the records the state's log
	// window left out in this run.
	deadLog []bool
	// lazy: region orders are chosen lazily (lazy.go): per pending region
	// its live options, whether it has spent an order (program order is
	// not live), its option list; lzList the pending regions in the order
	// met; lzN the contexts inside a pending instance.
	lazy     bool
	lzLive   [fgraph.NumSites]uint64
	lzPaid   [fgraph.NumSites]bool
	lzOpt    [fgraph.NumSites]*lzOpts
	lzList   []fgraph.Site
	lzN      int
	lzPool   []*lzInst
	lzShapes map[string]*lzOpts
	lzExts   []lzExt
	lzOptBuf []Option
	lzChoice []Option
	// lzOrdCache: every option's order of an instance, by option list,
	// instance shape and alias mode (lzOrders).
	lzOrdCache map[string][][]int
	lzKeyBuf   []byte
	// lzStepMemo: the walk of an instance's options from its anchor, by
	// list of orders, live options and anchor (lzStepsOf), and the last
	// one asked for.
	lzStepMemo  map[lzStepKey]*lzStepList
	lzStepLast  *lzStepList
	lzStepLastK lzStepKey
	// violations counts violate's calls (lzCheck: a check that made none
	// is clean).
	violations int
	// evOrd holds, for each event of the schedule, the yield's position
	// in its context (ctx.nyield), by which lzMaterialize places it.
	evOrd []int32
}

// RunOptions tune one run.
type RunOptions struct {
	// Strict turns every known-finding allowance off.
	Strict bool
	// Trace records a step-by-step trace in Result.Trace.
	Trace bool
	// NoOracles skips every oracle (for measuring raw replay cost).
	NoOracles bool
	// KeepGoing records every violation instead of stopping at the first.
	KeepGoing bool
	// Coverage, if set, accumulates per-site interrupt coverage.
	Coverage *Coverage
	// InOrder commits every store where the code makes it, in program
	// order: the port run as a compiler that keeps the source order of
	// accesses (the differential holds the compiled C to it). The kernel
	// target always runs so.
	InOrder bool
	// Observe, if set, sees the run's stores, fences and quiescent points
	// as they happen (the differential of package differential).
	Observe Observer
	// OnChoice, if set, is called with the schedule so far at the start of
	// every run (of a resumed run: with the snap's, resume.go) and after
	// every non-default choice: a compiled target keeps it to write if the
	// code crashes before the run ends.
	OnChoice func(Schedule)
	// stop, if set, cuts the run short once true (explore and sample
	// pass their Stop: a signal stops a long run at once); such a run is
	// not counted.
	stop *atomic.Bool
	// wrap, if set (tests), wraps the run's chooser, with the runner at
	// hand (to break the code under test as a bad edit would).
	wrap func(r *runner, ch Chooser) Chooser
	// noResume turns prefix sharing off: a run starts from the start,
	// with no snap (tests compare the two: withoutResume).
	noResume bool
	// hooks, if set (tests), are the run's or the exploration's test hooks
	// (hooks.go).
	hooks *testHooks
	// knownBrief leaves the detail (violateDetail's) out of the reports
	// of known findings: the explorer counts them and reads no message,
	// and sets it unless OnRun sees every run's result. (The model
	// oracle's go-cmp diff of a known finding was 1.2 % of std C=3.) Run
	// and Replay render it.
	knownBrief bool
}

// Violation is an oracle failure.
type Violation struct {
	Oracle string // unwinder, ret-addr, model, callback, transparency, capacity, panic
	Msg    string
	// At is the context and position where it was detected.
	At string
	// Known names the known kernel finding this is, if any (excused).
	Known string
	// Strict names the known finding a violation reported under --strict
	// would otherwise have been excused as.
	Strict string
	// AliasDependent: the run reordered stores that alias analysis
	// (-fno-strict-aliasing) would keep in order.
	AliasDependent bool
	// Reader is the kernel reader that saw it (readers.go), for the
	// unwinder and ret-addr oracles and a WARN inside a reader; "" for the
	// other oracles.
	Reader string
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s: %s (at %s)", v.Oracle, v.Msg, v.At)
	if v.Known != "" {
		s += " [known: " + v.Known + "]"
	}
	if v.Strict != "" {
		s += " [strict: known finding " + v.Strict + "]"
	}
	if v.AliasDependent {
		s += " [only if the compiler can prove no alias]"
	}
	if v.Reader != "" {
		s += " [reader: " + v.Reader + "]"
	}
	return s
}

// Result is the outcome of one run.
type Result struct {
	// Violations not excused by a known finding.
	Violations []Violation
	// Known are violations excused by a named known finding.
	Known    []Violation
	Schedule Schedule
	// Trace is the step-by-step text trace (RunOptions.Trace), derived from
	// Events by TraceText.
	Trace []string
	// Events is the structured trace (RunOptions.Trace).
	Events []TraceEvent
	Points int // choice points seen
	// AliasDependent: the run chose a commit order that only the no-alias
	// model allows (alias analysis, -fno-strict-aliasing, keeps two of
	// its stores in program order), so it is not a run of kbuild's
	// compiler model. The runs without it are exactly the runs of the
	// alias-aware model (Scenario.Alias) with the same choices.
	AliasDependent bool
	// Run numbers the run within its exploration or sample (1-based; for
	// a sharded exploration, within its shard).
	Run int64
	// dets, with the state cache: every detection of a known finding,
	// suppressed ones included (cache.go, det).
	dets []det
	// weight is the number of schedules the run stands for, weightK of
	// them kbuild's: 1 and 1 (0 if AliasDependent), but for a run of the
	// lazy order engine that ends with regions pending (lazy.go).
	weight, weightK int64
}

// Failed reports whether the run found a violation.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// Kbuild reports whether the run is one of kbuild's compiler model (it
// chose no order that needs the no-alias model).
func (r *Result) Kbuild() bool { return !r.AliasDependent }

// Run executes sc once under ch.
func Run(sc *Scenario, ch Chooser, opt RunOptions) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	r, err := newRunner(sc)
	if err != nil {
		return nil, err
	}
	return r.run(ch, opt), nil
}

// Replay runs the file's schedule.
func Replay(f *File, opt RunOptions) (*Result, error) {
	opt.Strict = opt.Strict || f.Strict
	return Run(f.Scenario, NewReplay(f.Scenario, f.Schedule), opt)
}

func newRunner(sc *Scenario) (*runner, error) {
	cfg := sc.Config()
	m, err := fgraph.NewMachine(cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{sc: sc, cfg: cfg, m: m, budget: StepBudget(sc), maxOff: cfg.ShadowStackMaxOffset(), varBase: cfg.TaskVarBase(), chgAt: -1, rseen: &readerSeen{}, hk: &noHooks}
	r.stackAt = make([]int8, len(m.Mem))
	for a := range r.stackAt {
		r.stackAt[a] = -1
	}
	for t := range sc.Tasks {
		b := m.TaskBase(t)
		x := taskStack{b + fgraph.TaskWords, b + fgraph.TaskWords + fgraph.Addr(cfg.StackWords), b + fgraph.TaskCurr}
		r.stacks = append(r.stacks, x)
		for a := x.lo; a < x.hi; a++ {
			r.stackAt[a] = int8(t)
		}
	}
	r.mcfg = model.Config{
		F: cfg.FrameWords, StackWords: cfg.StackWords, TaskVars: cfg.TaskVarBase() >= 0,
		Bit0: !cfg.NoBit0 || cfg.Mutants.Has(fgraph.MF1Bit0), GenCounter: cfg.GenCounter,
		NoFilter: sc.Variant == fgraph.Seed, NoData: sc.Variant == fgraph.Seed,
	}
	for _, u := range sc.Users {
		r.parentDepth = max(r.parentDepth, u.ParentDepth)
		o := m.AddOps(&fgraph.Ops{Name: u.Name, Filter: u.Filter, Accept: u.Accept, DataBytes: u.DataBytes, CallInEntry: u.CallInEntry, RejectAfter: u.RejectAfter, ParentDepth: u.ParentDepth})
		r.ops = append(r.ops, o)
	}
	if sc.Target != nil {
		if err := sc.Target.Attach(m); err != nil {
			return nil, err
		}
		r.compiled = true
	}
	m.NestedCall = r.nestedCall
	r.taskCt = make([]*ctx, len(sc.Tasks))
	for i := range r.taskCt {
		r.taskCt[i] = &ctx{name: "task" + strconv.Itoa(i), task: i}
	}
	r.pc = make([]int, len(sc.Tasks))
	r.remoteUsed = make([]bool, len(sc.Remotes))
	r.knownFor = knownCandidates(sc.Variant)
	return r, nil
}

func (r *runner) reset() {
	r.rmemo.ok = false
	r.rwatch.on = false // a run that panicked inside its readers
	r.krec.on = false
	// A run that resumes from a snap gets the machine and the model from
	// it (loadData): resetting them first was 1 % of std C=3.
	resumes := r.snaps != nil && r.snaps.from != nil
	if !resumes {
		r.m.Reset()
	}
	if r.model0 == nil {
		users := make([]model.User, len(r.sc.Users))
		for i, u := range r.sc.Users {
			users[i] = model.User{Name: u.Name, Filter: u.Filter, Accept: u.Accept, DataWords: (u.DataBytes + 7) / 8, RejectAfter: u.RejectAfter}
		}
		r.model0 = model.New(r.mcfg, users, len(r.sc.Tasks))
	}
	if !resumes {
		r.model = r.model0.CopyTo(r.model)
	}
	for _, c := range r.taskCt {
		c.buf, c.occ, c.entry, c.pop, c.logFrom = c.buf[:0], [fgraph.NumSites]int32{}, nil, nil, 0
		c.resv, c.irqOff, c.rest, c.inCallback = nil, 0, nil, 0
		c.hist, c.base, c.nops, c.lastSite = 0, 0, 0, 0
		c.nyield, c.lz = 0, nil
		c.rcls, c.rrep, c.plain, c.ux = 0, 0, false, uxNone
		c.rws, c.rrepW, c.wsOK = 0, 0, false
		c.boundary()
	}
	for _, reg := range r.lzList {
		r.lzLive[reg], r.lzOpt[reg], r.lzPaid[reg] = 0, nil, false
	}
	r.lzList, r.lzN = r.lzList[:0], 0
	r.ctxs = r.ctxs[:0]
	clear(r.pc)
	clear(r.remoteUsed)
	r.orders.reset()
	r.finish, r.later = r.finish[:0], r.later[:0]
	r.pending = [model.Slots]int{}
	r.kUsed, r.rUsed, r.eUsed, r.nextID, r.points, r.direct = 0, 0, 0, 0, 0, 0
	r.nchoose = 0
	r.sched = Schedule{}
	r.evOrd = r.evOrd[:0]
	r.aliasDep, r.stopped, r.clobbered, r.remoteCtx, r.rd = false, false, false, nil, readerCall{}
	r.clobberedFixes, r.clobberSpread = r.clobberedFixes[:0], false
	r.logSeen, r.warnSeen = 0, 0
	r.deadLog = r.deadLog[:0] // (checkDeadLog's)
	r.ver, r.checked = 1, 0
	r.halted = false
	r.setSteps(0)
	r.skipped, r.chg, r.chgExec, r.hitExec = 0, -1, 0, -1
	r.tailN = 0
	r.rmult, r.quietStop = 1, false
	r.opPend.on = false
}

func (r *runner) run(ch Chooser, opt RunOptions) *Result {
	r.reset()
	r.digest = r.hashing && !r.replaysDigests(opt)
	r.fastRep = r.fastReplays(ch, opt)
	r.shield = shielded{wrapped(opt.wrap, r, ch)}
	r.ch, r.opt, r.cov, r.hk = &r.shield, opt, opt.Coverage, opt.testHooks()
	r.remWidths() // writerstores.go (a test hook narrows them)
	r.covAdded = r.covAdded[:0]
	r.rep, _ = ch.(*replay)
	r.res = r.pool.get()
	r.compiled = r.sc.Target != nil || opt.InOrder
	r.mergeRem = r.mergeOpt && !r.compiled
	r.short = !opt.Trace && opt.Observe == nil && !r.compiled
	r.uxIdx, r.uxVer = r.unwindExtIndex(), 0
	if opt.Trace {
		r.tr = &tracer{}
	} else {
		r.tr = nil
	}
	m := r.m
	m.SetHooks(r)
	var ent *entrySnap
	if r.irqStartOn() {
		ent = r.irqStartFor(r.reuse.until) // irqstart.go
	}
	if s := r.snaps; ent != nil {
		r.guard(func() { r.startInIRQ(ent) })
	} else if s != nil && s.from != nil {
		r.guard(func() { r.resume(s.from) })
	} else {
		if s != nil {
			s.cov = s.cov[:0]
		}
		r.guard(r.execute)
	}
	m.SetHooks(nil)
	settle(r.res)
	r.res.Schedule = r.sched
	r.res.Points = r.points
	r.res.AliasDependent = r.aliasDep
	r.res.weight, r.res.weightK = r.rmult, r.rmult
	if r.aliasDep && !r.sc.Alias {
		r.res.weightK = 0
	}
	if len(r.lzList) > 0 {
		// Each live option's run stands for the same merged placements
		// (docs/merged-remotes.md, "With lazy region orders").
		w, wk := r.lzWeights()
		r.res.weight, r.res.weightK = w*r.rmult, wk*r.rmult
	}
	if r.tr != nil {
		r.res.Events = r.tr.all()
		r.res.Trace = TraceText(r.res.Events)
	}
	return r.res
}

// execute is the part of a run that executes the code under test: setup,
// the task programs, and the quiescent points around them.
func (r *runner) execute() {
	m := r.m
	// Setup: register the initial users, on another CPU, before the run.
	r.direct++
	for _, u := range r.sc.Setup {
		i := m.RegisterFtraceGraph(r.ops[u])
		if i >= 0 {
			if err := r.model.Register(u, i); err != nil {
				r.violate("model", "setup: "+err.Error())
			}
			r.model.Start(u)
		}
	}
	r.direct--
	if r.tr != nil {
		r.tracef(nil, TraceNote, "setup: %d users registered", len(r.sc.Setup))
	}
	if r.opt.OnChoice != nil {
		r.opt.OnChoice(r.sched)
	}
	r.quiescent()
	if r.snaps != nil {
		r.takeSnap(0) // a run that changes a choice of the first op resumes after setup
	}
	r.runTasks(0)
	r.quiescent()
}

// resume is execute for a run that resumes from snap p (resume.go).
func (r *runner) resume(p *snap) {
	r.restoreSnap(p)
	if r.opt.OnChoice != nil {
		r.opt.OnChoice(r.sched) // the start of this run: its schedule so far
	}
	r.runTasks(p.cur)
	r.quiescent()
}

// runTasks runs the task programs: task 0 first; a sleeping task yields the
// CPU to the next task with work left.
func (r *runner) runTasks(cur int) {
	for !r.stopped {
		r.m.Current = cur
		c := r.taskCt[cur]
		r.ctxs = append(r.ctxs[:0], c)
		prog := r.sc.Tasks[cur]
		slept := false
		for r.pc[cur] < len(prog) && !r.stopped {
			op := prog[r.pc[cur]]
			r.pc[cur]++
			if op.Kind == OpSleep {
				if r.tr != nil {
					r.tracef(c, TraceNote, "%s sleeps", c.name)
				}
				slept = true
				break
			}
			r.exec(c, op)
			r.quiescent()
			if r.snaps != nil {
				r.takeSnap(cur)
			}
			if r.tails != nil && !r.stopped && r.pc[cur] < len(prog) {
				switch {
				case r.noChoiceLeft():
					r.between = true
					r.tails.tail()
					r.between = false
				case r.lzQuiet():
					r.between = true
					r.tails.quiet()
					r.between = false
				}
			}
		}
		next := -1
		for i := 1; i <= len(r.sc.Tasks); i++ {
			t := (cur + i) % len(r.sc.Tasks)
			if r.pc[t] < len(r.sc.Tasks[t]) && (t != cur || !slept || true) {
				next = t
				break
			}
		}
		if next < 0 {
			return
		}
		cur = next
	}
}

// exec runs one program step in context c.
func (r *runner) exec(c *ctx, op Op) {
	if r.tr != nil {
		r.tracef(c, TraceOp, "%s %s", c.name, op)
	}
	if r.hashing {
		q := r.opPend // the op snap of the op before, taken after the lookup (evsnap.go)
		r.opPend.on = false
		q.nops, q.hist, q.tailN = c.nops, c.hist, r.tailN
		c.nops++
		c.hist = mix(mix(hashSeed, uint64(c.nops)), uint64(op.Kind)<<32|uint64(uint32(op.Func)))
		if c.level > 0 && c.nops > 1 {
			r.betweenOps() // cache.go
			if r.stopped {
				return
			}
		}
		if q.on {
			r.takeOpSnapAt(q, c)
		}
	}
	r.yield(c, fgraph.SiteOpStart, false)
	if r.stopped {
		return
	}
	c.logFrom = len(r.m.Log)
	c.windowRead = false
	r.ver++
	if c.level == 0 {
		r.directRace = false
	}
	switch op.Kind {
	case OpCall, OpTail:
		r.call(c, op)
	case OpRet:
		r.ret(c)
	case OpUnwind:
		r.unwind(c, c.task, true)
	case OpExit:
		r.m.FtraceGraphExitTask(c.task)
		r.m.SetHooks(r)
		r.model.Tasks[c.task] = model.Task{Depth: -1}
	}
	r.Fence(fgraph.SiteNone, fgraph.OpEnd)
	c.ux = uxNone // before any lookup of a tail (unwindext.go)
	r.checkWarnings(c)
}

// claimed is the number of words taken on the current task's stack by
// entries in flight in the contexts below c, minus frames already dropped by
// returns in flight.
func (r *runner) claimed(c *ctx) int {
	n := 0
	for _, x := range r.ctxs {
		if x == c {
			break
		}
		if x.entry != nil && x.entry.pushed {
			n += x.entry.top - x.entry.base
		}
		if x.pop != nil && x.pop.lowered > 0 {
			fr := r.model.Tasks[x.task].Frames
			for i := 0; i < x.pop.lowered && x.pop.modelTop-1-i >= 0 && x.pop.modelTop-1-i < len(fr); i++ {
				f := fr[x.pop.modelTop-1-i]
				n -= r.cfg.FrameWords + 1
				for _, d := range f.Data {
					n -= len(d.Words) + 1
				}
			}
		}
	}
	return n
}

func (r *runner) call(c *ctx, op Op) {
	m := r.m
	t := c.task
	ret, retp := m.PeekCall(op.Kind == OpTail)
	slots := r.model.Slots
	if r.digest {
		c.hist = mix(mix(mix(c.hist, uint64(ret)), uint64(retp)), slotsDigest(&slots))
	}
	c.entryV = inflightEntry{ret: ret, fn: fgraph.FuncAddr(op.Func), retp: retp, modelPos: len(r.model.Tasks[t].Frames)}
	c.entry = &c.entryV
	hij := m.Call(op.Func, op.Kind == OpTail)
	c.entry = nil
	if r.stopped {
		return
	}
	// The model's view of the same call, against the user table the
	// kernel used (users that came or went meanwhile: what it did).
	var tab [model.Slots]model.Slot
	r.table(&tab, &slots, r.records(c, fgraph.RecEntry))
	res := r.model.CallWithBuf(r.entBuf, &r.slab, t, op.Func, ret, fgraph.FuncAddr(op.Func), retp, r.claimed(c), &tab)
	if hij != res.Pushed {
		r.violate("model", fmt.Sprintf("call %d: kernel hijacked=%v, model pushed=%v (traced=%v overrun=%v)", op.Func, hij, res.Pushed, res.Traced, res.Overrun))
		if r.stopped {
			return
		}
		if !hij {
			// Excused (direct-switch-race): the kernel missed the call;
			// follow it.
			tk := &r.model.Tasks[t]
			tk.Frames = tk.Frames[:len(tk.Frames)-1]
			tk.Depth--
			return
		}
		if !r.cfg.EntryForAll {
			return
		}
		// Excused as F10-entry-for-all: the kernel traced a function outside
		// the filter. Follow it (no filter for this call) so that the rest
		// of the run is judged against what the kernel did.
		r.model.Cfg.NoFilter = true
		res = r.model.CallWithBuf(r.entBuf, &r.slab, t, op.Func, ret, fgraph.FuncAddr(op.Func), retp, r.claimed(c), &tab)
		r.model.Cfg.NoFilter = r.mcfg.NoFilter
	}
	r.checkEntries(c, op.Func, res)
	r.entBuf = res.Entries[:0]
}

func (r *runner) ret(c *ctx) {
	m := r.m
	t := c.task
	sl := m.SlotCount(t)
	if sl == 0 {
		r.violate("model", "ret with no slot")
		return
	}
	top := m.SlotAt(t, sl-1)
	if top.Val == fgraph.ReturnToHandler {
		c.popV = inflightPop{modelTop: len(r.model.Tasks[t].Frames)}
		c.pop = &c.popV
	}
	slots := r.model.Slots
	h0 := m.Handlers[c.level&7]
	if r.digest {
		c.hist = mix(mix(mix(mix(c.hist, uint64(top.Val)), uint64(top.Retp)), uint64(h0)), slotsDigest(&slots))
	}
	got, want := m.Return()
	c.pop = nil
	if r.stopped {
		return
	}
	n := m.Handlers[c.level&7] - h0
	recs := r.records(c, fgraph.RecReturn)
	for i := 0; i < n; i++ {
		mine := r.mineBuf[:0]
		for _, rec := range recs {
			if rec.Handler == h0+i+1 {
				mine = append(mine, rec)
			}
		}
		r.mineBuf = mine
		var tab [model.Slots]model.Slot
		r.table(&tab, &slots, mine)
		mr, err := r.model.ReturnWithBuf(r.retBuf, t, &tab)
		r.retBuf = mr.Calls[:0]
		if err != nil {
			r.violate("model", fmt.Sprintf("return through return_to_handler: %v", err))
			return
		}
		recs = r.checkReturn(c, mr, recs)
		if r.stopped {
			return
		}
	}
	if got != want {
		r.violate("ret-addr", fmt.Sprintf("return from the function called at slot %#x reached %#x, want %#x", top.Retp, got, want))
	}
}

// table sets tab to the user table an operation ran against: the
// model's, except for slots whose occupant changed since before (the
// table when the operation began) or is leaving, where the kernel may
// have seen either; there the callbacks it ran decide. (By pointer: the
// arrays passed and returned by value were four copies a call or return.)
func (r *runner) table(tab, before *[model.Slots]model.Slot, recs []*fgraph.Record) {
	*tab = r.model.Slots
	for i := range tab {
		now, was := &r.model.Slots[i], &before[i]
		if now.User == was.User && now.Gen == was.Gen && !now.Leaving && !was.Leaving {
			continue
		}
		tab[i] = model.Slot{User: -1}
		for _, rec := range recs {
			if rec.Idx == i && rec.Ops >= 0 {
				tab[i] = model.Slot{User: rec.Ops, Gen: rec.Gen, Ready: true}
				break
			}
		}
	}
}

// records returns this op's callback records of kind k at c's level.
// Calls that reached the stub through a torn read are judged when they
// appear (checkRecord) and left out here.
// The slice is reused by the next call. Its records are the log's own,
// not copies: the checks that read them run no port code, so no callback
// changes them meanwhile.
func (r *runner) records(c *ctx, k fgraph.RecordKind) []*fgraph.Record {
	out := r.recBuf[:0]
	for i := c.logFrom; i < len(r.m.Log); i++ {
		if rec := &r.m.Log[i]; rec.Kind == k && c.owns(rec) {
			r.readLog(i)
			out = append(out, rec)
		}
	}
	r.recBuf = out[:0]
	return out
}

// owns reports whether rec is one of c's records: made at c's level,
// nesting and task, and not through a torn read (those are judged when
// they appear, checkRecord). records takes only those, and the state's log
// window (appendLog) keeps a record for c only if c owns it.
func (c *ctx) owns(rec *fgraph.Record) bool {
	return rec.Level == c.level && rec.Nest == c.nest && rec.Task == c.task && rec.Ops >= 0
}

// unwind walks task t like an unwinder: ftrace_graph_ret_addr over every
// hijacked slot (top down, one idx cursor) and ftrace_graph_get_ret_stack
// over every depth. With viaShim the port's loads go through the harness
// (yield points); otherwise they read memory directly.
func (r *runner) unwind(c *ctx, t int, viaShim bool) {
	if !viaShim {
		r.direct++
		defer func() { r.direct-- }()
	}
	prev := r.rd
	r.rd = readerCall{name: ReaderStackTrace, on: true, cur: t, t: t, values: true}
	r.checkRetAddrs(t, t, c, true, true)
	r.rd = prev
}

// nestedCall runs the traced call an entry callback makes (Ops.CallInEntry)
// in a context of its own on the same task and level, so that the recursion
// lock sees the same context: ftrace_test_recursion_trylock() lets the first
// nested call through on TRACE_CTX_TRANSITION and refuses one when the
// context's bit and TRANSITION are both held (trace_recursion.h). A call the
// lock lets through is an operation the model follows (call, then return);
// one it refuses must not be traced. Positions count on in the parent's
// occurrence numbers, under its name.
func (r *runner) nestedCall(fn int) {
	m := r.m
	p := r.top()
	c := r.newCtx()
	c.name, c.level, c.kind, c.task, c.nest, c.occ, c.nyield = p.name, p.level, p.kind, p.task, p.nest+1, p.occ, p.nyield
	if r.hashing {
		c.base = mix(mix(hashSeed, 0x6e657374), uint64(fn))
		c.hist = c.base
	}
	r.ctxs = append(r.ctxs, c)
	defer func() {
		p.occ, p.lastSite, p.nyield = c.occ, c.lastSite, c.nyield
		r.ctxs = r.ctxs[:len(r.ctxs)-1]
		r.freeCtx(c)
	}()
	c.logFrom = len(m.Log)
	if r.tr != nil {
		r.tracef(c, TraceNote, "%s: an entry callback calls f%d (nested call %d)", c.name, fn, c.nest)
	}
	if !m.RecursionHeld(c.task, c.level) && !r.opt.NoOracles {
		r.violate(OracleCallback, fmt.Sprintf("an entry callback calls f%d while its context does not hold its recursion bit: function_graph_enter runs the callbacks without the recursion lock", fn))
		if r.stopped {
			return
		}
	}
	if m.RecursionRefuses(c.task, c.level) {
		if m.Call(fn, false) && !r.opt.NoOracles {
			r.violate(OracleCallback, fmt.Sprintf("nested call %d of f%d from an entry callback was traced although the context's recursion bit and TRACE_CTX_TRANSITION are held", c.nest, fn))
		}
		m.Return()
		r.commit(c)
		return
	}
	r.call(c, Op{Kind: OpCall, Func: fn})
	if !r.stopped {
		r.ret(c)
	}
	r.commit(c)
}

// targetLine is the compiled target's source line of the store being
// committed, 0 on the port.
func (r *runner) targetLine() int {
	if l, ok := r.sc.Target.(Liner); ok {
		return l.Line()
	}
	return 0
}

// Direct reports that the code under test is being called with no yield
// point to offer (a remote CPU's action, setup, an oracle's unwinder): a
// compiled target need not report its loads then.
func (r *runner) Direct() bool { return r.direct > 0 || len(r.ctxs) == 0 }

// newCtx returns a context with every field zero but its (empty) store
// buffers and own-store list: a finished one if there is one, else a new one.
func (r *runner) newCtx() *ctx {
	n := len(r.free)
	if n == 0 {
		return &ctx{}
	}
	c := r.free[n-1]
	r.free = r.free[:n-1]
	buf, spare, restBuf, stored := c.buf[:0], c.spare, c.restBuf, c.stored[:0]
	*c = ctx{}
	c.buf, c.spare, c.restBuf, c.stored = buf, spare, restBuf, stored
	return c
}

// freeCtx hands back a context that is off the CPU for good.
func (r *runner) freeCtx(c *ctx) { r.free = append(r.free, c) }

// top is the running context.
func (r *runner) top() *ctx { return r.ctxs[len(r.ctxs)-1] }

// ---- fgraph.Hooks ----

// Load is a yield point (before the load), then the load: the context's
// own buffered store to a forwards, else memory.
func (r *runner) Load(s fgraph.Site, a fgraph.Addr, k fgraph.Kind) fgraph.Word {
	if r.afterStop() {
		return r.stoppedLoad(a) // stopped.go
	}
	r.step()
	if r.direct > 0 || len(r.ctxs) == 0 {
		return r.m.Mem[a]
	}
	c := r.top()
	if s == fgraph.SitePopOffset && r.clobbered && r.stillClobbered(a) {
		// The return takes a clobbered DATA word, still wrong, for the
		// frame's meta word (known finding reserve-reorder spreads from
		// here into curr_ret_stack).
		r.clobberSpread = true
	}
	if !r.sc.StoresOnly {
		r.yieldLoad(c, s, a)
	}
	if k == fgraph.Plain {
		c.noteLoad(a)
	}
	v := r.sees(c, a)
	if r.digest {
		c.hist = mix(c.hist, uint64(s)<<32|uint64(uint32(a))^uint64(v))
	}
	return v
}

// sees is what a load of a by c reads: c's own latest buffered store to
// a, else memory.
func (r *runner) sees(c *ctx, a fgraph.Addr) fgraph.Word {
	for i := len(c.buf) - 1; i >= 0; i-- {
		if c.buf[i].addr == a {
			return c.buf[i].val
		}
	}
	return r.m.Mem[a]
}

// Digest adds v, a digest of inputs of the running context's code that no
// hook saw (a compiled target's loads of state the port does not model),
// to the context's input digest (fgraph.Digester; state.go), where Load
// would add a load's value.
func (r *runner) Digest(v uint64) {
	if !r.digest || r.direct > 0 || len(r.ctxs) == 0 {
		return
	}
	c := r.top()
	c.hist = mix(c.hist, v)
}

// Reread is a further use of a plain load's value: where the compiler may
// load the word again (ctx.reloadable) it is a yield point and a load;
// elsewhere the value is kept and nothing happens.
func (r *runner) Reread(s fgraph.Site, a fgraph.Addr, prev fgraph.Word) fgraph.Word {
	if r.afterStop() {
		return prev // the compiler may keep the value; nothing runs between
	}
	if r.direct > 0 || len(r.ctxs) == 0 {
		return r.Load(s, a, fgraph.Plain)
	}
	// One rule for both compiler models: a re-load only where kbuild's
	// model allows one (no own store at all since the load, for
	// -fno-strict-aliasing must assume any may alias the word). A compiler
	// that proves no alias may also re-load across an own store to another
	// address, but it may as well keep the value; exploring both would
	// need a keep-or-reload choice the schedule format has no line for, and
	// re-loading always would lose the kept value from the no-alias runs,
	// which must include every kbuild run (docs/compiler-model.md).
	if !r.top().reloadable(a, true) {
		return prev
	}
	return r.Load(s, a, fgraph.Plain)
}

// Store buffers the store in the context's region.
func (r *runner) Store(s fgraph.Site, a fgraph.Addr, v fgraph.Word, k fgraph.Kind) {
	if r.afterStop() {
		r.stoppedStore(a, v) // stopped.go
		return
	}
	r.step()
	if r.direct > 0 || len(r.ctxs) == 0 {
		r.wsGot.add(a)
		r.poke(a, v)
		r.ver++
		if r.opt.Observe != nil {
			r.opt.Observe.Store("remote", -1, s, a, v)
		}
		return
	}
	c := r.top()
	if r.digest {
		c.hist = mix(mix(c.hist, uint64(s)<<32|uint64(uint32(a))|uint64(k)<<60), uint64(v))
	}
	if s == fgraph.SiteEnterDepthStore && c.inCallback > 0 && !r.opt.NoOracles {
		r.violate(OracleCallback, "function_graph_enter re-entered from inside an entry callback in the same context (no recursion lock)")
	}
	c.buf = append(c.buf, pending{site: s, addr: a, val: v, kind: k})
	c.stored = append(c.stored, a)
	if r.compiled {
		r.commit(c)
	}
}

// AtomicAdd is an indivisible read-modify-write on memory.
func (r *runner) AtomicAdd(s fgraph.Site, a fgraph.Addr, d int64) fgraph.Word {
	if r.afterStop() {
		return r.stoppedAdd(a, d) // stopped.go
	}
	r.step()
	if r.direct > 0 || len(r.ctxs) == 0 {
		r.wsGot.add(a)
		r.poke(a, r.m.Mem[a]+fgraph.Word(d))
		r.ver++
		return r.m.Mem[a]
	}
	c := r.top()
	if r.digest {
		c.hist = mix(c.hist, uint64(s)<<32|uint64(uint32(a)))
	}
	v := r.sees(c, a) + fgraph.Word(d)
	if r.digest {
		c.hist = mix(c.hist, uint64(v))
	}
	c.buf = append(c.buf, pending{site: s, addr: a, val: v, kind: fgraph.Atomic})
	r.commit(c)
	c.boundary() // atomic_inc is an asm with a "memory" clobber
	if r.mergeRem {
		r.remBoundary(c)
	}
	return v
}

// Fence ends the region: every buffered store commits.
func (r *runner) Fence(s fgraph.Site, f fgraph.Fence) {
	if r.afterStop() {
		r.stoppedFence() // stopped.go
		return
	}
	if r.direct > 0 || len(r.ctxs) == 0 {
		return
	}
	c := r.top()
	if r.digest {
		c.hist = mix(c.hist, uint64(s)<<8|uint64(f))
	}
	c.boundary()
	if r.mergeRem {
		r.remBoundary(c)
		c.plain = f <= fgraph.SmpWmb // no bookkeeping of the fence follows its commits
	}
	r.commit(c)
	c.plain = false
	if r.opt.Observe != nil {
		r.opt.Observe.Fence(c.name, c.level, s, f)
	}
	if s == fgraph.SiteRetrieveCall || s == fgraph.SiteGetRetStackCall {
		r.callbackReader(c, s, f) // readers.go
	}
	if r.tr != nil && f != fgraph.OpEnd {
		if e := r.tracef(c, TraceBarrier, "%s %s at %s", c.name, fenceText[f], s); e != nil {
			e.Site = s.String()
		}
	}
	switch f {
	case fgraph.IrqOff:
		c.irqOff++
	case fgraph.IrqOn:
		c.irqOff--
	case fgraph.CallIn:
		if s == fgraph.SiteEnterCall {
			c.inCallback++
		}
	case fgraph.CallOut:
		if s == fgraph.SiteEnterCallRet {
			c.inCallback--
		}
	}
	if s == fgraph.SiteReserveCall && f == fgraph.CallOut && c.resv != nil {
		if r.m.Mem[c.resv.addr] != c.resv.val {
			r.clobbered = true // the DATA word stays overwritten
			r.clobberedFixes = append(r.clobberedFixes, wordFix{c.resv.addr, c.resv.val})
		}
		c.resv = nil
		r.inReserveWindow = r.reserveWindow()
	}
}

// commit writes c's buffered stores to memory in the region's chosen order;
// each commit is a yield point.
func (r *runner) commit(c *ctx) {
	if len(c.buf) == 0 {
		return
	}
	buf := c.buf
	var order, drop []int
	var lz *lzInst
	eager := false
	// (A store alone makes no instance of a region not pending:
	// lzEligible wants two. Most regions are one store, and the call
	// was 0.5 % of peer-spin K=3.)
	if r.lazy && (len(buf) > 1 || r.lzLive[buf[0].site] != 0) {
		lz, order, drop, eager = r.lzStart(c, buf)
	}
	switch {
	case lz != nil:
		order = lz.ords[lz.rep]
		defer r.lzEnd(c)
	case !eager:
		order, drop = r.regionOrder(c, buf)
	}
	if lz == nil && len(buf) == 1 && len(order) == 1 && len(drop) == 0 {
		r.commitOne(c, buf)
		return
	}
	// Double-buffer: c.buf takes the spare slice while buf commits.
	c.buf, c.spare = c.spare[:0], nil
	for _, j := range drop {
		if r.tr != nil {
			if e := r.tracef(c, TraceDrop, "%s drop %s", c.name, buf[j].site); e != nil {
				e.Site, e.Addr, e.Where, e.Value = buf[j].site.String(), int(buf[j].addr), r.addrName(buf[j].addr), buf[j].val
			}
		}
	}
	rest := c.restBuf[:0]
	for _, j := range order {
		rest = append(rest, buf[j])
	}
	c.restBuf = nil
	defer func() {
		// The two halves go back to the context however the commit ends:
		// a run stopped in it (a cache hit) used to drop them, and the
		// next run's stores grew new ones (4 % of std C=3 in growslice).
		c.rest = nil
		if c.spare == nil {
			c.spare = buf[:0]
		}
		if c.restBuf == nil {
			c.restBuf = rest[:0]
		}
	}()
	for k := 0; k < len(order); k++ {
		c.rest = rest[k+1:]
		st := buf[order[k]]
		r.poke(st.addr, st.val)
		if r.opt.Observe != nil {
			r.opt.Observe.Store(c.name, c.level, st.site, st.addr, st.val)
		}
		if r.visible(st.addr) {
			r.ver++
		}
		r.onCommit(c, st)
		if r.stopped {
			return
		}
		rep := -1
		if lz != nil {
			lz.k, rep = k+1, lz.rep
		}
		r.yield(c, st.site, true)
		if r.stopped {
			return
		}
		if lz != nil && r.lzAfterYield(c, lz) != rep {
			// Another option's order from here on (lazy.go): the yield
			// narrowed the region to another class, or an event there did.
			order = lz.ords[lz.rep]
			rest = rest[:k+1]
			for _, j := range order[k+1:] {
				rest = append(rest, buf[j])
			}
		}
	}
}

// commitOne is commit for a region of one store (1.3 M of peer-spin
// K=3's 2.2 M commits): nothing is left to commit after it (c.rest stays
// empty), so no copy in order and no deferred call. A run aborted in its
// yield leaves c.spare unset, and the context's next stores take a new
// slice. Its commit of the store is the loop's in commit, written twice:
// a helper both call, which the compiler does not inline, cost 0.6 % of
// peer-spin K=3's instructions.
func (r *runner) commitOne(c *ctx, buf []pending) {
	c.buf, c.spare = c.spare[:0], nil
	st := buf[0]
	r.poke(st.addr, st.val)
	if r.opt.Observe != nil {
		r.opt.Observe.Store(c.name, c.level, st.site, st.addr, st.val)
	}
	if r.visible(st.addr) {
		r.ver++
	}
	r.onCommit(c, st)
	if !r.stopped {
		r.yield(c, st.site, true)
	}
	if c.spare == nil {
		c.spare = buf[:0]
	}
}

// yieldLoad is the yield point before a load. Interrupts are not offered
// here: memory has not changed since the last commit, and an interrupt that
// leaves the live stack as it found it (oracle 5, checked after every
// interrupt) commutes with loads of live task state, so an interrupt here is
// the same run as one at the previous commit (docs/compiler-model.md). A
// remote CPU's action can change global state between two loads, so remote
// actions are offered before loads of global state and before re-reads.
func (r *runner) yieldLoad(c *ctx, s fgraph.Site, a fgraph.Addr) {
	c.occ[s]++
	c.nyield++
	c.lastSite = s
	global := a < fgraph.AddrOps+fgraph.MaxOps*fgraph.OpsWords
	var sup uint8
	r.supW = 0
	if r.mergeRem && global {
		sup = r.remLoad(c, s, a) // remotes.go
		sup |= r.uxAt(c, sup)    // unwindext.go
	}
	if !global || r.eUsed >= r.sc.Bound.E || r.sc.Bound.spent(r.kUsed, r.rUsed, r.eUsed) {
		return
	}
	r.choose(c, s, false, sup)
}

// yield is the yield point after a commit (or at the start of an op): the
// oracles run, then the chooser may inject an interrupt or a remote action.
func (r *runner) yield(c *ctx, s fgraph.Site, commit bool) {
	c.occ[s]++
	c.nyield++
	c.lastSite = s
	if !r.opt.NoOracles && r.checked != r.ver {
		r.checked = r.ver
		r.checkYield(c, s)
		if r.stopped {
			return
		}
	}
	var sup uint8
	r.supW = 0
	if r.mergeRem {
		r.remYield(c, s, commit && c.plain) // remotes.go
		sup = r.uxAt(c, 0)                  // unwindext.go
	}
	r.choose(c, s, true, sup)
}

// checkYield runs the in-place checks of a yield point (reusing the
// previous run's over a shared prefix, reuse.go), or, inside a pending
// instance, records as clean one its sandbox found clean (lazy.go).
func (r *runner) checkYield(c *ctx, s fgraph.Site) {
	switch {
	case c.lz != nil && r.lzCleanHere(c):
		if r.reuse != nil && !r.replayCheck() {
			r.recordCheck(r.marks())
		}
	case r.reuse != nil:
		r.checkInPlaceOnce(c, s)
	default:
		r.checkInPlace(c, s)
	}
}

// choose offers the options of a yield point to the chooser, less the
// kinds of remote action in sup (remotes.go).
func (r *runner) choose(c *ctx, s fgraph.Site, interrupts bool, sup uint8) {
	r.nchoose++
	if r.fastRep && r.points < r.reuse.until && r.replayed(c) {
		return
	}
	b := &r.sc.Bound // not a copy: copying the struct stalled on store forwarding (4 % of std C=3)
	var opts []Option
	if !b.spent(r.kUsed, r.rUsed, r.eUsed) {
		intr := 0
		if interrupts && r.kUsed < b.K && c.level < b.D && c.irqOff == 0 {
			if c.level == 0 && len(r.sc.IRQ) > 0 {
				intr = 1
			} else if c.level > 0 && len(r.sc.NMI) > 0 {
				intr = 2
			}
		}
		opts = r.yieldOptions(intr, r.eUsed < b.E)
		if sup != 0 || r.supW != 0 {
			opts = r.remFilter(opts, sup)
		}
	}
	nb := len(opts)
	lz := c.lz
	if lz != nil {
		// Inside an instance of a pending region (lazy.go): the options of
		// the orders this yield tells apart too.
		opts, nb = r.lzOptions(c, opts)
	}
	if len(opts) <= 1 {
		return
	}
	p := &r.pt
	// Field by field: a composite literal is built on the stack and
	// copied, and the copy stalled on store forwarding.
	p.Kind, p.Ctx, p.Pos.Site, p.Pos.Occ = PointYield, c.name, s, int(c.occ[s])
	p.Level, p.Index, p.ord = c.level, r.points, c.nyield
	r.points++
	i := r.ask(p, opts)
	if i < 0 || i >= len(opts) {
		i = 0
	}
	if lz != nil {
		if i >= nb {
			if p.Index == r.chgAt {
				r.chg = ChangeNarrow
			}
			e := r.lzExts[i-nb]
			r.lzNarrow(c, e.rep)
			if r.stopped {
				return
			}
			i = e.base
		} else if i > 0 || lz.k == len(lz.buf) {
			r.lzStay(c)
		}
		if i > 0 {
			lz.evAt = lz.k
		}
	}
	if i == 0 {
		return
	}
	o := opts[i]
	r.nextID++
	id := r.nextID
	switch o.Kind {
	case OptIRQ, OptNMI:
		k := EvIRQ
		if o.Kind == OptNMI {
			k = EvNMI
		}
		r.addEvent(Event{ID: id, Kind: k, In: c.name, At: p.Pos, Line: r.targetLine()})
		r.evOrd = append(r.evOrd, p.ord)
		r.kUsed++
		c.rcls, c.rws, c.wsOK = segNone, 0, false // the segment is broken
		r.uxTaken(c, o)
		r.lzCollapse()
		r.covHitAt(s, c.level+1)
		if lz != nil && r.lzActive(lz) {
			r.lzCredit(lz, c.level+1)
		}
		if l, ok := r.sc.Target.(Liner); ok && l.Line() > 0 {
			r.covLineAt(l.Line())
		}
		if r.opt.OnChoice != nil {
			r.opt.OnChoice(r.sched)
		}
		if r.catchUp(p.Index) {
			return // the state after the interrupt is put back (irqstart.go)
		}
		// An interrupt the run replays whole is not run again (evsnap.go).
		if idx := p.Index; !r.restoreEvSnap(idx) {
			r.interrupt(c, id, k, p.Pos, idx)
		}
		r.afterEvent() // cache.go
	case OptRemote:
		r.addEvent(Event{ID: id, Kind: EvRemote, In: c.name, At: p.Pos, Remote: o.Remote, Line: r.targetLine()})
		r.evOrd = append(r.evOrd, p.ord)
		r.eUsed++
		r.lzCollapse()
		r.remoteUsed[o.Remote] = true
		if r.opt.OnChoice != nil {
			r.opt.OnChoice(r.sched)
		}
		rep := r.uxTaken(c, o)
		if r.mergeRem && !rep {
			r.remFired(c, o.Remote)
		}
		nv := r.violations
		r.wsGot = wsSet{}
		r.remote(c, id, o.Remote, p.Pos)
		if r.mergeRem && !rep {
			r.remFiredCheck(c, o.Remote) // remotes.go
		}
		if rep && r.violations != nv {
			internalf("merged remote unwind: the representative's unwind reported what its evaluation did not")
		}
	}
}

// addEvent appends an injected event to the run's schedule, the first
// with room for as many as the bound allows.
func (r *runner) addEvent(e Event) {
	if r.sched.Events == nil {
		r.sched.Events = r.pool.events(max(1, r.sc.Bound.K+r.sc.Bound.E))
	}
	r.sched.Events = append(r.sched.Events, e)
}

// addOrder appends a chosen order to the run's schedule, the first with
// room for as many as the bound allows.
func (r *runner) addOrder(o Order) {
	if r.sched.Orders == nil {
		r.sched.Orders = r.pool.orders(max(1, r.sc.Bound.R))
	}
	r.sched.Orders = append(r.sched.Orders, o)
}

// yieldOptions is the option list of a yield point: continue, then the
// interrupt intr offers (0: none, 1: an IRQ, 2: an NMI), then, if remotes,
// every remote action not used yet. The lists are built once per runner and
// shared by every yield point with the same options (they are read-only:
// no chooser writes to its options), so a yield point allocates nothing.
func (r *runner) yieldOptions(intr int, remotes bool) []Option {
	n := len(r.sc.Remotes)
	if n > 16 {
		return r.buildYieldOptions(intr, remotes)
	}
	key := intr
	if remotes {
		mask := 1 // the bit above the remotes' marks that they are offered
		for i, used := range r.remoteUsed {
			if !used {
				mask |= 2 << i
			}
		}
		key += 3 * mask
	}
	if r.yieldOpts == nil {
		r.yieldOpts = make([][]Option, 3<<(n+1))
	}
	if o := r.yieldOpts[key]; o != nil {
		return o
	}
	o := r.buildYieldOptions(intr, remotes)
	r.yieldOpts[key] = o[:len(o):len(o)]
	r.opts = nil
	return r.yieldOpts[key]
}

// buildYieldOptions builds the list yieldOptions describes, into r.opts.
func (r *runner) buildYieldOptions(intr int, remotes bool) []Option {
	opts := r.opts[:0]
	opts = append(opts, Option{Kind: OptContinue})
	switch intr {
	case 1:
		opts = append(opts, Option{Kind: OptIRQ})
	case 2:
		opts = append(opts, Option{Kind: OptNMI})
	}
	if remotes {
		for i := range r.sc.Remotes {
			if !r.remoteUsed[i] {
				opts = append(opts, Option{Kind: OptRemote, Remote: i})
			}
		}
	}
	r.opts = opts
	return opts
}

// poke is every write of memory the harness makes (a commit, a remote
// CPU's store, a sandbox's, a counterfactual fix, a write after the stop):
// the reader memo forgets what it kept if the write changes one of its
// words (readers.go).
func (r *runner) poke(a fgraph.Addr, v fgraph.Word) {
	if r.rmemo.ok && r.rmemo.covers(a) && r.m.Mem[a] != v {
		r.rmemo.ok = false
	}
	r.m.Poke(a, v)
}

// visible reports whether a store to a can change what the in-place oracles
// see: anything but a shadow-stack word at or above its task's
// curr_ret_stack (not live: no unwinder reads it).
func (r *runner) visible(a fgraph.Addr) bool {
	if t := r.stackAt[a]; t >= 0 {
		x := &r.stacks[t]
		return int(a-x.lo) < int(int64(r.m.Mem[x.curr]))
	}
	return true
}

// taskStack is where a task's shadow stack and its curr_ret_stack are
// (visible, once a commit).
type taskStack struct{ lo, hi, curr fgraph.Addr }

// interrupt runs an IRQ or NMI to completion on the current task; idx is
// the choice point whose option it is.
func (r *runner) interrupt(parent *ctx, id int, k EventKind, at Pos, idx int) {
	r.entryAt(parent, id, k, at, idx) // irqstart.go
	m := r.m
	t := m.Current
	prog := r.sc.IRQ
	if k == EvNMI {
		prog = r.sc.NMI
	}
	lv := (parent.level + 1) & 7
	before := r.snapshotLive(r.liveBuf[lv][:0], t)
	r.liveBuf[lv] = before
	c := r.newCtx()
	c.name, c.level, c.kind, c.task = strconv.Itoa(id), parent.level+1, k, t
	if r.hashing {
		c.base = mix(wordsDigest(before), uint64(k))
		c.hist = c.base
	}
	if r.tr != nil {
		if e := r.tracef(c, TraceEnter, "%s %d in %s at %s", k, id, parent.name, at); e != nil {
			e.Site = at.String()
		}
		r.tracePicture(c.level, fmt.Sprintf("before %s %d", k, id), t)
	}
	r.ctxs = append(r.ctxs, c)
	m.Level = c.level
	// A run that replays the interrupt's first ops puts back what they
	// left instead of running them again (op snaps, evsnap.go); the
	// snaps keep what the interrupt logged from here.
	from := r.evMarks()
	for i := r.restoreOpSnap(idx, c); i < len(prog); i++ {
		if r.stopped {
			break
		}
		r.exec(c, prog[i])
		if i+1 < len(prog) {
			r.takeOpSnap(idx, i, c, from)
		}
	}
	r.commit(c)
	r.ctxs = r.ctxs[:len(r.ctxs)-1]
	m.Level = parent.level
	if r.tr != nil {
		r.tracef(c, TraceExit, "%s %d returns to %s", k, id, parent.name)
		r.tracePicture(parent.level, fmt.Sprintf("after %s %d", k, id), t)
	}
	r.freeCtx(c)
	if !r.stopped && !r.opt.NoOracles {
		r.checkTransparentOnce(parent, before)
		r.ver++
	}
	// A later run that replays this interrupt whole puts back what it
	// left from here (restoreEvSnap, in choose).
	r.takeEvSnap(idx, from)
	if parent.level == 0 {
		r.entryReturned(idx)
	}
}

// remote runs a remote-CPU action atomically at this yield point; the rest
// of a register/unregister (after ftrace_*_subops synchronises) runs at the
// next quiescent point.
func (r *runner) remote(c *ctx, id, i int, at Pos) {
	rem := r.sc.Remotes[i]
	m := r.m
	key, gops := m.Mem[fgraph.AddrDoDirect], m.Mem[fgraph.AddrDirectGops]
	if c.rrep != 0 {
		// A representative of merged placements (remotes.go): a crash of
		// the action is the run's verdict, given when the segment ends.
		defer func() {
			if x := recover(); x != nil {
				switch x.(type) {
				case abortRun, haltRun, *InternalError, chooserPanic:
					panic(x)
				}
				r.quietCrash(x)
			}
		}()
	}
	defer func() {
		switch c.lastSite {
		case fgraph.SiteEnterSave, fgraph.SiteEnterDirectGops, fgraph.SiteEnterDirectCall,
			fgraph.SiteRetDirectGops, fgraph.SiteRetDirectCall:
			if m.Mem[fgraph.AddrDoDirect] != key || m.Mem[fgraph.AddrDirectGops] != gops {
				r.directRace = true // known finding direct-switch-race
			}
		}
	}()
	if r.tr != nil {
		rc := &ctx{name: "remote " + strconv.Itoa(id), level: c.level + 1}
		tasks := []int{m.Current}
		if rem.Kind == RemoteUnwind && rem.Task != m.Current {
			tasks = append(tasks, rem.Task)
		}
		r.traceRemote(rc, TraceEnter, fmt.Sprintf("remote %d %s in %s at %s", id, rem.Label(r.sc), c.name, at), at.String())
		r.tracePicture(rc.level, fmt.Sprintf("before remote %d", id), tasks...)
		defer func() {
			r.traceRemote(rc, TraceExit, fmt.Sprintf("remote %d done", id), "")
			r.tracePicture(c.level, fmt.Sprintf("after remote %d", id), tasks...)
		}()
	}
	r.direct++
	defer func() { r.direct-- }()
	switch rem.Kind {
	case RemoteRegister:
		r.remoteRegister(rem.User, &r.finish)
	case RemoteUnregister:
		r.remoteUnregister(rem.User)
	case RemoteReplace:
		// A tracer switch: unregister_ftrace_graph() cannot return while
		// this CPU is inside fgraph code (ftrace_shutdown_subops waits for
		// it), so the register starts at the next quiescent point and its
		// tail runs at the one after.
		if !r.remoteUnregister(rem.User) {
			return
		}
		r.finish[len(r.finish)-1].then = rem.With
	case RemoteUnwind:
		r.remoteUnwind(c, rem.Task) // readers.go; direct (r.direct > 0)
	}
}

// remoteRegister begins a register of user u and queues its tail
// (ftrace_startup_subops, the publish, the call sites going live) on queue.
// The seed publishes at once; only its hook waits for the tail.
func (r *runner) remoteRegister(u int, queue *[]tail) {
	m := r.m
	o := r.ops[u]
	if o.Registered() {
		// A scenario's register of a registered user is a no-op: a tracer
		// does not register its ops twice (the 2025 kernel WARNs on that
		// caller bug, fgraph.TestRegisterTwice).
		return
	}
	idx := m.RegisterBegin(o)
	if idx < 0 {
		return
	}
	seed := r.sc.Variant == fgraph.Seed
	if seed {
		r.modelRegister(u, idx)
	} else {
		r.pending[idx] = u + 1
	}
	*queue = append(*queue, tail{reg: true, u: u, idx: idx, then: -1})
}

// remoteUnregister begins an unregister and queues its tail.
func (r *runner) remoteUnregister(u int) bool {
	m := r.m
	o := r.ops[u]
	if !o.Registered() {
		return false // likewise: the 2025 kernel WARNs on this caller bug
	}
	if !m.UnregisterBegin(o) {
		return false
	}
	r.model.BeginUnregister(u)
	r.finish = append(r.finish, tail{u: u, then: -1})
	return true
}

// tail is the deferred half of a remote register or unregister of user
// u, run at a quiescent point (a value, not a closure: the closures, one
// per remote action and two for a tracer switch, were 1.4 M of std C=3's
// 5.5 M allocations).
type tail struct {
	reg  bool // a register's tail (ftrace_startup_subops, the publish); else an unregister's
	u    int
	idx  int // a register's index in fgraph_array
	then int // after an unregister's tail, the user whose register starts then (a tracer switch), queued for the next quiescent point; -1: none
}

// runTail runs t (quiescent).
func (r *runner) runTail(t tail) {
	m, o := r.m, r.ops[t.u]
	if t.reg {
		m.RegisterFinish(o)
		if r.sc.Variant != fgraph.Seed {
			r.pending[t.idx] = 0
			r.modelRegister(t.u, t.idx)
		}
		r.model.Start(t.u)
		return
	}
	m.UnregisterFinish(o)
	r.model.Stop(t.u)
	if r.model.SlotOf(t.u) >= 0 { // else its index was already handed to a new user (seed)
		if err := r.model.Unregister(t.u); err != nil {
			r.violate("model", err.Error())
		}
	}
	if t.then >= 0 {
		r.remoteRegister(t.then, &r.later)
	}
}

func (r *runner) modelRegister(u, idx int) {
	// The kernel released the index at the start of an unregister whose
	// tail has not run: the model lets the new user take it.
	if old := r.model.Slots[idx]; old.User >= 0 && old.Leaving {
		if err := r.model.Unregister(old.User); err != nil {
			r.violate("model", err.Error())
		}
	}
	if err := r.model.Register(u, idx); err != nil {
		r.violate("model", err.Error())
	}
}

// noChoiceLeft reports whether no later yield point or region can offer a
// choice in this run: the cap is reached, or every budget is spent. The
// compiled code commits each store as it makes it, in the order GCC
// chose (runner.compiled), so no region offers an order there.
func (r *runner) noChoiceLeft() bool {
	b := &r.sc.Bound
	if r.lzSplittable() {
		// A pending region can still be split (lazy.go): at an instance's
		// end, by what the oracles report of its orders.
		return false
	}
	return b.spent(r.kUsed, r.rUsed, r.eUsed) || r.kUsed >= b.K && (r.rUsed >= b.R || r.compiled) && r.eUsed >= b.E
}

// quiescent runs the deferred halves of remote actions and the model
// equivalence oracle. Only the task context is on the CPU, between ops.
func (r *runner) quiescent() {
	if r.stopped {
		return
	}
	r.direct++
	// By index, so that the queue keeps its array for the next tails
	// (taking each off its front left an array with no room, and every
	// remote action's tail allocated one).
	for i := 0; i < len(r.finish); i++ {
		r.runTail(r.finish[i])
	}
	r.finish, r.later = r.later, r.finish[:0]
	r.direct--
	r.ver++
	if r.opt.Observe != nil {
		r.opt.Observe.Quiescent(r.m)
	}
	if !r.opt.NoOracles {
		r.checkModelOnce()
	}
}
