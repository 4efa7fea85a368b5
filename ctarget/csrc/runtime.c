/*
 * runtime.c: the C half of fgcheck's harness for a tree's compiled
 * kernel/trace/fgraph.c. It is linked with fgraph.o into one shared object
 * that fgcheck loads; it is not instrumented itself.
 *
 * fgraph.o is compiled with -fsanitize=thread in KCSAN's configuration,
 * so every load and store of the optimized code calls __tsan_*() first.
 * Here those calls become the harness's yield points: an access to shared
 * state is classified (which word of the port's address space it is) and
 * reported to the Go harness, which may run an interrupt or a remote action
 * right there, synchronously, before the access happens. A store's value is
 * known only after it happened, so it is reported ("committed") at the next
 * entry into the runtime, before anything else runs.
 *
 * Everything the kernel would do elsewhere (the arch's entry and return
 * trampolines, the users' callbacks, ftrace_startup_subops) is either here
 * or in Go, called through fgc_go. Remote register/unregister runs on a
 * second thread that strictly alternates with the first: the remote CPU
 * blocks in ftrace_startup_subops()/ftrace_shutdown_subops() until the
 * harness lets it go on, so the run stays deterministic.
 *
 * All mutable state of the object (fgraph.c's statics and this file's) is
 * in its writable segment; fgc_reset() restores that segment from a
 * snapshot taken at fgc_init(), which returns every static of fgraph.c to
 * its initial value between runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgc_kernel.h"

/* ---- the interface with Go (fgc_abi.h is shared with the cgo side) ---- */
#include "fgc_abi.h"

/*
 * fgraph.c's entry points are declared by the tree's ftrace.h (fgc_tree.h);
 * fgraph_init_ops() by kernel/trace/trace.h, which the build does not read.
 */
void fgraph_init_ops(struct ftrace_ops *dst_ops, struct ftrace_ops *src_ops);
int fgc_init(const struct fgc_go *g, const struct fgc_globals *glob, int ntasks, int nu);
void fgc_segment(struct fgc_segment *s);
void fgc_save(void *buf);
void fgc_restore(const void *buf);

static struct fgc_go go;		/* callbacks and the layout, set by fgc_init */
static struct fgc_globals gl;		/* addresses of fgraph.c's statics */

/* The tasks and their shadow stacks. */
static struct task_struct tasks[FGC_MAX_TASKS];
struct task_struct *fgc_tasks[FGC_MAX_TASKS];
int fgc_ntasks;
static int cur_task;
rwlock_t tasklist_lock;
struct mutex ftrace_lock;

/* kmalloc: fixed blocks in the writable segment, so that reset restores them. */
#define ARENA_BLOCKS	96
#define ARENA_BLOCK	(PAGE_SIZE > 512 ? PAGE_SIZE : 512)	/* a shadow stack, or kcalloc's list */
static unsigned char arena[ARENA_BLOCKS][ARENA_BLOCK] __attribute__((aligned(64)));
static unsigned char arena_used[ARENA_BLOCKS];

/* The users: one fgraph_ops each, with its own entry and return trampoline. */
struct fgc_user {
	struct fgraph_ops gops;
	int k;
};
static struct fgc_user users[FGC_MAX_USERS];
static int nusers;

/* The pending store: reported at the next entry into the runtime. */
static struct {
	unsigned long addr;
	int size;
	int flags;
	void *pc;
	int port;
	int valid;
} pend;

/* ---- crashes: a violation with its schedule on disk, then exit ---- */

/*
 * The harness keeps here, at every choice, the schedule file of the run so
 * far and where to save it. If the compiled code crashes (a signal in this
 * object, BUG(), panic(), or a runaway loop), crash_exit() writes it with
 * async-signal-safe calls and ends the process with exit code 1: the
 * failure is on disk before anything else can go wrong, and no summary
 * claims a run that did not finish.
 */
struct crash_record {
	char *path, *text;
	size_t len, cap;
	int installed;
	struct sigaction old_act[32];	/* the handlers before ours (Go's) */
};
/* In the heap, allocated before the snapshot: reset keeps what it holds. */
static struct crash_record *crash;
static unsigned long steps;

#define FGC_STEP_BUDGET	4000000UL	/* accesses in one run: a runaway loop */

static void say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));
	(void)r;
}

