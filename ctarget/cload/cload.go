//go:build cgo

package cload

/*
#cgo CFLAGS: -I${SRCDIR}/../csrc
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include "fgc_abi.h"

extern void fgcGoLoad(int, int, void *);
extern void fgcGoStore(int, unsigned long, int, void *);
extern void fgcGoAtomic(int, unsigned long, int, void *);
extern void fgcGoFence(int, void *);
extern void fgcGoBad(unsigned long, int, int, void *);
extern void fgcGoWarn(int, char *, void *);
extern void fgcGoBug(int, void *);
extern unsigned long long fgcGoClock(void);
extern int fgcGoOpsTest(int, unsigned long, void *);
extern void fgcGoSubops(int, int, int);
extern int fgcGoEntry(int, unsigned long, int, unsigned long, void *);
extern void fgcGoRet(int, unsigned long, int, unsigned long, void *);

// The object's entry points, resolved by dlsym.
struct fgc_api {
	int (*init)(const struct fgc_go *, const struct fgc_globals *, int, int);
	void (*layout)(struct fgc_layout *);
	unsigned long (*base)(void);
	void (*reset)(void);
	void (*set_current)(int);
	int (*enter)(unsigned long, unsigned long, unsigned long);
	unsigned long (*ret)(void);
	unsigned long (*ret_addr)(int, int *, unsigned long, unsigned long);
	int (*get_ret_stack)(int, int);
	int (*reserve)(int, int);
	int (*retrieve)(int, int *);
	void (*exit_task)(int);
	int (*poke)(int, int, unsigned long);
	int (*remote_begin)(int, int, int *);
	int (*remote_finish)(int *);
	int (*remote_pending)(void);
	void (*flush)(void);
	void (*set_crash)(const char *, const char *, unsigned long);
	void (*set_quiet)(int);
	int (*peek)(int, int, unsigned long *);
	void (*segment)(struct fgc_segment *);
	void (*save)(void *);
	void (*restore)(const void *);
};

static const char *fgc_open(const char *path, void **h, struct fgc_api *a)
{
	*h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*h)
		return dlerror();
#define SYM(f, n) if (!(a->f = dlsym(*h, n))) return "missing " n;
	SYM(init, "fgc_init") SYM(layout, "fgc_layout") SYM(base, "fgc_base")
	SYM(reset, "fgc_reset") SYM(set_current, "fgc_set_current") SYM(enter, "fgc_enter")
	SYM(ret, "fgc_return") SYM(ret_addr, "fgc_ret_addr") SYM(get_ret_stack, "fgc_get_ret_stack")
	SYM(reserve, "fgc_reserve") SYM(retrieve, "fgc_retrieve") SYM(exit_task, "fgc_exit_task")
	SYM(poke, "fgc_poke") SYM(remote_begin, "fgc_remote_begin")
	SYM(remote_finish, "fgc_remote_finish") SYM(remote_pending, "fgc_remote_pending")
	SYM(flush, "fgc_flush") SYM(set_crash, "fgc_set_crash") SYM(peek, "fgc_peek") SYM(set_quiet, "fgc_set_quiet")
	SYM(segment, "fgc_segment") SYM(save, "fgc_save") SYM(restore, "fgc_restore")
	return 0;
}

static int fgc_call_init(struct fgc_api *a, struct fgc_go *g, struct fgc_globals *gl, int nt, int nu)
{
	g->load = fgcGoLoad; g->store = fgcGoStore; g->atomic = fgcGoAtomic; g->fence = fgcGoFence;
	g->bad = fgcGoBad; g->warn = fgcGoWarn; g->bug = fgcGoBug; g->clock = fgcGoClock;
	g->ops_test = fgcGoOpsTest; g->subops = fgcGoSubops; g->entry = fgcGoEntry; g->ret = fgcGoRet;
	return a->init(g, gl, nt, nu);
}
static void fgc_call_layout(struct fgc_api *a, struct fgc_layout *l) { a->layout(l); }
static unsigned long fgc_call_base(struct fgc_api *a) { return a->base(); }
static void fgc_call_reset(struct fgc_api *a) { a->reset(); }
static void fgc_call_set_current(struct fgc_api *a, int t) { a->set_current(t); }
static int fgc_call_enter(struct fgc_api *a, unsigned long r, unsigned long f, unsigned long p) { return a->enter(r, f, p); }
static unsigned long fgc_call_ret(struct fgc_api *a) { return a->ret(); }
static unsigned long fgc_call_ret_addr(struct fgc_api *a, int t, int *idx, unsigned long r, unsigned long p) { return a->ret_addr(t, idx, r, p); }
static int fgc_call_get_ret_stack(struct fgc_api *a, int t, int n) { return a->get_ret_stack(t, n); }
static int fgc_call_reserve(struct fgc_api *a, int i, int s) { return a->reserve(i, s); }
static int fgc_call_retrieve(struct fgc_api *a, int i, int *s) { return a->retrieve(i, s); }
static void fgc_call_exit_task(struct fgc_api *a, int t) { a->exit_task(t); }
static int fgc_call_poke(struct fgc_api *a, int t, int i, unsigned long v) { return a->poke(t, i, v); }
static int fgc_call_remote_begin(struct fgc_api *a, int k, int u, int *r) { return a->remote_begin(k, u, r); }
static int fgc_call_remote_finish(struct fgc_api *a, int *r) { return a->remote_finish(r); }
static void fgc_call_flush(struct fgc_api *a) { a->flush(); }
static int fgc_call_peek(struct fgc_api *a, int t, int i, unsigned long *v) { return a->peek(t, i, v); }
static void fgc_call_set_quiet(struct fgc_api *a, int q) { a->set_quiet(q); }
static void fgc_call_segment(struct fgc_api *a, struct fgc_segment *s) { a->segment(s); }
static void fgc_call_save(struct fgc_api *a, void *b) { a->save(b); }
static void fgc_call_restore(struct fgc_api *a, const void *b) { a->restore(b); }
static int fgc_call_pending(struct fgc_api *a) { return a->remote_pending(); }
static void fgc_call_set_crash(struct fgc_api *a, const char *p, const char *t, unsigned long n) { a->set_crash(p, t, n); }
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
)

// Available reports whether this build can run a compiled kernel target.
const Available = true

// Instance is one loaded copy of a built object: the core of one Machine.
type Instance struct {
	obj   *ctarget.Object
	lines *ctarget.Lines
	h     unsafe.Pointer
	// api is in C memory: calls through it pass no Go pointer (cgo's
	// pointer checks were a fifth of the time).
	api    *C.struct_fgc_api
	cint   *C.int // C scratch for out-parameters
	goCfg  C.struct_fgc_go
	glob   C.struct_fgc_globals
	layout C.struct_fgc_layout
	base   uint64

	m         *fgraph.Machine
	stride    int
	nTasks    int
	entries   []ctarget.Entry // the entry points running, innermost last
	afterW3   []bool
	afterW2   []bool
	sites     map[uint64]fgraph.Site
	resetting bool
	lastPC    unsafe.Pointer // of the last store reported
	inStore   int            // >0 while the harness commits a store of the C
	// storeLines are the lines of push, reserve and pop whose stores ran.
	storeLines map[int]string
	quiet      []bool // per entry: loads are not reported
	// Unmapped counts accesses that no rule names, by source line.
	Unmapped map[int]int
	// Trace, if set, sees every access no rule names (once per site key).
	Trace func(ctarget.Access)
	seg   segment // the writable segment, for the state cache (state.go)
}

var (
	mu     sync.Mutex
	active *Instance // the instance whose callbacks are running
	loaded = map[string]*Instance{}
)

// Load loads obj (once per process: the object's statics are its state).
func Load(obj *ctarget.Object) (*Instance, error) {
	mu.Lock()
	defer mu.Unlock()
	if in, ok := loaded[obj.Path]; ok {
		return in, nil
	}
	lines, err := ctarget.ReadLines(obj)
	if err != nil {
		return nil, err
	}
	in := &Instance{obj: obj, lines: lines, sites: map[uint64]fgraph.Site{}, Unmapped: map[int]int{}, storeLines: map[int]string{}}
	in.api = (*C.struct_fgc_api)(C.calloc(1, C.sizeof_struct_fgc_api))
	in.cint = (*C.int)(C.calloc(1, C.sizeof_int))
	cp := C.CString(obj.Path)
	defer C.free(unsafe.Pointer(cp))
	if e := C.fgc_open(cp, &in.h, in.api); e != nil {
		return nil, fmt.Errorf("loading %s: %s", obj.Path, C.GoString(e))
	}
	C.fgc_call_layout(in.api, &in.layout)
	in.base = uint64(C.fgc_call_base(in.api))
	loaded[obj.Path] = in
	return in, nil
}

// saveSegment copies the writable segment into dst (len: seg.bytes).
func (in *Instance) saveSegment(dst []uint64) { C.fgc_call_save(in.api, unsafe.Pointer(&dst[0])) }

// restoreSegment puts a copy back (resetting: a remote CPU left blocked
// finishes first, unreported).
func (in *Instance) restoreSegment(src []uint64) {
	in.resetting = true
	C.fgc_call_restore(in.api, unsafe.Pointer(&src[0]))
	in.resetting = false
}

// remotePending: the remote CPU's thread is blocked in the compiled code.
func (in *Instance) remotePending() bool { return C.fgc_call_pending(in.api) != 0 }

// segmentInfo is fgc_segment's report (state.go).
func (in *Instance) segmentInfo() C.struct_fgc_segment {
	var s C.struct_fgc_segment
	C.fgc_call_segment(in.api, &s)
	return s
}

// Layout is the frame layout the tree defines, as compiled.
type Layout struct {
	FrameBytes, Ret, Func, Calltime, Retp, Subtime int
	PageSize, CurrBytes                            int
	NoDirect                                       bool
}

// Layout reports the compiled layout.
func (in *Instance) Layout() Layout {
	l := in.layout
	return Layout{FrameBytes: int(l.frame_size), Ret: int(l.off_ret), Func: int(l.off_func),
		Calltime: int(l.off_calltime), Retp: int(l.off_retp), Subtime: int(l.off_subtime),
		PageSize: int(l.page_size), CurrBytes: int(l.curr_size), NoDirect: l.no_direct != 0}
}

// Object is what was loaded.
func (in *Instance) Object() *ctarget.Object { return in.obj }

// Attach makes in the core of m (detaching it from any machine before).
func (in *Instance) Attach(m *fgraph.Machine) error {
	mu.Lock()
	defer mu.Unlock()
	cfg := m.Config()
	lay := in.Layout()
	if lay.FrameBytes/8 != cfg.FrameWords {
		return fmt.Errorf("%s: struct ftrace_ret_stack is %d words, the port variant %s has F = %d", in.obj.Tree, lay.FrameBytes/8, cfg.Variant, cfg.FrameWords)
	}
	if lay.PageSize/8 != cfg.StackWords {
		return fmt.Errorf("object built for %d-word stacks, the scenario has %d", lay.PageSize/8, cfg.StackWords)
	}
	if cfg.Tasks > C.FGC_MAX_TASKS || len(m.Ops()) > C.FGC_MAX_USERS {
		return fmt.Errorf("the kernel target has room for %d tasks and %d users", C.FGC_MAX_TASKS, C.FGC_MAX_USERS)
	}
	in.m = m
	in.clearEntries()
	in.nTasks = cfg.Tasks
	in.stride = int(m.TaskBase(1%cfg.Tasks) - m.TaskBase(0))
	if cfg.Tasks == 1 {
		in.stride = fgraph.TaskWords + cfg.StackWords
	}
	for t := 0; t < C.FGC_MAX_TASKS; t++ {
		in.goCfg.task_base[t] = C.int(int(m.TaskBase(0)) + t*in.stride)
	}
	in.goCfg.task_stride = C.int(in.stride)
	in.goCfg.task_words = C.int(fgraph.TaskWords)
	sym := func(n string) C.ulong {
		s, ok := in.lines.Symbols[n]
		if !ok {
			return 0
		}
		return C.ulong(in.base + s.Value)
	}
	g := &in.glob
	g.array, g.bitmask, g.active = sym("fgraph_array"), sym("fgraph_array_bitmask"), sym("ftrace_graph_active")
	g.do_direct, g.direct_gops = sym("fgraph_do_direct"), sym("fgraph_direct_gops")
	g.func_key, g.retfunc_key = sym("__fgc_static_call_key_fgraph_func"), sym("__fgc_static_call_key_fgraph_retfunc")
	g.lru_table, g.lru_next, g.lru_last = sym("fgraph_lru_table"), sym("fgraph_lru_next"), sym("fgraph_lru_last")
	g.dead, g.stub = sym("kill_ftrace_graph"), sym("fgraph_stub")
	g.entry_stub, g.ret_stub = sym("ftrace_graph_entry_stub"), sym("ftrace_graph_ret_stub")
	g.data_lo, g.data_hi = C.ulong(in.base+in.lines.DataLo), C.ulong(in.base+in.lines.DataHi)
	g.text_lo, g.text_hi = C.ulong(in.base), C.ulong(in.base+in.lines.TextHi)
	for n, v := range map[string]C.ulong{"fgraph_array": g.array, "fgraph_array_bitmask": g.bitmask, "fgraph_stub": g.stub} {
		if v == 0 {
			return fmt.Errorf("%s: no symbol %s", in.obj.Path, n)
		}
	}
	active = in
	// The object's reports while it drains and re-initializes are not this
	// machine's (a remote CPU the last run left blocked finishes first).
	in.resetting = true
	r := C.fgc_call_init(in.api, &in.goCfg, g, C.int(cfg.Tasks), C.int(len(m.Ops())))
	in.resetting = false
	if r != 0 {
		return fmt.Errorf("%s: fgc_init failed (%d)", in.obj.Path, int(r))
	}
	in.mapSegment()
	m.SetCore(in)
	return nil
}

// CopyFor returns a path for another instance of obj (a second copy loads
// as a separate object with its own statics).
func CopyFor(obj *ctarget.Object, i int) (string, error) {
	b, err := os.ReadFile(obj.Path)
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(obj.Path), fmt.Sprintf("fgraph-%d.so", i))
	return p, os.WriteFile(p, b, 0o755)
}

// ---- fgraph.Core ----

// quietNow says whether the harness calls the C with no yield point to
// offer (no hooks, or the runner's direct mode: a remote CPU, an oracle):
// then the C reports no load.
func (in *Instance) quietNow() bool {
	h := in.m.Hooks()
	if h == nil {
		return true
	}
	d, ok := h.(interface{ Direct() bool })
	return ok && d.Direct()
}

func (in *Instance) push(e ctarget.Entry) {
	q := in.quietNow()
	in.quiet = append(in.quiet, q)
	C.fgc_call_set_quiet(in.api, b2i(q))
	in.entries = append(in.entries, e)
	in.afterW3 = append(in.afterW3, false)
	in.afterW2 = append(in.afterW2, false)
}

// clearEntries forgets the entry points in flight (a reset, a restore).
func (in *Instance) clearEntries() {
	in.entries, in.afterW3, in.afterW2, in.quiet = in.entries[:0], in.afterW3[:0], in.afterW2[:0], in.quiet[:0]
}

func (in *Instance) pop() {
	n := len(in.entries) - 1
	in.entries, in.afterW3, in.afterW2 = in.entries[:n], in.afterW3[:n], in.afterW2[:n]
	in.quiet = in.quiet[:n]
	q := false
	if n > 0 {
		q = in.quiet[n-1]
	}
	C.fgc_call_set_quiet(in.api, b2i(q))
}

func (in *Instance) begin(e ctarget.Entry) {
	active = in
	in.fold()
	in.push(e)
	C.fgc_call_set_current(in.api, C.int(in.m.Current))
}

func (in *Instance) end() {
	in.fold() // what the finished entry read: its caller goes on
	in.pop()
	// Back in an outer entry point: current is its task.
	C.fgc_call_set_current(in.api, C.int(in.m.Current))
}

func (in *Instance) rth() C.ulong { return C.ulong(uint64(in.layout.return_to_handler)) }

// toC translates a port return address for the C code.
func (in *Instance) toC(w fgraph.Word) C.ulong {
	if w == fgraph.ReturnToHandler {
		return in.rth()
	}
	return C.ulong(w)
}

// fromC translates a C return address back.
func (in *Instance) fromC(v C.ulong) fgraph.Word {
	switch uint64(v) {
	case uint64(in.layout.return_to_handler):
		return fgraph.ReturnToHandler
	case uint64(in.layout.panic):
		return fgraph.PanicAddr
	}
	return fgraph.Word(v)
}

func (in *Instance) FunctionGraphEnter(ret, fn, fp, retp fgraph.Word) int {
	in.begin(ctarget.EntryEnter)
	defer in.end()
	return int(C.fgc_call_enter(in.api, in.toC(ret), C.ulong(fn), C.ulong(retp)))
}

func (in *Instance) FtraceReturnToHandler(fp fgraph.Word) fgraph.Word {
	in.begin(ctarget.EntryReturn)
	defer in.end()
	return in.fromC(C.fgc_call_ret(in.api))
}

func (in *Instance) RegisterBegin(o *fgraph.Ops) int {
	if o.Registered() {
		// The port refuses a second register; the kernel would hand the
		// same ops a second index. The harness never does this.
		in.m.Warn(fgraph.SiteRegister, "register_ftrace_graph: "+o.Name+" already registered")
		return fgraph.ENOSPC
	}
	in.begin(ctarget.EntryRegister)
	defer in.end()
	var ret C.int
	st := C.fgc_call_remote_begin(in.api, 0, C.int(o.Index()), &ret)
	if st == 2 && ret < 0 {
		return int(ret)
	}
	if st < 0 {
		in.m.Crash(fgraph.SiteRegister, "register_ftrace_graph: the remote CPU is busy")
		return fgraph.ENOSPC
	}
	in.m.MarkRegistered(o)
	return int(int64(in.m.Mem[fgraph.AddrOps+fgraph.Addr(o.Index()*fgraph.OpsWords+fgraph.OpsIdx)]))
}

func (in *Instance) RegisterFinish(o *fgraph.Ops) {
	in.begin(ctarget.EntryRegisterFinish)
	defer in.end()
	var ret C.int
	C.fgc_call_remote_finish(in.api, &ret)
}

func (in *Instance) UnregisterBegin(o *fgraph.Ops) bool {
	in.begin(ctarget.EntryUnregister)
	defer in.end()
	var ret C.int
	st := C.fgc_call_remote_begin(in.api, 1, C.int(o.Index()), &ret)
	return st == 1
}

func (in *Instance) UnregisterFinish(o *fgraph.Ops) {
	in.begin(ctarget.EntryUnregisterFinish)
	defer in.end()
	var ret C.int
	C.fgc_call_remote_finish(in.api, &ret)
	in.m.MarkUnregistered(o)
}

// FtraceGraphRetAddr: the tree's ftrace_graph_ret_addr() walks task's words
// (6.12 has Petr Pavlu's fix), so who is current does not matter.
func (in *Instance) FtraceGraphRetAddr(cur, t int, idx *int, ret, retp fgraph.Word) fgraph.Word {
	in.begin(ctarget.EntryRetAddr)
	defer in.end()
	var p *C.int
	if idx != nil {
		*in.cint = C.int(*idx)
		p = in.cint
	}
	r := C.fgc_call_ret_addr(in.api, C.int(t), p, in.toC(ret), C.ulong(retp))
	if idx != nil {
		*idx = int(*in.cint)
	}
	return in.fromC(r)
}

func (in *Instance) FtraceGraphGetRetStack(t, n int) (fgraph.Frame, bool) {
	in.begin(ctarget.EntryGetRetStack)
	i := int(C.fgc_call_get_ret_stack(in.api, C.int(t), C.int(n)))
	in.end()
	if i < 0 {
		return fgraph.Frame{}, false
	}
	return in.m.ReadFrame(t, i), true
}

func (in *Instance) FgraphReserveData(idx, size int) int {
	in.begin(ctarget.EntryReserve)
	defer in.end()
	return int(C.fgc_call_reserve(in.api, C.int(idx), C.int(size)))
}

func (in *Instance) FgraphRetrieveData(idx int) (int, int) {
	in.begin(ctarget.EntryRetrieve)
	defer in.end()
	p := int(C.fgc_call_retrieve(in.api, C.int(idx), in.cint))
	return p, int(*in.cint)
}

func (in *Instance) FtraceGraphExitTask(t int) {
	in.begin(ctarget.EntryExit)
	defer in.end()
	C.fgc_call_exit_task(in.api, C.int(t))
}

func (in *Instance) Reset() {
	if in.m == nil {
		return
	}
	in.resetting = true
	C.fgc_call_reset(in.api)
	in.resetting = false
	in.clearEntries()
}

// Poke writes a harness store of a shadow-stack word into the C memory.
func (in *Instance) Poke(a fgraph.Addr, v fgraph.Word) {
	off := int(a) - int(in.m.TaskBase(0))
	if off < 0 || in.stride == 0 {
		return
	}
	t, w := off/in.stride, off%in.stride-fgraph.TaskWords
	if t >= in.nTasks || w < 0 {
		return
	}
	C.fgc_call_poke(in.api, C.int(t), C.int(w), in.toC(v))
}

// resume restores current for the C code a callback returns to (the
// callback may have run nested entries of another level on the same task,
// but never another task).
func (in *Instance) resume() {
	C.fgc_call_set_current(in.api, C.int(in.m.Current))
}

// SetCrashRecord keeps, in C memory, the schedule file to write at path if
// the compiled code crashes before the run ends (a signal in the object,
// BUG(), panic(), or more than 4,000,000 accesses in one run): the crash
// handler writes it with async-signal-safe calls and exits with status 1.
func (in *Instance) SetCrashRecord(path string, text []byte) {
	cp := C.CString(path)
	ct := C.CBytes(text)
	C.fgc_call_set_crash(in.api, cp, (*C.char)(ct), C.ulong(len(text)))
	C.free(unsafe.Pointer(cp))
	C.free(ct)
}

// resync copies a shadow stack into Mem when a task's ret_stack pointer is
// published (the store to task field port): the C filled it before, while
// it belonged to no task (alloc_retstack_tasklist, graph_init_task's task
// variables), where the runtime could not name its words.
func (in *Instance) resync(port int) {
	t := (port - int(in.m.TaskBase(0))) / in.stride
	var v C.ulong
	for i := 0; i < in.m.Config().StackWords; i++ {
		if C.fgc_call_peek(in.api, C.int(t), C.int(i), &v) == 0 {
			in.m.Mem[in.m.WordAddr(t, i)] = in.fromC(v)
		}
	}
}

// FuncOfLine is the fgraph.c function that line is in (for tests).
func (in *Instance) FuncOfLine(line int) string { return in.lines.Func(line) }

// StoreLines are the source lines of push, set_bitmap, reserve and pop
// whose stores ran so far, with their function.
func (in *Instance) StoreLines() map[int]string { return in.storeLines }

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
