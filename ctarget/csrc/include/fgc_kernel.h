/*
 * fgc_kernel.h: the rest of the kernel, as kernel/trace/fgraph.c sees it,
 * for building a tree's fgraph.c unmodified in user space (the way
 * tools/testing/radix-tree builds lib/radix-tree.c). Every header that
 * fgraph.c includes is a one-line file of the overlay that includes this.
 *
 * What is shared memory in the kernel stays shared memory here, and every
 * access fgraph.c makes to it is instrumented by the compiler
 * (-fsanitize=thread, KCSAN's parameters), so the harness runs between any
 * two of them. What the kernel does by patching code (static keys, static
 * calls) is a runtime call that reports itself as an access of the state
 * it stands for, so a remote register can land between a key test and the
 * call it guards.
 *
 * Layout that fgraph.c depends on (struct ftrace_ret_stack,
 * ftrace_graph_ent/ret, fgraph_ops, ftrace_ops and the graph-tracer fields
 * of task_struct) is not here: fgc_tree.h is generated at build time from
 * the tree's own include/linux/ftrace.h and include/linux/sched.h.
 */
#ifndef FGC_KERNEL_H
#define FGC_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

/* ---- compiler.h, types.h ---- */
#define __weak		__attribute__((weak))
#define __packed	__attribute__((packed))
#define __rcu
#define __init
#undef __always_inline
#define __always_inline	inline __attribute__((always_inline))
#define notrace
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define __must_check
#define __maybe_unused	__attribute__((unused))
#define fallthrough	__attribute__((fallthrough))
#ifndef barrier
/* barrier() is a call into the harness: a region boundary and a yield point. */
void fgc_barrier(void);
#define barrier()	fgc_barrier()
#endif
void fgc_smp_rmb(void);
void fgc_smp_wmb(void);
#define smp_rmb()	fgc_smp_rmb()
#define smp_wmb()	fgc_smp_wmb()
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) do { *(volatile __typeof__(x) *)&(x) = (val); } while (0)
#define BUILD_BUG_ON(c)	_Static_assert(!(c), "BUILD_BUG_ON: " #c)
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define EXPORT_SYMBOL(x)
#define EXPORT_SYMBOL_GPL(x)
#define NOKPROBE_SYMBOL(x)
#define __user
#define __percpu

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef unsigned long long ktime_t_ns;
typedef unsigned int gfp_t;
typedef struct { int counter; } atomic_t;
typedef struct { long counter; } atomic_long_t;

#define EPERM	1
#define ENOMEM	12
#define EBUSY	16
#define EINVAL	22
#define ENOSPC	28
#define EAGAIN	11
#define ENODEV	19

/* ---- bits.h, bitops.h ---- */
#define BITS_PER_BYTE	8
#define BITS_PER_LONG	64
#define BIT(nr)		(1UL << (nr))
#define GENMASK(h, l)	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
/* Atomic bitops are indivisible read-modify-writes: runtime calls. */
void fgc_set_bit(long nr, volatile unsigned long *addr);
void fgc_clear_bit(long nr, volatile unsigned long *addr);
bool fgc_test_bit(long nr, const volatile unsigned long *addr);
#define set_bit(nr, addr)	fgc_set_bit((nr), (addr))
#define clear_bit(nr, addr)	fgc_clear_bit((nr), (addr))
#define test_bit(nr, addr)	fgc_test_bit((nr), (addr))
/*
 * find_next_bit() is lib/find_bit.c, not fgraph.c: a plain load of the
 * mask word at every step, as the generic C version does. It is inline here
 * so that its loads are instrumented with fgraph.c's.
 */
static inline unsigned long fgc_find_next_bit(const unsigned long *addr, unsigned long size,
					      unsigned long offset)
{
	for (; offset < size; offset++)
		if (*addr & (1UL << offset))
			return offset;
	return size;
}
#define for_each_set_bit(bit, addr, size) \
	for ((bit) = 0; (bit) = fgc_find_next_bit((addr), (size), (bit)), (bit) < (size); (bit)++)