static void say_hex(unsigned long v)
{
	char b[19];
	int i;

	b[0] = '0';
	b[1] = 'x';
	for (i = 0; i < 16; i++)
		b[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
	b[18] = 0;
	say(b);
}

static unsigned long self_base;	/* the object's load address */

static void __attribute__((noreturn)) crash_exit(const char *why, unsigned long pc, unsigned long addr)
{
	say("fgcheck: VIOLATION panic: the compiled fgraph.c crashed: ");
	say(why);
	say(" at pc ");
	say_hex(pc);
	if (self_base && pc >= self_base) {
		say(" (fgraph.so+");
		say_hex(pc - self_base);
		say(": addr2line -e OBJECT -f -i that offset names the line)");
	}
	if (addr) {
		say(" (address ");
		say_hex(addr);
		say(")");
	}
	say("\n");
	if (crash && crash->path && crash->text) {
		int fd = open(crash->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			ssize_t r = write(fd, crash->text, crash->len);
			(void)r;
			close(fd);
			say("fgcheck: failing schedule saved: ");
			say(crash->path);
			say("\n");
		} else {
			say("fgcheck: cannot save the failing schedule: ");
			say(crash->path);
			say("\n");
		}
	}
	say("fgcheck: the exploration stopped at this crash (exit 1); no summary\n");
	_exit(1);
}

/* fgc_set_crash is called by Go at every choice (after each reset). */
void fgc_set_crash(const char *path, const char *text, unsigned long len)
{
	if (!crash)
		return;
	free(crash->path);
	crash->path = strdup(path);
	if (len > crash->cap) {
		free(crash->text);
		crash->text = malloc(len);
		crash->cap = crash->text ? len : 0;
	}
	if (crash->text) {
		memcpy(crash->text, text, len);
		crash->len = len;
	}
}

static unsigned long text_lo_abs, text_hi_abs;

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *u = uc;
	unsigned long pc = (unsigned long)u->uc_mcontext.gregs[REG_RIP];

	Dl_info info;

	/*
	 * Ours: a fault in the object, or a jump to where no object is (a call
	 * through a corrupted function pointer; Go never does that).
	 */
	if ((pc >= text_lo_abs && pc < text_hi_abs) || !dladdr((void *)pc, &info)) {
		const char *why = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" :
				  sig == SIGILL ? "SIGILL" : "SIGFPE";
		crash_exit(why, pc, (unsigned long)si->si_addr);
	}
	/* Not ours: the Go runtime's handler. */
	if (crash->old_act[sig].sa_flags & SA_SIGINFO)
		crash->old_act[sig].sa_sigaction(sig, si, uc);
	else if (crash->old_act[sig].sa_handler != SIG_DFL && crash->old_act[sig].sa_handler != SIG_IGN)
		crash->old_act[sig].sa_handler(sig);
	else {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

static void install_crash_handler(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (crash->installed)
		return;
	crash->installed = 1;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &crash->old_act[sigs[i]]);
}

/* ---- classification of addresses ---- */

static inline int in(unsigned long a, unsigned long base, unsigned long size)
{
	return a >= base && a < base + size;
}

/*
 * classify maps a C address to a port word (>= 0), FGC_LOCAL for the C
 * stack and for runtime-private state, FGC_OTHER for shared state the port
 * does not model, or FGC_BAD for an address no correct run touches.
 */
static int classify(unsigned long a, int size, void *frame)
{
	unsigned long f = (unsigned long)frame;
	int t, i;

	for (t = 0; t < fgc_ntasks; t++) {
		struct task_struct *ts = &tasks[t];
		unsigned long rs = (unsigned long)ts->ret_stack;

		if (rs && in(a, rs, PAGE_SIZE))
			return go.task_base[t] + go.task_words + (int)((a - rs) / sizeof(long));
		if (in(a, (unsigned long)ts, sizeof(*ts))) {
			unsigned long o = a - (unsigned long)ts;

			if (o == offsetof(struct task_struct, curr_ret_stack))
				return go.task_base[t] + FGC_TASK_CURR;
			if (o == offsetof(struct task_struct, curr_ret_depth))
				return go.task_base[t] + FGC_TASK_DEPTH;
			if (o == offsetof(struct task_struct, ret_stack))
				return go.task_base[t] + FGC_TASK_RET_STACK;
			if (o == offsetof(struct task_struct, trace_overrun))
				return go.task_base[t] + FGC_TASK_OVERRUN;
			return FGC_OTHER;
		}
	}
	if (in(a, gl.array, 16 * sizeof(void *)))
		return FGC_ADDR_ARRAY + (int)((a - gl.array) / sizeof(void *));
	if (a == gl.bitmask)
		return FGC_ADDR_BITMASK;
	if (a == gl.active)
		return FGC_ADDR_ACTIVE;
	if (a == gl.do_direct)
		return FGC_ADDR_DO_DIRECT;
	if (a == gl.direct_gops)
		return FGC_ADDR_DIRECT_GOPS;
	if (a == gl.func_key)
		return FGC_ADDR_FUNC;
	if (a == gl.retfunc_key)
		return FGC_ADDR_RETFUNC;
	if (in(a, gl.lru_table, 16 * sizeof(int)))
		return FGC_ADDR_LRU + (int)((a - gl.lru_table) / sizeof(int));
	if (a == gl.lru_next)
		return FGC_ADDR_LRU_NEXT;
	if (a == gl.lru_last)
		return FGC_ADDR_LRU_LAST;
	if (a == gl.dead)
		return FGC_ADDR_DEAD;
	for (i = 0; i < nusers; i++) {
		if (in(a, (unsigned long)&users[i].gops, sizeof(users[i].gops))) {
			if (a == (unsigned long)&users[i].gops.idx)
				return FGC_ADDR_OPS + i * FGC_OPS_WORDS + FGC_OPS_IDX;
			return FGC_OTHER;
		}
	}
	if (in(a, gl.data_lo, gl.data_hi - gl.data_lo))
		return FGC_OTHER;	/* other statics: graph_ops, fgraph_initialized, ... */
	if (in(a, gl.text_lo, gl.text_hi - gl.text_lo))
		return FGC_OTHER;	/* read-only data of the object */
	/*
	 * The C stack of the running thread: the escaped locals of fgraph.c
	 * (struct ftrace_graph_ent trace, ...). Checked last: a thread's stack
	 * may be mapped next to this object.
	 */
	if (a + 0x10000 >= f && a < f + (8UL << 20))
		return FGC_LOCAL;
	return FGC_BAD;
}

/* value translates the C value of port word p at a into the port's encoding. */
static unsigned long value(int p, unsigned long a, int size)
{
	unsigned long v;

	switch (size) {
	case 1: v = *(unsigned char *)a; break;
	case 2: v = *(unsigned short *)a; break;
	case 4: v = (unsigned long)(long)*(int *)a; break;
	default: v = *(unsigned long *)a; break;
	}
	if ((p >= FGC_ADDR_ARRAY && p < FGC_ADDR_ARRAY + 16) || p == FGC_ADDR_DIRECT_GOPS) {
		int i;

		if (v == 0)
			return 0;
		if (v == gl.stub)
			return 1;
		for (i = 0; i < nusers; i++)
			if (v == (unsigned long)&users[i].gops)
				return (unsigned long)i + 2;
		return 0xbad0000000000000UL | (v & 0xffffffff);
	}
	if (p == FGC_ADDR_FUNC || p == FGC_ADDR_RETFUNC) {
		int i;

		if (v == gl.entry_stub || v == gl.ret_stub)
			return 1;
		for (i = 0; i < nusers; i++)
			if (v == go.entry_tramp[i] || v == go.ret_tramp[i])
				return (unsigned long)i + 2;
		return 0xbad0000000000000UL | (v & 0xffffffff);
	}
	if (p == FGC_ADDR_DO_DIRECT || p == FGC_ADDR_DEAD)
		return *(int *)a != 0;
	if (p >= go.task_base[0] && p < go.task_base[0] + FGC_MAX_TASKS * go.task_stride) {
		int off = (p - go.task_base[0]) % go.task_stride;

		if (off == FGC_TASK_RET_STACK)
			return v != 0;
	}
	return v;
}

/* A pending range store (__tsan_write_range), reported word by word. */
static struct {
	unsigned long base;
	int n;
	void *pc;
} range;

static void flush_range(void)
{
	int i, n = range.n;

	range.n = 0;
	for (i = 0; i < n; i++) {
		unsigned long a = range.base + i * sizeof(long);
		int p = classify(a, 8, __builtin_frame_address(0));

		if (p >= 0)
			go.store(p, value(p, a, 8), FGC_RANGE, range.pc);
	}
}

static void flush(void)
{
	if (range.n)
		flush_range();
	if (!pend.valid)
		return;
	pend.valid = 0;
	go.store(pend.port, value(pend.port, pend.addr, pend.size), pend.flags, pend.pc);
}

/* fgc_flush is for the Go side: commit the pending store before it reads. */
void fgc_flush(void)
{
	flush();
}

/*
 * quiet: the harness calls this code as a remote CPU or an oracle (no
 * yield point, no interrupt): loads need no report, only stores (the
 * mirror) and bad addresses.
 */
static int quiet;

void fgc_set_quiet(int q)
{
	flush();
	quiet = q;
}

static void report_load(int p, int flags, void *pc)
{
	if (!quiet)
		go.load(p, flags, pc);
}

/*
 * fgc_other_in digests the values of the loads of shared state the port
 * does not model (FGC_OTHER: fgraph.c's other statics, the other fields of
 * the tasks and the ops), which are not reported: they decide the compiled
 * code's locals as much as the loads the harness sees. The Go side folds it
 * into the running context's input digest at every call into Go and at the
 * end of every entry point, and zeroes it (the state cache: the contexts'
 * C stacks are a function of what they read, harness/state.go). Loads of
 * the C stack (FGC_LOCAL) need no digest: only the context's own code
 * writes its frames.
 */
unsigned long fgc_other_in;

static void other_load(unsigned long a, int size)
{
	unsigned long v;

	switch (size) {
	case 1: v = *(unsigned char *)a; break;
	case 2: v = *(unsigned short *)a; break;
	case 4: v = *(unsigned int *)a; break;
	default: v = *(unsigned long *)a; break;
	}
	v ^= (a - self_base) << 32 | (unsigned long)size << 24;
	fgc_other_in = (fgc_other_in ^ v) * 0x9e3779b97f4a7c15UL;
	fgc_other_in ^= fgc_other_in >> 29;
}

static void fgc_access(unsigned long a, int size, int flags, void *pc, void *frame)
{
	int p;

	flush();
	if (++steps > FGC_STEP_BUDGET)
		crash_exit("runaway: more than 4000000 accesses in one run", (unsigned long)pc, a);
	p = classify(a, size, frame);
	if (p == FGC_OTHER && !(flags & FGC_STORE))
		other_load(a, size);
	if (p == FGC_LOCAL || p == FGC_OTHER)
		return;
	if (p == FGC_BAD) {
		go.bad(a, size, flags, pc);
		return;
	}
	if (flags & FGC_STORE) {
		pend.addr = a;
		pend.size = size;
		pend.flags = flags;
		pend.pc = pc;
		pend.port = p;
		pend.valid = 1;
		return;
	}
	report_load(p, flags, pc);
}

#define RA() __builtin_return_address(0)
#define FA() __builtin_frame_address(0)
#define TSAN(n)								\
	void __tsan_read##n(void *a) { fgc_access((unsigned long)a, n, 0, RA(), FA()); } \
	void __tsan_write##n(void *a) { fgc_access((unsigned long)a, n, FGC_STORE, RA(), FA()); } \
	void __tsan_volatile_read##n(void *a) { fgc_access((unsigned long)a, n, FGC_ONCE, RA(), FA()); } \
	void __tsan_volatile_write##n(void *a) { fgc_access((unsigned long)a, n, FGC_STORE | FGC_ONCE, RA(), FA()); } \
	void __tsan_unaligned_read##n(void *a) { fgc_access((unsigned long)a, n, 0, RA(), FA()); } \
	void __tsan_unaligned_write##n(void *a) { fgc_access((unsigned long)a, n, FGC_STORE, RA(), FA()); } \
	void __tsan_unaligned_volatile_read##n(void *a) { fgc_access((unsigned long)a, n, FGC_ONCE, RA(), FA()); } \
	void __tsan_unaligned_volatile_write##n(void *a) { fgc_access((unsigned long)a, n, FGC_STORE | FGC_ONCE, RA(), FA()); }
TSAN(1)
TSAN(2)
TSAN(4)
TSAN(8)
TSAN(16)

void __tsan_read_range(void *a, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i += sizeof(long))
		fgc_access((unsigned long)a + i, n - i < 8 ? (int)(n - i) : 8, 0, RA(), FA());
}

