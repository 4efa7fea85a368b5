package fgraph

import (
	"fmt"
	"sort"
)

// Mutant is one seeded defect of the port, switchable by name.
type Mutant uint8

// The catalogue. Origins and expected verdicts are in Catalogue.
const (
	MPush1          Mutant = iota + 1 // raise curr_ret_stack before the offset word (swap W1/W3)
	MPush2                            // frame fields written only before W3, no rewrite after
	MPush3                            // drop W4 (control)
	MPushBarrier1                     // drop the barrier between W2 and W3
	MPushBarrier2                     // drop the barrier between W3 and W4
	MPushW3Plain                      // W3 as a plain store (control)
	MEnter1                           // drop the per-user save/restore of curr_ret_stack
	MBitmapTop                        // set_bitmap writes the top word (curr-1) instead of off
	MRollbackOff                      // OUT_RET subtracts F instead of F+1
	MRollbackDepth                    // OUT path forgets curr_ret_depth--
	MReserve1                         // raise curr before the DATA word (swap reserve W1/W2)
	MReserveBarrier                   // drop the barrier in fgraph_reserve_data
	MReserve3                         // drop the rewrite of the DATA word (reserve W3)
	MRet1                             // lower curr_ret_stack before running retfuncs
	MRetBarrier                       // drop the barrier before lowering curr (control)
	MRetOff                           // lower curr_ret_stack to off instead of off-F
	MF1Bit0                           // set BIT(0) on the no-bit0 fix (F1)
	MF2                               // plain, re-read fgraph_array[i] in the entry loop (F2)
	MF3                               // plain, re-read fgraph_array[i] in the return loop (F3)
	MF4                               // publish fgraph_array[i] before the filter is ready (F4)
	MF5Idx                            // ftrace_graph_ret_addr ignores the idx cursor (F5a)
	MF5Tail                           // ftrace_graph_ret_addr drops the ret != return_to_handler clause (F5)
	MF6                               // lowest-free index allocator instead of the LRU (F6)
	MF7                               // start_graph_tracing skips the idle task (F7)
	MF9                               // ftrace_graph_enable_direct turns the key off (F9)
	MF10                              // direct mode kept on an entry-for-all arch (F10)
	MF14                              // no recursion lock around the entry callbacks (F14)
	MF12                              // allocation-size bookkeeping in the wrong unit (F12, control)
	MBitmaskPlain                     // fgraph_array_bitmask read once into a local with a plain load (control)
	MPushCurrPlain                    // READ_ONCE(curr_ret_stack) in push as a plain load (control)
	MRecursionPlain                   // READ_ONCE(trace_recursion) in the recursion trylock as a plain load (control)
	MRetAddrCurrent                   // ftrace_graph_ret_addr walks current's words, not the task's
	MPushNoLimit                      // push without the SHADOW_STACK_MAX_OFFSET check
	MDataChainStep                    // the DATA chain walk steps over the payload but not the DATA word
	MParentDepth                      // fgraph_retrieve_parent_data stops one frame short
	numMutants
)

// MutantSet is a set of mutants.
type MutantSet uint64

// Has reports whether m is in the set.
func (s MutantSet) Has(m Mutant) bool { return s&(1<<m) != 0 }

// With returns the set with m added.
func (s MutantSet) With(m Mutant) MutantSet { return s | 1<<m }

// MutantInfo describes one catalogue entry.
type MutantInfo struct {
	Mutant Mutant
	Name   string
	// Origin is the kernel fix (commit id and title), the seed review, or
	// the section of kernel-fgraph.md the ordering change derives from.
	Origin string
	Desc   string
	// Control mutants must survive; Reason says why.
	Control bool
	Reason  string
	// Fixes are the fix options the mutant is applied on top of (for
	// example F1 reintroduces BIT(0) on the no-bit0 fix).
	NoBit0, GenCounter, EntryForAll bool
}

