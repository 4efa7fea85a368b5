/*
 * fgc_abi.h: the interface between runtime.c (in the object built from a
 * kernel tree) and fgcheck's cgo loader (ctarget/cload). Port addresses
 * are fgraph.Machine.Mem indices; ctarget's tests hold them to the port.
 */
#ifndef FGC_ABI_H
#define FGC_ABI_H

#define FGC_MAX_TASKS	8
#define FGC_MAX_USERS	8

/* classify() results that are not port words */
#define FGC_LOCAL	(-1)
#define FGC_OTHER	(-2)
#define FGC_BAD		(-3)

/* access flags */
#define FGC_STORE	1
#define FGC_ONCE	2	/* READ_ONCE / WRITE_ONCE (a volatile access) */
#define FGC_ATOMIC	4
#define FGC_PATCHED	8	/* a static key or static call: code patching in the kernel */
#define FGC_RANGE	16
#define FGC_FREE	32

#define FGC_ATOMIC_ADD	1
#define FGC_ATOMIC_SET	2

#define FGC_FENCE_BARRIER	0
#define FGC_FENCE_RMB		1
#define FGC_FENCE_WMB		2
#define FGC_FENCE_CALL_IN	3	/* an opaque call (a static call) */
#define FGC_FENCE_CALL_OUT	4

/* fgraph.Machine.Mem layout (fgraph/machine.go) */
#define FGC_ADDR_ARRAY		0
#define FGC_ADDR_BITMASK	16
#define FGC_ADDR_ACTIVE		17
#define FGC_ADDR_DO_DIRECT	18
#define FGC_ADDR_DIRECT_GOPS	19
#define FGC_ADDR_FUNC		20
#define FGC_ADDR_RETFUNC	21
#define FGC_ADDR_LRU		22
#define FGC_ADDR_LRU_NEXT	38
#define FGC_ADDR_LRU_LAST	39
#define FGC_ADDR_DEAD		40
#define FGC_ADDR_OPS		64
#define FGC_OPS_WORDS		2
#define FGC_OPS_IDX		1
#define FGC_TASK_RET_STACK	0
#define FGC_TASK_CURR		1
#define FGC_TASK_DEPTH		2
#define FGC_TASK_OVERRUN	3

struct fgc_go {
	void (*load)(int port, int flags, void *pc);
	void (*store)(int port, unsigned long val, int flags, void *pc);
	void (*atomic)(int port, unsigned long val, int op, void *pc);
	void (*fence)(int kind, void *pc);
	void (*bad)(unsigned long addr, int size, int flags, void *pc);
	void (*warn)(int line, char *cond, void *pc);
	void (*bug)(int line, void *pc);
	unsigned long long (*clock)(void);
	int (*ops_test)(int user, unsigned long ip, void *pc);
	void (*subops)(int user, int startup, int after);
	int (*entry)(int user, unsigned long func, int depth, unsigned long gops, void *pc);
	void (*ret)(int user, unsigned long func, int depth, unsigned long gops, void *pc);
	int task_base[FGC_MAX_TASKS];
	int task_stride;
	int task_words;
	unsigned long entry_tramp[FGC_MAX_USERS];	/* filled by fgc_init */
	unsigned long ret_tramp[FGC_MAX_USERS];
};

/* Addresses of fgraph.c's statics, read from the object's symbol table. */
struct fgc_globals {
	unsigned long array, bitmask, active, do_direct, direct_gops;
	unsigned long func_key, retfunc_key, lru_table, lru_next, lru_last, dead;
	unsigned long stub, entry_stub, ret_stub;
	unsigned long data_lo, data_hi, text_lo, text_hi;
};

/*
 * The writable segment, as words from its first aligned word, and the
 * statics in it that are no state (fgc_segment), as word ranges [lo, hi).
 */
#define FGC_SEG_SKIP 3
struct fgc_segment {
	unsigned long *words;
	unsigned long nwords;
	unsigned long skip[FGC_SEG_SKIP][2];
	unsigned long *other_in;		/* &fgc_other_in */
	unsigned long bytes;			/* the segment's size (fgc_save) */
};

struct fgc_layout {
	long frame_size, off_ret, off_func, off_calltime, off_retp, off_subtime;
	long page_size, curr_size, no_direct;
	unsigned long return_to_handler, panic;
};

#endif