void __tsan_write_range(void *a, unsigned long n)
{
	/*
	 * A struct copy to an escaped local, or a memset the compiler kept as
	 * a call (ret_stack_init_task_vars): every word of it that is shared
	 * is a store, reported after the range was written.
	 */
	unsigned long i, base = (unsigned long)a;

	flush();
	for (i = 0; i < n; i += sizeof(long)) {
		int p = classify(base + i, 8, FA());

		if (p == FGC_BAD) {
			go.bad(base + i, 8, FGC_STORE | FGC_RANGE, RA());
			return;
		}
		if (p >= 0 && !range.n) {
			range.base = base + i;
			range.pc = RA();
		}
		if (p >= 0)
			range.n = (int)((base + i - range.base) / sizeof(long)) + 1;
	}
}

void __tsan_init(void) { }
void __tsan_func_entry(void *pc) { }
void __tsan_func_exit(void) { }

/* ---- primitives that report themselves ---- */

void fgc_barrier(void)
{
	flush();
	go.fence(FGC_FENCE_BARRIER, RA());
}

void fgc_call_boundary(int out)
{
	flush();
	go.fence(out ? FGC_FENCE_CALL_OUT : FGC_FENCE_CALL_IN, RA());
}

void fgc_smp_rmb(void)
{
	flush();
	go.fence(FGC_FENCE_RMB, RA());
}

