package fgraph

import "fmt"

// Global addresses in Machine.Mem (kernel/trace/fgraph.c globals).
const (
	AddrArray      Addr = 0  // fgraph_array[16]: 0 NULL, 1 &fgraph_stub, 2+k ops k
	AddrBitmask    Addr = 16 // fgraph_array_bitmask
	AddrActive     Addr = 17 // ftrace_graph_active
	AddrDoDirect   Addr = 18 // static key fgraph_do_direct (1 = on)
	AddrDirectGops Addr = 19 // fgraph_direct_gops
	AddrFunc       Addr = 20 // static call fgraph_func (ops handle; 1 = stub)
	AddrRetfunc    Addr = 21 // static call fgraph_retfunc
	AddrLRU        Addr = 22 // fgraph_lru_table[16]
	AddrLRUNext    Addr = 38 // fgraph_lru_next
	AddrLRULast    Addr = 39 // fgraph_lru_last
	AddrDead       Addr = 40 // kill_ftrace_graph (ftrace_graph_is_dead)
	AddrArrayCnt   Addr = 41 // fgraph_array_cnt (seed)
	AddrSlotGen    Addr = 42 // gen-counter fix: per-slot generation [16]
	AddrOps        Addr = 64 // per-ops words, OpsWords each
	globalWords         = AddrOps + MaxOps*OpsWords
)

// Per-ops words (gops->ops state that fgraph reads).
const (
	OpsReady = 0 // ftrace_ops started: func_hash usable (FTRACE_OPS_FL_INITIALIZED & hash set)
	OpsIdx   = 1 // gops->idx
	OpsWords = 2
	MaxOps   = 8
)

// Handles stored in pointer-valued words.
const (
	HandleNull Word = 0
	HandleStub Word = 1 // &fgraph_stub
)

// OpsHandle is the pointer value of ops k.
func OpsHandle(k int) Word { return Word(k + 2) }

// Per-task fields, relative to the task's base address.
const (
	TaskRetStack  = 0 // t->ret_stack: 0 NULL, 1 allocated
	TaskCurr      = 1 // t->curr_ret_stack
	TaskDepth     = 2 // t->curr_ret_depth
	TaskOverrun   = 3 // t->trace_overrun
	TaskRecursion = 4 // current->trace_recursion: the TRACE_FTRACE_* bits of ftrace_test_recursion_trylock
	TaskWords     = 8 // first word of the shadow stack
)

// Special addresses of the simulated text.
const (
	// ReturnToHandler is the address of return_to_handler.
	ReturnToHandler Word = 0xffffffff81000000
	// PanicAddr is the address of panic(), returned on a bad pop.
	PanicAddr Word = 0xffffffff81000100
	funcBase  Word = 0xffffffff82000000
)

// FuncAddr is the address of symbolic function f (f >= 1).
func FuncAddr(f int) Word { return funcBase + Word(f)<<8 }

// CallSite is the return address inside function f after its call number n.
func CallSite(f, n int) Word { return FuncAddr(f) + Word(n+1)*4 }

