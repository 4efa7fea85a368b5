package fgraph

import "fmt"

// Variant names a kernel version of the algorithm.
type Variant uint8

const (
	// Latest is v6.14+ as of 2026 (linux-mm dc1898433b96): F = 3,
	// recursion lock in enter (d576aec24df9) and in the return handler
	// (0db0934e7f9b), READ_ONCE on both array loops, publish after startup,
	// idx cursor, FTRACE_OPS_FL_GRAPH on register (Jul 2025), direct mode
	// with the Feb 2026 fixes (F9, F10).
	Latest Variant = iota
	// V611 is the v6.11 release (tag v6.11, 15 Sep 2024), not the series
	// as merged: the series tip fe835e3ca40e (merged for v6.11-rc1, with
	// 63a8dfb88911 READ_ONCE in the entry loop, F2, and 29c1c24a2707 the
	// idx cursor, F5a) plus the fixes that went in during the v6.11-rc
	// cycle: "tracing: fgraph: Fix to add new fgraph_ops to array after
	// ftrace_startup_subops()" (Sep 2024, F4) and Petr Pavlu's "function_graph:
	// Fix the ret_stack used by ftrace_graph_ret_addr()" (8 Aug 2024; as
	// merged, ftrace_graph_ret_addr walked current's words). F = 4
	// (calltime in the frame), plain load of fgraph_array in the return loop
	// (F3 open), static key turned off when users drop to one (F9 open), no
	// recursion lock inside enter (the arch takes it, F14), none of the
	// 2025 changes. Not checked against the v6.11 tag's source, which no
	// stored tree holds (docs/fidelity.md).
	V611
	// Seed is "[PATCH 04/20] function_graph: Allow multiple users" as
	// reviewed on 27 May 2024: loop over fgraph_array_cnt, plain loads,
	// BIT(0) always set, no data reservation, no per-user save/restore, no
	// direct mode, no task-variable area, ret_addr ignoring the idx cursor.
	Seed
	// V612 is the 6.12 stable series as Debian ships it (6.12.117,
	// linux-source-6.12): the v6.11 frame (F = 4, calltime) and call
	// structure (no recursion lock inside enter, fgraph_retrieve_data in the
	// retfunc), with the fixes backported to 6.12.y: READ_ONCE in the return
	// loop (F3), the static key turned back on when users drop to one (F9),
	// FGRAPH_NO_DIRECT (F10). It is the variant the compiled tree of the CI
	// is held to (fgcheck diff).
	V612
)

var variantNames = [...]string{Latest: "latest", V611: "v6.11", Seed: "seed", V612: "v6.12"}

func (v Variant) String() string {
	if int(v) < len(variantNames) {
		return variantNames[v]
	}
	return fmt.Sprintf("Variant(%d)", v)
}

// ParseVariant maps a name to a Variant.
func ParseVariant(s string) (Variant, error) {
	for i, n := range variantNames {
		if n == s {
			return Variant(i), nil
		}
	}
	return 0, fmt.Errorf("unknown variant %q (want latest, v6.12, v6.11 or seed)", s)
}

// Variants lists every kernel variant in order.
func Variants() []Variant { return []Variant{Latest, V612, V611, Seed} }