void fgc_smp_wmb(void)
{
	flush();
	go.fence(FGC_FENCE_WMB, RA());
}

static int port_of(const void *a)
{
	return classify((unsigned long)a, 8, FA());
}

void fgc_atomic_inc(atomic_t *v)
{
	int p;

	flush();
	p = port_of(v);
	v->counter++;
	if (p >= 0)
		go.atomic(p, (unsigned long)(long)v->counter, FGC_ATOMIC_ADD, RA());
}

int fgc_atomic_read(const atomic_t *v)
{
	int p;

	flush();
	p = port_of(v);
	if (p >= 0)
		report_load(p, FGC_ATOMIC, RA());
	return v->counter;
}

void fgc_atomic_set(atomic_t *v, int i)
{
	int p;

	flush();
	p = port_of(v);
	v->counter = i;
	if (p >= 0)
		go.atomic(p, (unsigned long)(long)i, FGC_ATOMIC_SET, RA());
}

void fgc_set_bit(long nr, volatile unsigned long *addr)
{
	int p;

	flush();
	p = port_of((const void *)addr);
	*addr |= 1UL << nr;
	if (p >= 0)
		go.atomic(p, *addr, FGC_ATOMIC_SET, RA());
}

void fgc_clear_bit(long nr, volatile unsigned long *addr)
{
	int p;

	flush();
	p = port_of((const void *)addr);
	*addr &= ~(1UL << nr);
	if (p >= 0)
		go.atomic(p, *addr, FGC_ATOMIC_SET, RA());
}

bool fgc_test_bit(long nr, const volatile unsigned long *addr)
{
	int p;

	flush();
	p = port_of((const void *)addr);
	if (p >= 0)
		report_load(p, FGC_ATOMIC, RA());
	return (*addr >> nr) & 1;
}

bool fgc_static_key_test(struct static_key *k)
{
	int p;

	flush();
	p = port_of(k);
	if (p >= 0)
		report_load(p, FGC_ONCE | FGC_PATCHED, RA());
	return READ_ONCE(k->enabled) != 0;
}