// Machine is one CPU with its tasks and the global fgraph state.
type Machine struct {
	cfg   Config
	Mem   []Word
	hooks Hooks
	// warnMemo: the warnings' messages rendered so far (render).
	warnMemo map[warnKey]string
	// dig is hooks as a Digester, nil if it is not one (traceClock).
	dig Digester
	// attached and attachedDig are the last two non-nil hooks set and
	// their Digesters: an oracle detaches and re-attaches the same hooks
	// around every in-place walk (or attaches a recorder of its reads
	// instead), and the type assertion was most of that.
	attached    [2]Hooks
	attachedDig [2]Digester
	core        Core
	// ext: the core is not the port (its stores go through Poke too).
	ext bool
	// entryRetp is the slot of the call being entered, per context level.
	entryRetp [8]Word

	ops   []*Ops
	tasks []taskInfo
	// slotVer moves on at every change of a task's real stack (a push, a
	// pop, a slot rewritten, a reset or a restore): a reader that kept a
	// copy of the slots knows them unchanged while it stays (SlotsVersion).
	slotVer uint64

	// Current is the task running on the CPU; interrupts run on it.
	Current int
	// Level is the context nesting level (0 task, 1 IRQ, 2 NMI, ...); the
	// harness sets it on interrupt entry and exit.
	Level int

	// Log holds every callback the users saw, in order.
	Log []Record
	// recFree is what is left of the chunk recordWords cuts from.
	recFree []Word
	// NoLog stops recording callbacks (the users still do their work): for
	// measuring the port alone, with no oracle reading the log.
	NoLog bool
	// Warnings holds every WARN and refusal the kernel code would print or count.
	Warnings []Warning

	// Handlers counts ftrace_return_to_handler runs per context level.
	Handlers [8]int

	// NestedCall, if set, runs the traced call an entry callback makes
	// (Ops.CallInEntry) and its return: the harness makes it an operation
	// of its own so that the model and the oracles follow it. Nil: the port
	// calls Call and Return itself.
	NestedCall func(fn int)
	nest       [8]int // per level: calls made from inside entry callbacks, now running

	regGen      int // registration generation counter (for the model and oracles)
	clock       Word
	initialized bool // fgraph_array[0] != NULL
}

type taskInfo struct {
	base  Addr
	slots []slot // the real (hardware) stack of return-address slots
	alive bool
	idle  bool
}

type slot struct {
	retp Word // address of the slot
	val  Word // its content: a return address, or ReturnToHandler
	orig Word // what the caller pushed (for oracles)
	fn   int
	ctx  int // context level that owns the slot
}

// Warning is a WARN_ON, a refusal or a counted failure.
type Warning struct {
	Site Site
	Msg  string
}

// NewMachine builds a machine with the given configuration. Tracing is off,
// every task is alive with no shadow stack.
func NewMachine(c Config) (*Machine, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	taskSize := Addr(TaskWords + c.StackWords)
	m := &Machine{cfg: c}
	m.Mem = make([]Word, int(globalWords)+c.Tasks*int(taskSize))
	m.tasks = make([]taskInfo, c.Tasks)
	for i := range m.tasks {
		m.tasks[i] = taskInfo{base: globalWords + Addr(i)*taskSize, alive: true}
		m.Mem[m.tasks[i].base+TaskDepth] = intWord(-1)
	}
	if c.Tasks > 1 {
		// The last task plays the idle task of the CPU (F7).
		m.tasks[c.Tasks-1].idle = true
	}
	m.Mem[AddrDoDirect] = m.doDirectDefault() // DEFINE_STATIC_KEY_TRUE/FALSE(fgraph_do_direct)
	m.Mem[AddrFunc] = HandleStub
	m.Mem[AddrRetfunc] = HandleStub
	m.Mem[AddrDirectGops] = HandleStub
	m.core = portCore{m}
	return m, nil
}

// MustMachine is NewMachine for configurations known to be valid.
func MustMachine(c Config) *Machine {
	m, err := NewMachine(c)
	if err != nil {
		panic(err)
	}
	return m
}

// Config returns the machine's configuration.
func (m *Machine) Config() Config { return m.cfg }

// SetHooks attaches (or with nil detaches) the harness.
func (m *Machine) SetHooks(h Hooks) {
	switch {
	case h == nil:
		m.hooks, m.dig = nil, nil
	case h == m.attached[0]:
		m.hooks, m.dig = h, m.attachedDig[0]
	case h == m.attached[1]:
		m.hooks, m.dig = h, m.attachedDig[1]
	default:
		m.hooks = h
		m.dig, _ = h.(Digester)
		m.attached[1], m.attachedDig[1] = m.attached[0], m.attachedDig[0]
		m.attached[0], m.attachedDig[0] = h, m.dig
	}
}

// Hooks returns the attached hooks.
func (m *Machine) Hooks() Hooks { return m.hooks }

// TaskBase is the address of task t's fields.
func (m *Machine) TaskBase(t int) Addr { return m.tasks[t].base }

// WordAddr is the address of word i of task t's shadow stack.
func (m *Machine) WordAddr(t, i int) Addr { return m.tasks[t].base + TaskWords + Addr(i) }