// Config is the layout and behaviour of one Machine. The zero value is not
// valid; use DefaultConfig(variant) and adjust.
type Config struct {
	Variant Variant
	// FrameWords is F, the size of struct ftrace_ret_stack in words
	// (3 for v6.14+, 4 for v6.11..v6.13 without the profiler).
	FrameWords int
	// StackWords is SHADOW_STACK_OFFSET, the number of words per stack
	// (512 real; smaller for exploration).
	StackWords int
	// Tasks is the number of tasks (at least 1).
	Tasks int

	// NoBit0 is the fix variant for F1: set only the accepted bits.
	NoBit0 bool
	// GenCounter is the fix variant for F6 proposed in the 7aa1eaef9f42
	// commit message: each bitmap bit is paired with the slot's
	// registration generation, saved in the frame, and the return loop
	// skips a slot whose generation differs.
	GenCounter bool
	// EntryForAll models an architecture whose graph entry is called by
	// the function tracer trampoline for every traced function (no
	// per-ops graph calls, e.g. 32-bit x86): the F10 setting.
	EntryForAll bool
	// ReserveIrqOff is the fix variant for the reserve-window finding
	// (docs/findings.md): fgraph_reserve_data runs with interrupts masked
	// (local_irq_save/restore; the harness masks its NMIs too).
	ReserveIrqOff bool
	// RetpGuard is the fix variant for the inflight-ret-addr finding:
	// ftrace_push_return_trace clears retp with ret before raising
	// curr_ret_stack, and writes the real retp last, after a barrier that
	// follows the rewrite of ret.
	RetpGuard bool
	// DirectFallback is the fix variant for the direct-switch-race finding:
	// when fgraph_direct_gops is the stub or disagrees with the static
	// call (another CPU is switching direct mode), take the loop path.
	DirectFallback bool
	// NoTransition is the fix variant for the recursion-transition
	// finding: ftrace_test_recursion_trylock() without the
	// TRACE_CTX_TRANSITION fallback, so a nested call in the same context is
	// refused. Not a kernel proposal: the transition exists for an interrupt
	// that traces before preempt_count says so, which the harness (whose
	// context level is always exact) does not have.
	NoTransition bool
	// StaticCall is CONFIG_HAVE_STATIC_CALL: direct (single-user) mode
	// exists. Ignored for Seed.
	StaticCall bool

	// Mutants switched on (see mutants.go).
	Mutants MutantSet
}

// DefaultConfig returns the real layout of a variant with two tasks.
func DefaultConfig(v Variant) Config {
	c := Config{Variant: v, FrameWords: 3, StackWords: 512, Tasks: 2, StaticCall: true}
	if v != Latest {
		c.FrameWords = 4 // ret, func, calltime, retp
	}
	if v == Seed {
		c.StaticCall = false
	}
	return c
}

// Validate reports a misuse of the configuration.
func (c Config) Validate() error {
	if c.Variant > V612 {
		return fmt.Errorf("fgraph: unknown variant %d", c.Variant)
	}
	if c.FrameWords != 3 && c.FrameWords != 4 {
		return fmt.Errorf("fgraph: frame words F = %d, want 3 or 4", c.FrameWords)
	}
	if c.Tasks < 1 || c.Tasks > 8 {
		return fmt.Errorf("fgraph: %d tasks, want 1..8", c.Tasks)
	}
	if min := c.taskVarWords() + c.FrameWords + 1 + 8; c.StackWords < min || c.StackWords > 1<<FgraphFrameOffsetBits {
		return fmt.Errorf("fgraph: stack of %d words, want %d..%d", c.StackWords, min, 1<<FgraphFrameOffsetBits)
	}
	return nil
}

// taskVarWords is the size of the task-variable area (0 in the seed patch,
// which predates 4497412a1f7b).
func (c Config) taskVarWords() int {
	if c.Variant == Seed {
		return 0
	}
	return FgraphArraySize
}

// ShadowStackMaxOffset is SHADOW_STACK_MAX_OFFSET:
// SHADOW_STACK_OFFSET - (FGRAPH_FRAME_OFFSET + 1 + FGRAPH_ARRAY_SIZE) since the
// task-variable patch; OFFSET - (F + 1) in the seed patch.
func (c Config) ShadowStackMaxOffset() int {
	return c.StackWords - (c.FrameWords + 1 + c.taskVarWords())
}

// TaskVarBase is the index of task variable 0 (SHADOW_STACK_TASK_VARS), or
// -1 when the variant has none.
func (c Config) TaskVarBase() int {
	if c.taskVarWords() == 0 {
		return -1
	}
	return c.StackWords - FgraphArraySize
}

// Frame field indices inside struct ftrace_ret_stack.
// v6.14+: ret, func, retp. v6.11..v6.13: ret, func, calltime, retp.
const (
	FieldRet  = 0
	FieldFunc = 1
)

// FieldRetp is the index of retp within a frame.
func (c Config) FieldRetp() int { return c.FrameWords - 1 }

// FieldCalltime is the index of calltime, or -1 when the frame has none.
func (c Config) FieldCalltime() int {
	if c.FrameWords == 4 {
		return 2
	}
	return -1
}