void fgc_static_key_set(struct static_key *k, int on)
{
	int p;

	flush();
	p = port_of(k);
	WRITE_ONCE(k->enabled, on);
	if (p >= 0)
		go.atomic(p, on != 0, FGC_ATOMIC_SET, RA());
}

void *fgc_static_call_load(struct static_call_key *k)
{
	int p;

	flush();
	p = port_of(k);
	if (p >= 0)
		report_load(p, FGC_ONCE | FGC_PATCHED, RA());
	return READ_ONCE(k->func);
}

void fgc_static_call_update(struct static_call_key *k, void *func)
{
	int p;

	flush();
	p = port_of(k);
	WRITE_ONCE(k->func, func);
	if (p >= 0)
		go.atomic(p, value(p, (unsigned long)&k->func, 8), FGC_ATOMIC_SET, RA());
}

void fgc_warn(const char *file, int line, const char *cond)
{
	flush();
	go.warn(line, (char *)cond, RA());
}

void fgc_printk(const char *fmt, ...)
{
}

void fgc_bug(const char *file, int line)
{
	flush();
	crash_exit("BUG()", (unsigned long)RA(), 0);
}

void panic(const char *fmt, ...)
{
	flush();
	crash_exit("panic()", (unsigned long)RA(), 0);
}

/* Addresses the Go side recognizes: return_to_handler and panic. */
void return_to_handler(void) { }

void ftrace_graph_func(unsigned long ip, unsigned long parent_ip,
		       struct ftrace_ops *op, struct ftrace_regs *fregs) { }
void ftrace_stub(unsigned long a0, unsigned long a1, struct ftrace_ops *op, struct ftrace_regs *fregs) { }
void ftrace_stub_graph(struct ftrace_graph_ret *trace, struct fgraph_ops *gops) { }
void pause_graph_tracing(void) { }
void unpause_graph_tracing(void) { }
bool ftrace_pids_enabled(struct ftrace_ops *ops) { return false; }

void fgc_mutex_lock(struct mutex *m) { m->locked++; }
void fgc_mutex_unlock(struct mutex *m) { m->locked--; }

unsigned long long fgc_trace_clock_local(void)
{
	flush();
	return go.clock();
}

void *fgc_kmalloc(size_t size, gfp_t flags)
{
	int i;

	if (size > ARENA_BLOCK)
		return NULL;
	for (i = 0; i < ARENA_BLOCKS; i++) {
		if (!arena_used[i]) {
			arena_used[i] = 1;
			return arena[i];
		}
	}
	return NULL;
}

void fgc_kfree(const void *p)
{
	unsigned long a = (unsigned long)p;

	if (!p)
		return;
	if (a < (unsigned long)arena || a >= (unsigned long)arena + sizeof(arena) ||
	    (a - (unsigned long)arena) % ARENA_BLOCK) {
		go.bad(a, 0, FGC_FREE, RA());
		return;
	}
	arena_used[(a - (unsigned long)arena) / ARENA_BLOCK] = 0;
	/* Poison: a use after free reads garbage, as it would in the kernel. */
	memset((void *)p, 0x6b, ARENA_BLOCK);
}

struct task_struct *fgc_get_current(void)
{
	return &tasks[cur_task];
}

struct task_struct *fgc_idle_task(int cpu)
{
	return &tasks[fgc_ntasks - 1];
}

bool fgc_is_idle(struct task_struct *t)
{
	return fgc_ntasks > 1 && t == &tasks[fgc_ntasks - 1];
}

/* ftrace_ops_test: the user's filter, in Go (the ops' hash). */
int ftrace_ops_test(struct ftrace_ops *ops, unsigned long ip, void *regs)
{
	struct fgraph_ops *gops = container_of(ops, struct fgraph_ops, ops);
	struct fgc_user *u = container_of(gops, struct fgc_user, gops);

	flush();
	return go.ops_test(u->k, ip, RA());
}

/* ---- the remote CPU ---- */

/*
 * One remote thread for the life of the process, and its handshake, live
 * in the heap, outside the segment fgc_reset restores: a reset must not
 * rewrite a mutex or a condition a thread waits on. The two threads
 * strictly alternate (turn); each waits for its turn spinning a little,
 * then sleeping.
 */
struct remote_ctl {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int turn;	/* 1: the remote thread runs; 0: the harness */
	int state;	/* 0 idle, 1 blocked in ftrace_*_subops, 2 done */
	int kind, user, ret;
	int started;
	pthread_t thr;
};
static struct remote_ctl *rc;

/*
 * The handshake takes its control block as an argument: the idle remote
 * thread must not read rc, a static of the segment that fgc_reset and
 * fgc_init rewrite while it waits.
 */