// Catalogue lists every mutant, in declaration order.
var Catalogue = []MutantInfo{
	{Mutant: MPush1, Name: "M-push-1", Origin: "kernel-fgraph.md §4 ordering mutant (§2.1 W1/W3)", Desc: "raise curr_ret_stack before writing the offset word"},
	{Mutant: MPush2, Name: "M-push-2", Origin: "kernel-fgraph.md §4 ordering mutant (§2.1 W5)", Desc: "write the frame fields only before W3; no rewrite after the increment"},
	{Mutant: MPush3, Name: "M-push-3", Origin: "kernel-fgraph.md §4 ordering mutant (§2.1 W4)", Desc: "drop the post-increment rewrite of the RESERVED word (W4)", Control: true,
		Reason: "an IRQ before W3 leaves a BITMAP word with the same offset F at off; set_bitmap overwrites it or the frame is discarded, so every unwinder still sees a valid offset"},
	{Mutant: MPushBarrier1, Name: "M-push-barrier1", Origin: "§2.1 step 10 (own)", Desc: "drop the barrier() between W2 and W3 so the compiler may sink W1 below the increment"},
	{Mutant: MPushBarrier2, Name: "M-push-barrier2", Origin: "§2.1 step 12 (own)", Desc: "drop the barrier() between W3 and W4 so the compiler may hoist the frame writes above the increment"},
	{Mutant: MPushW3Plain, Name: "M-push-w3-plain", Origin: "§2.1 step 11 / §3 item 6 (own)", Desc: "increment curr_ret_stack with a plain store instead of WRITE_ONCE", Control: true,
		Reason: "W3 is alone between two barriers; ONCE only orders it against other ONCE accesses in the same region and prevents tearing, which the model (and x86-64) does not have"},
	{Mutant: MEnter1, Name: "M-enter-1", Origin: "kernel-fgraph.md §4 ordering mutant (§2.2 step 6)", Desc: "drop the per-user save/restore of curr_ret_stack around entryfunc"},
	{Mutant: MBitmapTop, Name: "M-bitmap-top", Origin: "§2.2 step 8 (own)", Desc: "set_bitmap writes the top word (curr_ret_stack-1) instead of the frame's offset word"},
	{Mutant: MRollbackOff, Name: "M-rollback-off", Origin: "§2.2 step 10 (own)", Desc: "OUT_RET lowers curr_ret_stack by F instead of F+1"},
	{Mutant: MRollbackDepth, Name: "M-rollback-depth", Origin: "§2.2 step 11 (own)", Desc: "the OUT path forgets curr_ret_depth--"},
	{Mutant: MReserve1, Name: "M-reserve-1", Origin: "§2.3 W1/W2 (own)", Desc: "raise curr_ret_stack before writing the DATA word"},
	{Mutant: MReserveBarrier, Name: "M-reserve-barrier", Origin: "§2.3 step 8 (own)", Desc: "drop the barrier() between the DATA word and the curr_ret_stack store"},
	{Mutant: MReserve3, Name: "M-reserve-3", Origin: "§2.3 step 10 (own)", Desc: "drop the rewrite of the DATA word after raising curr_ret_stack"},
	{Mutant: MRet1, Name: "M-ret-1", Origin: "kernel-fgraph.md §4 ordering mutant (§2.4 step 7)", Desc: "lower curr_ret_stack before running the retfuncs"},
	{Mutant: MRetBarrier, Name: "M-ret-barrier", Origin: "§2.4 step 6 (own)", Desc: "drop the barrier() before lowering curr_ret_stack", Control: true,
		Reason: "every retfunc is an opaque call, which already ends the compiler region; after the last call only the curr store remains, so the barrier orders nothing the model can move"},
	{Mutant: MRetOff, Name: "M-ret-off", Origin: "§2.4 step 7 (own)", Desc: "lower curr_ret_stack to the bitmap word instead of the frame start"},
	{Mutant: MF1Bit0, Name: "F1", NoBit0: true, Origin: "seed review 27 May 2024 (BIT(0), fgraph_idx); still in fe835e3ca40e and 000aa47a51233", Desc: "on the no-bit0 fix, set BIT(0) in every bitmap word again"},
	{Mutant: MF2, Name: "F2", Origin: "63a8dfb88911 function_graph: Add READ_ONCE() when accessing fgraph_array[]", Desc: "plain load of fgraph_array[i] in the entry loop, re-read at use"},
	{Mutant: MF3, Name: "F3", Origin: "d65474033740 fgraph: Add READ_ONCE() when accessing fgraph_array[]", Desc: "plain load of fgraph_array[i] in the return loop, re-read at use"},
	{Mutant: MF4, Name: "F4", Origin: "tracing: fgraph: Fix to add new fgraph_ops to array after ftrace_startup_subops() (Sep 2024)", Desc: "publish fgraph_array[i] at allocation, before the filter is ready"},
	{Mutant: MF5Idx, Name: "F5-idx", Origin: "29c1c24a2707 function_graph: Fix up ftrace_graph_ret_addr()", Desc: "ftrace_graph_ret_addr ignores the idx cursor and rescans from the top"},
	{Mutant: MF5Tail, Name: "F5-tail", Origin: "375bb57292f4 function_graph: Handle tail calls for stack unwinding", Desc: "ftrace_graph_ret_addr drops the ret != return_to_handler clause"},
	{Mutant: MF6, Name: "F6", Origin: "7aa1eaef9f42 commit message; 6d4786592ac8 LRU index", Desc: "lowest-free index allocator: one unregister+register reuses the index"},
	{Mutant: MF7, Name: "F7", Origin: "2c02f7375e65 / Dec 2024 fgraph: Still initialize idle shadow stacks when starting", Desc: "start_graph_tracing gives no stack to the idle task"},
	{Mutant: MF9, Name: "F9", Origin: "53b2fae90ff0 fgraph: Restore direct mode when callbacks drop to one", Desc: "ftrace_graph_enable_direct(true) turns the static key off"},
	{Mutant: MF10, Name: "F10", EntryForAll: true, Origin: "f4ff9f646a4d fgraph: Do not call handlers direct when not using ftrace_ops", Desc: "direct mode stays on an architecture whose entry fires for every function"},
	{Mutant: MF14, Name: "F14", Origin: "fgraph: Get ftrace recursion lock in function_graph_enter (v6.14)", Desc: "no recursion lock around the entry callbacks: a callback that calls a traced function re-enters"},
	{Mutant: MF12, Name: "F12", Origin: "fae4078c289a fgraph: Allocate ret_stack_list with proper size", Desc: "the temporary stack list is sized in the wrong unit (over-allocation)", Control: true,
		Reason: "over-allocation of a temporary list changes no word, no order and no callback: harmless, exactly as the fix says"},
	{Mutant: MBitmaskPlain, Name: "M-bitmask-plain", Origin: "§2.2 step 6 (own)", Desc: "read fgraph_array_bitmask once into a local with a plain load and iterate the copy (the compiler may re-load it at each step until the first callback, and must keep it after)", Control: true,
		Reason: "a slot freed while the loop runs is still visited but reads as &fgraph_stub and is skipped; a slot allocated meanwhile is not yet published (fgraph_array[i] is set after ftrace_startup_subops), so missing its bit changes nothing"},
	{Mutant: MPushCurrPlain, Name: "M-push-curr-plain", Origin: "§2.1 step 7 / §3 item 6 (own): loads by kind", Desc: "read curr_ret_stack with a plain load instead of READ_ONCE in ftrace_push_return_trace, so the compiler may load it again for ret_stack = RET_STACK(current, offset) and offset += FGRAPH_FRAME_OFFSET", Control: true,
		Reason: "only this CPU writes current->curr_ret_stack (remote CPUs never do while the task has a stack), the re-load lies in the region before the first barrier with no store of the context's own to the word before it, and every interrupt that runs in between restores the word before it returns (oracle 5), so the re-load returns the same value"},
	{Mutant: MRecursionPlain, Name: "M-recursion-plain", Origin: "include/linux/trace_recursion.h trace_test_and_set_recursion() (own): loads by kind", Desc: "read current->trace_recursion with a plain load instead of READ_ONCE in ftrace_test_recursion_trylock, so the compiler may load it again for the TRANSITION test and for val |= 1 << bit", Control: true,
		Reason: "only this CPU's contexts write current->trace_recursion; an interrupt sets its own context bit and clears it again before it returns, so between the load and the store every re-load returns the same value; the word is never read by a remote CPU"},
}

