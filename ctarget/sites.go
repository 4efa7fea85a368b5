package ctarget

import (
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Entry is the entry point of fgraph.c that a context is running.
type Entry uint8

const (
	EntryNone             Entry = iota
	EntryEnter                  // function_graph_enter()
	EntryReturn                 // ftrace_return_to_handler()
	EntryReserve                // fgraph_reserve_data()
	EntryRetrieve               // fgraph_retrieve_data()
	EntryRetAddr                // ftrace_graph_ret_addr()
	EntryGetRetStack            // ftrace_graph_get_ret_stack()
	EntryRegister               // register_ftrace_graph(), before ftrace_startup_subops()
	EntryRegisterFinish         // after it
	EntryUnregister             // unregister_ftrace_graph(), before ftrace_shutdown_subops()
	EntryUnregisterFinish       // after it
	EntryExit                   // ftrace_graph_exit_task()
)

// Class is what a port word is.
type Class uint8

const (
	ClassOther Class = iota
	ClassCurr
	ClassDepth
	ClassRetStack
	ClassOverrun
	ClassWord // a shadow-stack word
	ClassArray
	ClassBitmask
	ClassActive
	ClassDoDirect
	ClassDirectGops
	ClassFuncKey
	ClassRetfuncKey
	ClassOpsIdx
	ClassDead
	ClassLRU
)

// Access is one instrumented access (or fence) of the compiled code.
type Access struct {
	Entry Entry
	Func  string // the fgraph.c function of its line
	Line  int
	Text  string // the line's source text
	Class Class
	Store bool
	Once  bool // READ_ONCE/WRITE_ONCE, a static key or a static call
	Fence int  // -1: an access; else FenceBarrier, FenceRmb, FenceWmb
	// AfterW3 is set when the context's push has raised curr_ret_stack
	// (the distinction between W1/W2 and W4/W5 on the same statement kind).
	AfterW3 bool
	// AfterW2 is set when the context's reservation has raised
	// curr_ret_stack.
	AfterW2 bool
}

// Fence kinds of Access.Fence (the runtime's FGC_FENCE_*).
const (
	FenceBarrier = 0
	FenceRmb     = 1
	FenceWmb     = 2
	FenceCallIn  = 3
	FenceCallOut = 4
)

// Classify names an access of the compiled fgraph.c by the port's Site of
// the same statement: the function it is in, the word it touches, its kind
// and the text of its line decide. Schedules, coverage, the oracles'
// tracking of in-flight frames and the known findings then mean the same
// on both targets. An access no rule names is fgraph.SiteCOther.
func Classify(a Access) fgraph.Site {
	t := a.Text
	has := func(s string) bool { return strings.Contains(t, s) }
	switch a.Entry {
	case EntryRegister, EntryRegisterFinish, EntryUnregister, EntryUnregisterFinish:
		if a.Func == "ftrace_graph_init_idle_task" || a.Func == "graph_init_task" || a.Func == "alloc_retstack_tasklist" ||
			a.Func == "ret_stack_init_task_vars" || a.Func == "start_graph_tracing" {
			return fgraph.SiteInitTask
		}
		if a.Func == "init_task_vars" || a.Func == "ret_stack_set_task_var" {
			return fgraph.SiteTaskVars
		}
		switch a.Entry {
		case EntryRegister:
			return fgraph.SiteRegister
		case EntryRegisterFinish:
			return fgraph.SiteRegisterFinish
		case EntryUnregister:
			return fgraph.SiteUnregister
		}
		return fgraph.SiteUnregisterFinish
	case EntryExit:
		return fgraph.SiteExitTask
	}
	// The task's ret_stack pointer is loaded before every access of its
	// words; the port indexes the words directly and loads the pointer
	// only where fgraph.c tests it, so elsewhere the load has a site of its
	// own (positions of the port's sites stay aligned).
	if a.Class == ClassRetStack && !a.Store && !(a.Func == "ftrace_push_return_trace" && has("!current->ret_stack")) {
		return fgraph.SiteCOther
	}
	if a.Fence >= FenceCallIn {
		return fgraph.SiteCOther // a static call's boundary (its trampoline is not fgraph.c's)
	}
	if a.Fence >= 0 {
		switch a.Func {
		case "ftrace_push_return_trace":
			if a.Fence == FenceRmb {
				return fgraph.SitePushRmb
			}
			if a.AfterW3 {
				return fgraph.SitePushBarrier2
			}
			return fgraph.SitePushBarrier1
		case "fgraph_reserve_data":
			return fgraph.SiteReserveBarrier
		case "ftrace_pop_return_trace":
			return fgraph.SitePopBarrier
		case "__ftrace_return_to_handler", "ftrace_return_to_handler":
			return fgraph.SiteRetBarrier
		case "ftrace_graph_exit_task":
			return fgraph.SiteExitTask
		}
		return fgraph.SiteCOther
	}
	switch a.Func {
	case "ftrace_push_return_trace":
		switch {
		case a.Class == ClassDead:
			return fgraph.SitePushDead
		case a.Class == ClassRetStack:
			return fgraph.SitePushRetStack
		case a.Class == ClassOverrun:
			return fgraph.SitePushOverrun
		case a.Class == ClassCurr && a.Store:
			return fgraph.SitePushW3
		case a.Class == ClassCurr && a.Once:
			return fgraph.SitePushCurr
		case a.Class == ClassCurr:
			return fgraph.SitePushCheck
		case a.Class == ClassWord && a.Store:
			switch {
			case has("->ret ="):
				if a.AfterW3 {
					return fgraph.SitePushW5Ret
				}
				return fgraph.SitePushW2
			case has("->func ="):
				return fgraph.SitePushW5Func
			case has("->calltime ="), has("->subtime ="), has("->fp ="):
				return fgraph.SitePushW5Calltime
			case has("->retp ="):
				return fgraph.SitePushW5Retp
			case has("ret_stack[offset] = val"):
				if a.AfterW3 {
					return fgraph.SitePushW4
				}
				return fgraph.SitePushW1
			}
		}
	case "function_graph_enter", "function_graph_enter_regs":
		switch {
		case a.Class == ClassDepth && has("--"):
			if a.Store {
				return fgraph.SiteEnterOutDepth
			}
			return fgraph.SiteEnterOutDepthLoad
		case a.Class == ClassDepth:
			if a.Store {
				return fgraph.SiteEnterDepthStore
			}
			return fgraph.SiteEnterDepthLoad
		case a.Class == ClassCurr && has("-="):
			if a.Store {
				return fgraph.SiteEnterOutRet
			}
			return fgraph.SiteEnterOutRetLoad
		case a.Class == ClassCurr && a.Store:
			return fgraph.SiteEnterRestore
		case a.Class == ClassCurr:
			return fgraph.SiteEnterSave
		case a.Class == ClassDoDirect:
			return fgraph.SiteEnterDirect
		case a.Class == ClassFuncKey:
			return fgraph.SiteEnterDirectCall
		case a.Class == ClassDirectGops:
			return fgraph.SiteEnterDirectGops
		case a.Class == ClassOpsIdx:
			return fgraph.SiteUserIdx
		case a.Class == ClassBitmask:
			return fgraph.SiteEnterBitmask
		case a.Class == ClassArray:
			return fgraph.SiteEnterArray
		case a.Class == ClassWord && a.Store:
			return fgraph.SiteSetBitmap
		}
	case "set_bitmap":
		return fgraph.SiteSetBitmap
	case "fgraph_reserve_data":
		switch {
		case a.Class == ClassCurr && a.Store:
			return fgraph.SiteReserveW2
		case a.Class == ClassCurr:
			return fgraph.SiteReserveCurr
		case a.Class == ClassWord && a.Store:
			if a.AfterW2 {
				return fgraph.SiteReserveW3
			}
			return fgraph.SiteReserveW1
		}
	case "get_fgraph_entry", "__get_offset", "get_frame_offset", "get_ret_stack", "get_data_type_data":
		switch a.Entry {
		case EntryReserve:
			return fgraph.SiteReservePrev
		case EntryRetrieve:
			return fgraph.SiteRetrieveWord
		case EntryReturn:
			return fgraph.SitePopOffset
		case EntryRetAddr, EntryGetRetStack:
			return fgraph.SiteUnwindOffset
		}
	case "fgraph_retrieve_data", "fgraph_retrieve_parent_data":
		if a.Class == ClassCurr {
			return fgraph.SiteRetrieveCurr
		}
		return fgraph.SiteRetrieveWord
	case "ftrace_pop_return_trace":
		switch {
		case a.Class == ClassCurr:
			return fgraph.SitePopCurr
		case a.Class == ClassOverrun:
			return fgraph.SitePopOverrun
		case a.Class == ClassDepth:
			return fgraph.SitePopDepth
		case a.Class == ClassDead:
			return fgraph.SiteGraphStop
		case a.Class == ClassWord && has("->ret"):
			return fgraph.SitePopRet
		case a.Class == ClassWord:
			return fgraph.SitePopFunc
		}
	case "__ftrace_return_to_handler", "ftrace_return_to_handler", "get_bitmap_bits":
		switch {
		case a.Class == ClassWord:
			return fgraph.SiteRetBitmap
		case a.Class == ClassDoDirect:
			return fgraph.SiteRetDirect
		case a.Class == ClassDirectGops:
			return fgraph.SiteRetDirectGops
		case a.Class == ClassRetfuncKey:
			return fgraph.SiteRetDirectCall
		case a.Class == ClassOpsIdx:
			return fgraph.SiteUserIdx
		case a.Class == ClassArray:
			return fgraph.SiteRetArray
		case a.Class == ClassCurr:
			return fgraph.SiteRetLower
		case a.Class == ClassDepth && a.Store:
			return fgraph.SiteRetDepth
		case a.Class == ClassDepth:
			return fgraph.SiteRetDepthLoad
		case a.Class == ClassDead:
			return fgraph.SiteGraphStop
		}
	case "ftrace_graph_stop":
		return fgraph.SiteGraphStop
	case "ftrace_graph_ret_addr", "ftrace_graph_get_ret_stack":
		switch {
		case a.Class == ClassCurr:
			return fgraph.SiteUnwindCurr
		case a.Class == ClassWord && has("->retp"):
			return fgraph.SiteUnwindRetp
		case a.Class == ClassWord && has("->ret"):
			return fgraph.SiteUnwindRet
		case a.Class == ClassWord:
			return fgraph.SiteUnwindOffset
		}
	case "ftrace_graph_exit_task":
		return fgraph.SiteExitTask
	}
	// By the word alone, where a line of fgraph.c does not decide: the
	// static calls' targets are read in their trampolines (not fgraph.c's
	// lines), and the direct-mode words mean one thing per entry point.
	if !a.Store {
		switch a.Class {
		case ClassFuncKey:
			return fgraph.SiteEnterDirectCall
		case ClassRetfuncKey:
			return fgraph.SiteRetDirectCall
		case ClassOpsIdx:
			return fgraph.SiteUserIdx
		case ClassDead:
			// ftrace_graph_is_dead(), inline in include/linux/ftrace.h
			if a.Entry == EntryEnter {
				return fgraph.SitePushDead
			}
			return fgraph.SiteGraphStop
		}
	}
	// Inlined helpers whose lines belong to their callers' sites.
	switch a.Entry {
	case EntryEnter:
		switch a.Class {
		case ClassBitmask:
			return fgraph.SiteEnterBitmask
		case ClassDirectGops:
			return fgraph.SiteEnterDirectGops
		case ClassDoDirect:
			return fgraph.SiteEnterDirect
		case ClassArray:
			return fgraph.SiteEnterArray
		}
	case EntryReturn:
		switch a.Class {
		case ClassCurr:
			return fgraph.SitePopCurr
		case ClassDirectGops:
			return fgraph.SiteRetDirectGops
		case ClassDoDirect:
			return fgraph.SiteRetDirect
		case ClassArray:
			return fgraph.SiteRetArray
		}
	case EntryRetAddr, EntryGetRetStack:
		if a.Class == ClassCurr {
			return fgraph.SiteUnwindCurr
		}
	}
	return fgraph.SiteCOther
}