// cur is the base address of `current`.
func (m *Machine) cur() Addr { return m.tasks[m.Current].base }

// word is the address of current->ret_stack[i].
func (m *Machine) word(i int) Addr { return m.cur() + TaskWords + Addr(i) }

func (m *Machine) warn(s Site, format string, args ...any) {
	m.Warnings = append(m.Warnings, Warning{Site: s, Msg: m.render(format, args)})
}

// render is fmt.Sprintf(format, args...), from a memo of the messages
// rendered before when the arguments are at most three integers (an
// explorer's in-place checks meet the same get_ret_stack warning tens of
// thousands of times: its Sprintf was 1.5 % of peer-spin K=3's time). The
// memo holds at most warnMemoMax messages, and is emptied when full.
func (m *Machine) render(format string, args []any) string {
	k := warnKey{format: format, n: len(args)}
	memo := len(args) <= len(k.a)
	for i := 0; memo && i < len(args); i++ {
		switch a := args[i].(type) {
		case int:
			k.a[i] = int64(a)
		case int64:
			k.a[i] = a
		case uint64:
			k.a[i] = int64(a)
		case Addr:
			k.a[i] = int64(a)
		default:
			memo = false
		}
	}
	if !memo {
		return fmt.Sprintf(format, args...)
	}
	if msg, ok := m.warnMemo[k]; ok {
		return msg
	}
	if m.warnMemo == nil || len(m.warnMemo) >= warnMemoMax {
		m.warnMemo = make(map[warnKey]string)
	}
	msg := fmt.Sprintf(format, args...)
	m.warnMemo[k] = msg
	return msg
}

// warnKey is a warning's format and integer arguments (render).
type warnKey struct {
	format string
	a      [3]int64
	n      int
}

const warnMemoMax = 1 << 12

// Image is a copy of task t's memory-visible state, for the abstraction.
type Image struct {
	HasStack bool
	Curr     int
	Depth    int
	Overrun  int
	Words    []Word
}

// Snapshot copies task t's state from memory (not from any store buffer).
func (m *Machine) Snapshot(t int) Image {
	im := m.View(t)
	im.Words = append([]Word(nil), im.Words...)
	return im
}

// View is Snapshot without the copy: its Words are task t's stack words in
// memory, valid until the next store. The oracles read it at every
// quiescent point; copying 64 words there was 45 % of an exploration's
// allocations.
func (m *Machine) View(t int) Image {
	if !m.taskOK(SiteNone, t) {
		return Image{}
	}
	b := m.tasks[t].base
	return Image{
		HasStack: m.Mem[b+TaskRetStack] != 0,
		Curr:     wordInt(m.Mem[b+TaskCurr]),
		Depth:    wordInt(m.Mem[b+TaskDepth]),
		Overrun:  wordInt(m.Mem[b+TaskOverrun]),
		Words:    m.Mem[b+TaskWords : b+TaskWords+Addr(m.cfg.StackWords) : b+TaskWords+Addr(m.cfg.StackWords)],
	}
}

// Reset returns the machine to its initial state, keeping the configuration,
// the hooks and the ops (unregistered). It reuses memory.
func (m *Machine) Reset() {
	clear(m.Mem)
	m.slotVer++
	for i := range m.tasks {
		m.tasks[i].slots = m.tasks[i].slots[:0]
		m.tasks[i].alive = true
		m.Mem[m.tasks[i].base+TaskDepth] = intWord(-1)
	}
	m.Mem[AddrDoDirect] = m.doDirectDefault()
	m.Mem[AddrFunc] = HandleStub
	m.Mem[AddrRetfunc] = HandleStub
	m.Mem[AddrDirectGops] = HandleStub
	for _, o := range m.ops {
		o.reset()
	}
	m.Log = m.Log[:0]
	m.Warnings = m.Warnings[:0]
	m.Current, m.Level, m.nest = 0, 0, [8]int{}
	m.Handlers, m.clock = [8]int{}, 0
	m.regGen, m.initialized = 0, false
	m.entryRetp = [8]Word{}
	m.core.Reset()
}