/* ---- atomic.h: runtime calls that report themselves ---- */
void fgc_atomic_inc(atomic_t *v);
int fgc_atomic_read(const atomic_t *v);
void fgc_atomic_set(atomic_t *v, int i);
#define atomic_inc(v)		fgc_atomic_inc(v)
#define atomic_read(v)		fgc_atomic_read(v)
#define atomic_set(v, i)	fgc_atomic_set((v), (i))

/* ---- printk, bug.h ---- */
void fgc_warn(const char *file, int line, const char *cond);
void fgc_printk(const char *fmt, ...);
#define WARN_ON(c)	({ int __c = !!(c); if (unlikely(__c)) fgc_warn(__FILE__, __LINE__, #c); unlikely(__c); })
#define WARN_ON_ONCE(c)	WARN_ON(c)
#define WARN(c, ...)	({ int __c = !!(c); if (unlikely(__c)) fgc_warn(__FILE__, __LINE__, #c); unlikely(__c); })
#define WARN_ONCE(c, ...) WARN(c, __VA_ARGS__)
void fgc_bug(const char *file, int line) __attribute__((noreturn));
#define BUG()		fgc_bug(__FILE__, __LINE__)
#define BUG_ON(c)	do { if (unlikely(c)) BUG(); } while (0)
#define pr_info(...)	fgc_printk(__VA_ARGS__)
#define pr_warn(...)	fgc_printk(__VA_ARGS__)
#define pr_err(...)	fgc_printk(__VA_ARGS__)
/* panic() is never called by fgraph.c; its address is returned. */
void panic(const char *fmt, ...) __attribute__((noreturn));