static void wait_turn(struct remote_ctl *c, int who)
{
	int i;

	/*
	 * Spin a little, then yield the CPU (the other thread may be waiting
	 * for it on a loaded machine), then sleep.
	 */
	for (i = 0; i < 400; i++) {
		if (__atomic_load_n(&c->turn, __ATOMIC_ACQUIRE) == who)
			return;
		if (i < 200)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
	pthread_mutex_lock(&c->mu);
	while (__atomic_load_n(&c->turn, __ATOMIC_ACQUIRE) != who)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

static void give_turn(struct remote_ctl *c, int who)
{
	pthread_mutex_lock(&c->mu);
	__atomic_store_n(&c->turn, who, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

/* The remote thread blocks: the harness runs until it lets the remote go on. */
static void remote_block(void)
{
	struct remote_ctl *c = rc;	/* stable: the harness waits meanwhile */

	c->state = 1;
	give_turn(c, 0);
	wait_turn(c, 1);
}

int ftrace_startup_subops(struct ftrace_ops *ops, struct ftrace_ops *subops, int command)
{
	struct fgraph_ops *gops = container_of(subops, struct fgraph_ops, ops);
	struct fgc_user *u = container_of(gops, struct fgc_user, gops);

	flush();
	go.subops(u->k, 1, 0);		/* the remote CPU reached the synchronisation */
	remote_block();
	go.subops(u->k, 1, 1);		/* the hash is live: OpsReady */
	subops->flags |= FTRACE_OPS_FL_ENABLED;
	return 0;
}

int ftrace_shutdown_subops(struct ftrace_ops *ops, struct ftrace_ops *subops, int command)
{
	struct fgraph_ops *gops = container_of(subops, struct fgraph_ops, ops);
	struct fgc_user *u = container_of(gops, struct fgc_user, gops);

	flush();
	go.subops(u->k, 0, 0);
	remote_block();
	go.subops(u->k, 0, 1);
	subops->flags &= ~FTRACE_OPS_FL_ENABLED;
	return 0;
}

static void *remote_main(void *arg)
{
	struct remote_ctl *c = arg;

	for (;;) {
		wait_turn(c, 1);
		if (c->kind == 0) {
			c->ret = register_ftrace_graph(&users[c->user].gops);
		} else {
			unregister_ftrace_graph(&users[c->user].gops);
			c->ret = 0;
		}
		flush();
		c->state = 2;
		give_turn(c, 0);
	}
	return NULL;
}

/*
 * fgc_remote_begin starts register (kind 0) or unregister (kind 1) of user
 * k on the remote CPU and returns when it blocks in ftrace_*_subops (1) or
 * has finished (2; *ret holds register's result).
 */
int fgc_remote_begin(int kind, int k, int *ret)
{
	flush();
	if (rc->state == 1)
		return -1;
	if (!rc->started) {
		if (pthread_create(&rc->thr, NULL, remote_main, rc))
			return -2;
		rc->started = 1;
	}
	rc->kind = kind;
	rc->user = k;
	rc->state = 0;
	give_turn(rc, 1);
	wait_turn(rc, 0);
	*ret = rc->ret;
	if (rc->state == 2) {
		rc->state = 0;
		return 2;
	}
	return 1;
}

/* fgc_remote_finish lets a blocked remote CPU run to the end. */
int fgc_remote_finish(int *ret)
{
	flush();
	if (rc->state != 1)
		return -1;
	give_turn(rc, 1);
	wait_turn(rc, 0);
	if (rc->state != 2)
		return -1;
	rc->state = 0;
	*ret = rc->ret;
	return 0;
}

int fgc_remote_pending(void)
{
	return rc->state == 1;
}

/* ---- the users' callbacks ---- */

/* gops_handle is the port's handle of an fgraph_ops pointer. */
static unsigned long gops_handle(struct fgraph_ops *gops)
{
	int i;

	if ((unsigned long)gops == gl.stub)
		return 1;
	for (i = 0; i < nusers; i++)
		if (gops == &users[i].gops)
			return (unsigned long)i + 2;
	return 0xbad0000000000000UL | ((unsigned long)gops & 0xffffffff);
}

static int entry_common(int k, struct ftrace_graph_ent *trace, struct fgraph_ops *gops)
{
	flush();
	return go.entry(k, trace->func, trace->depth, gops_handle(gops), RA());
}

static void ret_common(int k, struct ftrace_graph_ret *trace, struct fgraph_ops *gops)
{
	flush();
	go.ret(k, trace->func, trace->depth, gops_handle(gops), RA());
}

#define USER(k)								\
	static int fgc_entry_##k(struct ftrace_graph_ent *t, struct fgraph_ops *g) \
	{ return entry_common(k, t, g); }				\
	static void fgc_ret_##k(struct ftrace_graph_ret *t, struct fgraph_ops *g) \
	{ ret_common(k, t, g); }
USER(0) USER(1) USER(2) USER(3) USER(4) USER(5) USER(6) USER(7)
static trace_func_graph_ent_t entry_tramps[FGC_MAX_USERS] = {
	fgc_entry_0, fgc_entry_1, fgc_entry_2, fgc_entry_3,
	fgc_entry_4, fgc_entry_5, fgc_entry_6, fgc_entry_7,
};
static trace_func_graph_ret_t ret_tramps[FGC_MAX_USERS] = {
	fgc_ret_0, fgc_ret_1, fgc_ret_2, fgc_ret_3,
	fgc_ret_4, fgc_ret_5, fgc_ret_6, fgc_ret_7,
};

/* ---- calls from Go ---- */

static unsigned char *snap;
static unsigned long snap_lo, snap_hi;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;
	unsigned long self = (unsigned long)&fgc_init;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && in(self, lo, ph->p_memsz)) {
			int j;

			self_base = info->dlpi_addr;
			for (j = 0; j < info->dlpi_phnum; j++) {
				const ElfW(Phdr) *w = &info->dlpi_phdr[j];

				if (w->p_type == PT_LOAD && (w->p_flags & PF_W)) {
					snap_lo = info->dlpi_addr + w->p_vaddr;
					snap_hi = snap_lo + w->p_memsz;
				}
			}
			return 1;
		}
	}
	return 0;
}

/* fgc_base is the load address of this object (its symbols' bias). */
unsigned long fgc_base(void)
{
	if (!self_base)
		dl_iterate_phdr(phdr_cb, NULL);
	return self_base;
}

/* fgc_layout reports the tree's layout to Go. */
void fgc_layout(struct fgc_layout *l)
{
	l->frame_size = sizeof(struct ftrace_ret_stack);
	l->off_ret = offsetof(struct ftrace_ret_stack, ret);
	l->off_func = offsetof(struct ftrace_ret_stack, func);
	l->off_calltime = offsetof(struct ftrace_ret_stack, calltime);
	l->off_retp = offsetof(struct ftrace_ret_stack, retp);
#ifdef CONFIG_FUNCTION_PROFILER
	l->off_subtime = offsetof(struct ftrace_ret_stack, subtime);
#else
	l->off_subtime = -1;
#endif
	l->page_size = PAGE_SIZE;
	l->curr_size = sizeof(tasks[0].curr_ret_stack);
	l->no_direct = FGRAPH_NO_DIRECT;
	l->return_to_handler = (unsigned long)return_to_handler;
	l->panic = (unsigned long)panic;
}

static unsigned char *pristine;	/* the segment as loaded, before any run */

int fgc_init(const struct fgc_go *g, const struct fgc_globals *glob, int ntasks, int nu)
{
	int i;
	unsigned char *p = pristine, *sn = snap;
	struct crash_record *cr = crash;
	struct remote_ctl *rcl = rc;
	unsigned long lo, hi;
	int r;

	/*
	 * A remote CPU left blocked in ftrace_*_subops by the last run (it
	 * stopped before the quiescent point that lets it go on) finishes
	 * first, on the state it started from; then everything is reset.
	 */
	if (rc && rc->state == 1)
		fgc_remote_finish(&r);

	snap_hi = 0;
	dl_iterate_phdr(phdr_cb, NULL);
	if (!snap_hi)
		return -2;
	lo = snap_lo;
	hi = snap_hi;
	/*
	 * A second init (another Machine) starts from the segment as loaded,
	 * not from where the last run left fgraph.c's statics.
	 */
	if (!p) {
		p = malloc(hi - lo);
		if (!p)
			return -3;
		memcpy(p, (void *)lo, hi - lo);
	} else {
		memcpy((void *)lo, p, hi - lo);
	}
	pristine = p;
	snap_lo = lo;
	snap_hi = hi;
	crash = cr ? cr : calloc(1, sizeof(*crash));
	if (!rcl) {
		rcl = calloc(1, sizeof(*rcl));
		if (!rcl)
			return -3;
		pthread_mutex_init(&rcl->mu, NULL);
		pthread_cond_init(&rcl->cv, NULL);
	}
	rc = rcl;

	go = *g;
	gl = *glob;
	if (ntasks < 1 || ntasks > FGC_MAX_TASKS || nu < 0 || nu > FGC_MAX_USERS)
		return -1;
	fgc_ntasks = ntasks;
	nusers = nu;
	for (i = 0; i < ntasks; i++) {
		fgc_tasks[i] = &tasks[i];
		tasks[i].curr_ret_depth = -1;
		tasks[i].pid = i + 1;
		tasks[i].fgc_index = i;
	}
	for (i = 0; i < nu; i++) {
		users[i].k = i;
		users[i].gops.entryfunc = entry_tramps[i];
		users[i].gops.retfunc = ret_tramps[i];
		users[i].gops.idx = 0;
		fgraph_init_ops(&users[i].gops.ops, &users[i].gops.ops);
		go.entry_tramp[i] = (unsigned long)entry_tramps[i];
		go.ret_tramp[i] = (unsigned long)ret_tramps[i];
	}
	text_lo_abs = gl.text_lo;
	text_hi_abs = gl.text_hi;
	install_crash_handler();
	/* The state every run starts from (fgc_reset). */
	snap = sn ? sn : malloc(hi - lo);
	if (!snap)
		return -3;
	memcpy(snap, (void *)lo, hi - lo);
	return 0;
}

/*
 * fgc_segment reports the writable segment (every static of the object)
 * and, for the state cache, the statics in it that are no state: the step
 * counter (a budget, like the port's), the pending store and range after
 * their flush (stale copies of the last one). fgc_other_in is state: it
 * is folded into the contexts' digests at every call into Go, so it is 0
 * wherever the harness looks.
 */
void fgc_segment(struct fgc_segment *s)
{
	unsigned long lo = snap_lo & ~7UL, hi = (snap_hi + 7) & ~7UL;	/* the same pages */
	unsigned long a[FGC_SEG_SKIP] = { (unsigned long)&steps, (unsigned long)&pend, (unsigned long)&range };
	unsigned long n[FGC_SEG_SKIP] = { sizeof(steps), sizeof(pend), sizeof(range) };
	int i;

	s->words = (unsigned long *)lo;
	s->nwords = (hi - lo) / sizeof(long);
	for (i = 0; i < FGC_SEG_SKIP; i++) {
		/* Inward: a word shared with another static stays state. */
		s->skip[i][0] = (a[i] - lo + sizeof(long) - 1) / sizeof(long);
		s->skip[i][1] = (a[i] + n[i] - lo) / sizeof(long);
	}
	s->other_in = &fgc_other_in;
	s->bytes = snap_hi - snap_lo;
}

/*
 * fgc_save copies the writable segment to buf (fgc_segment's bytes) at a
 * quiescent point, for the harness's prefix sharing; fgc_restore puts a
 * copy back, after a remote CPU the last run left blocked has finished (as
 * fgc_reset does). The remote thread's control block is in the heap: a
 * copy is taken only while that thread is idle (fgc_remote_pending).
 */
void fgc_save(void *buf)
{
	memcpy(buf, (void *)snap_lo, snap_hi - snap_lo);
}

void fgc_restore(const void *buf)
{
	int r;

	if (rc && rc->state == 1)
		fgc_remote_finish(&r);	/* the Go side ignores its reports */
	memcpy((void *)snap_lo, buf, snap_hi - snap_lo);
}

/* fgc_reset restores every static of the object to its state at init. */
void fgc_reset(void)
{
	int r;

	if (rc && rc->state == 1)
		fgc_remote_finish(&r);	/* the Go side ignores its reports */
	memcpy((void *)snap_lo, snap, snap_hi - snap_lo);
}

void fgc_set_current(int t)
{
	flush();
	cur_task = t;
}

int fgc_enter(unsigned long ret, unsigned long func, unsigned long retp)
{
	int r = function_graph_enter(ret, func, 0, (unsigned long *)retp);

	flush();
	return r;
}

unsigned long fgc_return(void)
{
	struct ftrace_regs fregs = { 0, 0 };
	unsigned long r;

#ifdef CONFIG_HAVE_FUNCTION_GRAPH_FREGS
	r = ftrace_return_to_handler(&fregs);
#else
	r = ftrace_return_to_handler(0);
#endif
	flush();
	return r;
}

unsigned long fgc_ret_addr(int t, int *idx, unsigned long ret, unsigned long retp)
{
	/* The cursor is the unwinder's local, on the C stack as in the kernel. */
	int cursor = idx ? *idx : 0;
	unsigned long r = ftrace_graph_ret_addr(&tasks[t], idx ? &cursor : NULL, ret, (unsigned long *)retp);

	flush();
	if (idx)
		*idx = cursor;
	return r;
}

/* fgc_get_ret_stack returns the word index of frame n of task t, or -1. */
int fgc_get_ret_stack(int t, int n)
{
	struct ftrace_ret_stack *rs = ftrace_graph_get_ret_stack(&tasks[t], n);

	flush();
	if (!rs)
		return -1;
	return (int)(((unsigned long)rs - (unsigned long)tasks[t].ret_stack) / sizeof(long));
}

/* fgc_reserve returns the word index of the reserved data, or -1. */
int fgc_reserve(int idx, int size)
{
	void *p = fgraph_reserve_data(idx, size);

	flush();
	if (!p)
		return -1;
	return (int)(((unsigned long)p - (unsigned long)current->ret_stack) / sizeof(long));
}

int fgc_retrieve(int idx, int *size)
{
	int sz = 0;	/* the retfunc's local, on the C stack as in the kernel */
	void *p = fgraph_retrieve_data(idx, &sz);

	*size = sz;

	flush();
	if (!p)
		return -1;
	return (int)(((unsigned long)p - (unsigned long)current->ret_stack) / sizeof(long));
}

void fgc_exit_task(int t)
{
	ftrace_graph_exit_task(&tasks[t]);
	flush();
}

/* fgc_store_word writes a word the harness stored (a user's payload). */
int fgc_poke(int t, int i, unsigned long v)
{
	if (t < 0 || t >= fgc_ntasks || !tasks[t].ret_stack || i < 0 || i >= (int)(PAGE_SIZE / sizeof(long)))
		return -1;
	tasks[t].ret_stack[i] = v;
	return 0;
}

/* fgc_peek reads word i of task t's shadow stack. */
int fgc_peek(int t, int i, unsigned long *v)
{
	if (t < 0 || t >= fgc_ntasks || !tasks[t].ret_stack || i < 0 || i >= (int)(PAGE_SIZE / sizeof(long)))
		return -1;
	*v = tasks[t].ret_stack[i];
	return 0;
}

/* fgc_task_fields reads the task fields the oracles compare. */
void fgc_task_fields(int t, long out[4])
{
	out[0] = tasks[t].ret_stack != NULL;
	out[1] = tasks[t].curr_ret_stack;
	out[2] = tasks[t].curr_ret_depth;
	out[3] = tasks[t].trace_overrun.counter;
}