// The bug classes std reaches since it unwinds another task, fills the
// stack, has two data users and reads a parent's data (issue 11).
var catalogueReach = []MutantInfo{
	{Mutant: MRetAddrCurrent, Name: "M-retaddr-current", Origin: "Petr Pavlu, function_graph: Fix the ret_stack used by ftrace_graph_ret_addr() (Aug 2024), on latest", Desc: "ftrace_graph_ret_addr(task, ...) walks current's words instead of the task's (the seed's bug, back in latest)"},
	{Mutant: MPushNoLimit, Name: "M-push-no-limit", Origin: "§2.1 step 3 (own)", Desc: "ftrace_push_return_trace without the curr_ret_stack + FGRAPH_FRAME_OFFSET + 1 >= SHADOW_STACK_MAX_OFFSET refusal"},
	{Mutant: MDataChainStep, Name: "M-data-chain-step", Origin: "§2.5 the DATA chain (own)", Desc: "the DATA chain walk of fgraph_retrieve_*data() steps back by the payload size only, not over the DATA word"},
	{Mutant: MParentDepth, Name: "M-parent-depth", Origin: "a312a0f7834e fgraph_retrieve_parent_data() (own)", Desc: "fgraph_retrieve_parent_data(idx, &size, depth) stops one frame short: depth 1 returns the function's own data"},
}

func init() { Catalogue = append(Catalogue, catalogueReach...) }

// LookupMutant finds a catalogue entry by name.
func LookupMutant(name string) (MutantInfo, error) {
	for _, mi := range Catalogue {
		if mi.Name == name {
			return mi, nil
		}
	}
	names := make([]string, len(Catalogue))
	for i, mi := range Catalogue {
		names[i] = mi.Name
	}
	sort.Strings(names)
	return MutantInfo{}, fmt.Errorf("unknown mutant %q (known: %v)", name, names)
}

// Info returns the catalogue entry of m.
func (m Mutant) Info() MutantInfo {
	for _, mi := range Catalogue {
		if mi.Mutant == m {
			return mi
		}
	}
	return MutantInfo{Mutant: m, Name: fmt.Sprintf("Mutant(%d)", m)}
}

func (m Mutant) String() string { return m.Info().Name }