/* ---- list.h, mutex.h, cleanup.h, rcu, sched ---- */
struct list_head { struct list_head *next, *prev; };
#define INIT_LIST_HEAD(l) do { (l)->next = (l); (l)->prev = (l); } while (0)
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_for_each_entry(pos, head, member)				\
	for (pos = list_entry((head)->next, __typeof__(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
struct mutex { int locked; };
#define mutex_init(m)	do { (m)->locked = 0; } while (0)
void fgc_mutex_lock(struct mutex *m);
void fgc_mutex_unlock(struct mutex *m);
#define mutex_lock(m)	fgc_mutex_lock(m)
#define mutex_unlock(m)	fgc_mutex_unlock(m)
static inline void fgc_guard_mutex_exit(struct mutex **m) { fgc_mutex_unlock(*m); }
#define __FGC_CAT2(a, b) a##b
#define __FGC_CAT(a, b) __FGC_CAT2(a, b)
#define guard(type) fgc_guard_##type
#define fgc_guard_mutex(m) \
	struct mutex *__FGC_CAT(__guard_, __LINE__) __attribute__((cleanup(fgc_guard_mutex_exit))) = \
		(fgc_mutex_lock(m), (m))
#define scoped_guard(type, m) for (int __sg = (fgc_mutex_lock(m), 1); __sg; __sg = 0, fgc_mutex_unlock(m))
typedef struct { int dummy; } rwlock_t;
extern rwlock_t tasklist_lock;
#define read_lock(l)	do { } while (0)
#define read_unlock(l)	do { } while (0)
#define rcu_read_lock()		do { } while (0)
#define rcu_read_unlock()	do { } while (0)
#define preempt_disable_notrace()	do { } while (0)
#define preempt_enable_notrace()	do { } while (0)
#define preempt_disable()	do { } while (0)
#define preempt_enable()	do { } while (0)

/* ---- slab.h ---- */
#define GFP_KERNEL	0u
#define GFP_ATOMIC	1u
void *fgc_kmalloc(size_t size, gfp_t flags);
void fgc_kfree(const void *p);
#define kmalloc(s, f)		fgc_kmalloc((s), (f))
#define kzalloc(s, f)		({ void *__p = fgc_kmalloc((s), (f)); if (__p) memset(__p, 0, (s)); __p; })
#define kcalloc(n, s, f)	kzalloc((n) * (s), (f))
#define kmalloc_array(n, s, f)	fgc_kmalloc((n) * (s), (f))
#define kfree(p)		fgc_kfree(p)

/* ---- page, percpu, cpu ---- */
#ifndef PAGE_SIZE
#define PAGE_SIZE	4096UL
#endif
#define NR_CPUS	1
#define DEFINE_PER_CPU(type, name)	__typeof__(type) name
#define per_cpu(var, cpu)		(*((void)(cpu), &(var)))
#define this_cpu_read(var)		(var)
#define for_each_online_cpu(cpu)	for ((cpu) = 0; (cpu) < 1; (cpu)++)
#define for_each_possible_cpu(cpu)	for_each_online_cpu(cpu)
#define smp_processor_id()		0

/* ---- the task ---- */
struct task_struct {
#include "fgc_task_fields.h"	/* generated: the tree's graph-tracer fields */
	unsigned long trace_recursion;
	int pid;
	int fgc_index;		/* the harness's task number */
};
/*
 * current is a per-CPU "stable" read in the kernel (this_cpu_read_stable):
 * the compiler may merge or hoist it, so it is a const function here.
 */
struct task_struct *fgc_get_current(void) __attribute__((const));
#define current fgc_get_current()
extern struct task_struct *fgc_tasks[];
extern int fgc_ntasks;
struct task_struct *fgc_idle_task(int cpu);
#define idle_task(cpu)	fgc_idle_task(cpu)
#define for_each_process_thread(g, t) \
	for (int __i = 0; (g) = (t) = fgc_tasks[__i], __i < fgc_ntasks; __i++) if (!fgc_is_idle(t))
bool fgc_is_idle(struct task_struct *t);

/* ---- jump_label.h: static keys are shared words of the runtime ---- */
struct static_key { int enabled; };
struct static_key_true { struct static_key key; };
struct static_key_false { struct static_key key; };
#define DEFINE_STATIC_KEY_TRUE(name)	struct static_key_true name = { { 1 } }
#define DEFINE_STATIC_KEY_FALSE(name)	struct static_key_false name = { { 0 } }
#define DECLARE_STATIC_KEY_FALSE(name)	extern struct static_key_false name
bool fgc_static_key_test(struct static_key *k);
void fgc_static_key_set(struct static_key *k, int on);
#define static_branch_likely(x)		likely(fgc_static_key_test(&(x)->key))
#define static_branch_unlikely(x)	unlikely(fgc_static_key_test(&(x)->key))
#define static_branch_enable(x)		fgc_static_key_set(&(x)->key, 1)
#define static_branch_disable(x)	fgc_static_key_set(&(x)->key, 0)
#define static_key_enabled(x)		fgc_static_key_test(&(x)->key)

/* ---- static_call.h: the call target is a shared word of the runtime ---- */
struct static_call_key { void *func; };
#define STATIC_CALL_KEY(name)	__fgc_static_call_key_##name
#define STATIC_CALL_TYPE(name)	__fgc_static_call_type_##name
#define DEFINE_STATIC_CALL(name, _func) \
	typedef __typeof__(_func) STATIC_CALL_TYPE(name); \
	struct static_call_key STATIC_CALL_KEY(name) = { .func = (void *)(_func) }
void *fgc_static_call_load(struct static_call_key *k);
void fgc_static_call_update(struct static_call_key *k, void *func);
#define static_call_update(name, func)	fgc_static_call_update(&STATIC_CALL_KEY(name), (void *)(func))
/*
 * A static call is a direct call instruction whose target the kernel
 * patches: the CPU sees the target when it executes the call, after the
 * arguments are evaluated. So static_call(name) is a call of a trampoline
 * (not inlined: the arguments are evaluated before it runs) that reads the
 * target then. (Reading it in the function designator let GCC read it
 * before the arguments: the differential against the port found that.)
 * fgraph.c has two static calls; their trampolines are here by name.
 */
#define static_call(name)	__fgc_static_call_##name
struct ftrace_graph_ent;
struct ftrace_graph_ret;
struct fgraph_ops;
extern struct static_call_key __fgc_static_call_key_fgraph_func;
extern struct static_call_key __fgc_static_call_key_fgraph_retfunc;
/* The call is opaque to the compiler: a region boundary on both sides. */
void fgc_call_boundary(int out);
static __attribute__((noinline, unused)) int
__fgc_static_call_fgraph_func(struct ftrace_graph_ent *t, struct fgraph_ops *g)
{
	int (*f)(struct ftrace_graph_ent *, struct fgraph_ops *) =
		fgc_static_call_load(&__fgc_static_call_key_fgraph_func);
	int r;

	fgc_call_boundary(0);
	r = f(t, g);
	fgc_call_boundary(1);
	return r;
}
static __attribute__((noinline, unused)) void
__fgc_static_call_fgraph_retfunc(struct ftrace_graph_ret *t, struct fgraph_ops *g)
{
	void (*f)(struct ftrace_graph_ret *, struct fgraph_ops *) =
		fgc_static_call_load(&__fgc_static_call_key_fgraph_retfunc);

	fgc_call_boundary(0);
	f(t, g);
	fgc_call_boundary(1);
}

/* ---- suspend.h, notifier.h ---- */
struct notifier_block {
	int (*notifier_call)(struct notifier_block *nb, unsigned long action, void *data);
	struct notifier_block *next;
	int priority;
};
#define NOTIFY_DONE		0
#define PM_HIBERNATION_PREPARE	1
#define PM_POST_HIBERNATION	2
static inline int register_pm_notifier(struct notifier_block *nb) { return 0; }
static inline int unregister_pm_notifier(struct notifier_block *nb) { return 0; }
void pause_graph_tracing(void);
void unpause_graph_tracing(void);

/* ---- cpuhotplug.h ---- */
#define CPUHP_AP_ONLINE_DYN	1
static inline int cpuhp_setup_state(int state, const char *name, int (*startup)(unsigned int),
				    int (*teardown)(unsigned int)) { return 0; }

/* ---- trace/events/sched.h ---- */
typedef void (*fgc_sched_switch_probe)(void *, bool, struct task_struct *, struct task_struct *, unsigned int);
static inline int register_trace_sched_switch(fgc_sched_switch_probe p, void *data) { return 0; }
static inline int unregister_trace_sched_switch(fgc_sched_switch_probe p, void *data) { return 0; }

/*
 * ---- ftrace.h ----
 * Generated from the tree (fgc_tree.h): the layout structs and typedefs,
 * the ops flags and ftrace_startup commands, the prototypes of the entry
 * points, the kill switch and ftrace_graph_is_dead(). Here: what the arch
 * and the rest of ftrace provide.
 */
#include "fgc_tree.h"
/* x86-64's asm/ftrace.h (HAVE_DYNAMIC_FTRACE_WITH_ARGS) */
#define ftrace_graph_func ftrace_graph_func
void ftrace_graph_func(unsigned long ip, unsigned long parent_ip,
		       struct ftrace_ops *op, struct ftrace_regs *fregs);
#include "fgc_tree_graph.h"	/* generated: the tree's FGRAPH_NO_DIRECT block */
void ftrace_stub(unsigned long a0, unsigned long a1, struct ftrace_ops *op, struct ftrace_regs *fregs);
#define dereference_kernel_function_descriptor(p) ((void *)(p))
unsigned long long fgc_trace_clock_local(void);
#define trace_clock_local()	fgc_trace_clock_local()
struct ftrace_regs { unsigned long bp, ax; };
#define ftrace_regs_get_frame_pointer(fregs)	((fregs) ? (fregs)->bp : 0)
#define ftrace_regs_get_return_value(fregs)	((fregs) ? (fregs)->ax : 0)
bool ftrace_pids_enabled(struct ftrace_ops *ops);
extern struct mutex ftrace_lock;
int ftrace_ops_test(struct ftrace_ops *ops, unsigned long ip, void *regs);
int ftrace_startup_subops(struct ftrace_ops *ops, struct ftrace_ops *subops, int command);
int ftrace_shutdown_subops(struct ftrace_ops *ops, struct ftrace_ops *subops, int command);
extern int ftrace_graph_active;
void fgraph_update_pid_func(void);

/*
 * ---- kernel/trace/trace.h: what fgraph_pid_func() reads. It never runs
 * here (ftrace_pids_enabled() is false), so these only have to compile.
 */
#define FTRACE_PID_IGNORE	-1
#define FTRACE_PID_TRACE	-2
struct trace_array_cpu { int ftrace_ignore_pid; };
struct array_buffer { struct trace_array_cpu *data; };
struct trace_array { struct array_buffer array_buffer; };

#endif /* FGC_KERNEL_H */
