//go:build cgo

package cload

/*
#include "fgc_abi.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
)

// The runtime's calls into Go. Each runs on the thread of the C code that
// made it (the remote CPU has its own thread; the two strictly alternate).

// classOf is what port word a is.
func (in *Instance) classOf(a int) ctarget.Class {
	switch {
	case a >= int(fgraph.AddrArray) && a < int(fgraph.AddrArray)+16:
		return ctarget.ClassArray
	case a == int(fgraph.AddrBitmask):
		return ctarget.ClassBitmask
	case a == int(fgraph.AddrActive):
		return ctarget.ClassActive
	case a == int(fgraph.AddrDoDirect):
		return ctarget.ClassDoDirect
	case a == int(fgraph.AddrDirectGops):
		return ctarget.ClassDirectGops
	case a == int(fgraph.AddrFunc):
		return ctarget.ClassFuncKey
	case a == int(fgraph.AddrRetfunc):
		return ctarget.ClassRetfuncKey
	case a >= int(fgraph.AddrLRU) && a <= int(fgraph.AddrLRULast):
		return ctarget.ClassLRU
	case a == int(fgraph.AddrDead):
		return ctarget.ClassDead
	case a >= int(fgraph.AddrOps) && a < int(fgraph.AddrOps)+fgraph.MaxOps*fgraph.OpsWords:
		if (a-int(fgraph.AddrOps))%fgraph.OpsWords == fgraph.OpsIdx {
			return ctarget.ClassOpsIdx
		}
		return ctarget.ClassOther
	}
	off := a - int(in.m.TaskBase(0))
	if off < 0 || in.stride == 0 {
		return ctarget.ClassOther
	}
	switch off % in.stride {
	case fgraph.TaskCurr:
		return ctarget.ClassCurr
	case fgraph.TaskDepth:
		return ctarget.ClassDepth
	case fgraph.TaskRetStack:
		return ctarget.ClassRetStack
	case fgraph.TaskOverrun:
		return ctarget.ClassOverrun
	}
	if off%in.stride >= fgraph.TaskWords {
		return ctarget.ClassWord
	}
	return ctarget.ClassOther
}

// site names the access at pc (a return address into the object).
func (in *Instance) site(pc unsafe.Pointer, port int, store, once bool, fence int) fgraph.Site {
	rel := uint64(uintptr(pc)) - in.base
	e := ctarget.EntryNone
	w3, w2 := false, false
	if n := len(in.entries); n > 0 {
		e, w3, w2 = in.entries[n-1], in.afterW3[n-1], in.afterW2[n-1]
	}
	cls := ctarget.ClassOther
	if port >= 0 {
		cls = in.classOf(port)
	}
	key := rel<<16 | uint64(e)<<10 | uint64(cls)<<4 | b2u(store)<<3 | b2u(once)<<2 | b2u(w3)<<1 | b2u(w2)
	if fence >= 0 {
		key |= uint64(fence+1) << 60
	}
	if s, ok := in.sites[key]; ok {
		return s
	}
	line := in.lines.Line(rel)
	a := ctarget.Access{Entry: e, Func: in.lines.Func(line), Line: line, Text: in.lines.Text(line),
		Class: cls, Store: store, Once: once, Fence: fence, AfterW3: w3, AfterW2: w2}
	s := ctarget.Classify(a)
	if s == fgraph.SiteCOther {
		in.Unmapped[line]++
		if in.Trace != nil {
			in.Trace(a)
		}
	}
	in.sites[key] = s
	return s
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Line is the fgraph.c line of the code at pc.
func (in *Instance) line(pc unsafe.Pointer) int {
	return in.lines.Line(uint64(uintptr(pc)) - in.base)
}

func kindOf(flags C.int) fgraph.Kind {
	switch {
	case flags&C.FGC_ATOMIC != 0:
		return fgraph.Atomic
	case flags&C.FGC_ONCE != 0:
		return fgraph.Once
	}
	return fgraph.Plain
}

//export fgcGoLoad
func fgcGoLoad(port, flags C.int, pc unsafe.Pointer) {
	in := active
	if in.resetting {
		return
	}
	in.fold()
	s := in.site(pc, int(port), false, flags&C.FGC_ONCE != 0, -1)
	if h := in.m.Hooks(); h != nil {
		h.Load(s, fgraph.Addr(port), kindOf(flags))
	}
}

//export fgcGoStore
func fgcGoStore(port C.int, val C.ulong, flags C.int, pc unsafe.Pointer) {
	in := active
	if in.resetting {
		return
	}
	in.fold()
	v := in.fromC(val)
	if in.classOf(int(port)) != ctarget.ClassWord {
		v = fgraph.Word(val)
	}
	s := in.site(pc, int(port), true, flags&C.FGC_ONCE != 0, -1)
	in.lastPC = pc
	if in.storeLines != nil {
		line := in.line(pc)
		if _, seen := in.storeLines[line]; !seen {
			if f := in.lines.Func(line); covered[f] {
				in.storeLines[line] = f
			}
		}
	}
	if n := len(in.entries); n > 0 {
		switch s {
		case fgraph.SitePushW3:
			in.afterW3[n-1] = true
		case fgraph.SiteReserveW2:
			in.afterW2[n-1] = true
		}
	}
	if h := in.m.Hooks(); h != nil {
		in.inStore++
		h.Store(s, fgraph.Addr(port), v, kindOf(flags))
		in.inStore--
	} else {
		in.m.Mem[port] = v
	}
	if v != 0 && in.classOf(int(port)) == ctarget.ClassRetStack {
		in.resync(int(port))
	}
}

//export fgcGoAtomic
func fgcGoAtomic(port C.int, val C.ulong, op C.int, pc unsafe.Pointer) {
	in := active
	if in.resetting {
		return
	}
	in.fold()
	s := in.site(pc, int(port), true, true, -1)
	in.lastPC = pc
	in.inStore++
	defer func() { in.inStore-- }()
	h := in.m.Hooks()
	switch {
	case h == nil:
		in.m.Mem[port] = fgraph.Word(val)
	case op == C.FGC_ATOMIC_ADD:
		h.AtomicAdd(s, fgraph.Addr(port), 1)
	default:
		h.Store(s, fgraph.Addr(port), fgraph.Word(val), fgraph.Atomic)
	}
}

//export fgcGoFence
func fgcGoFence(kind C.int, pc unsafe.Pointer) {
	in := active
	if in.resetting {
		return
	}
	in.fold()
	s := in.site(pc, -1, false, false, int(kind))
	if h := in.m.Hooks(); h != nil {
		f := fgraph.Barrier
		switch kind {
		case C.FGC_FENCE_RMB:
			f = fgraph.SmpRmb
		case C.FGC_FENCE_WMB:
			f = fgraph.SmpWmb
		case C.FGC_FENCE_CALL_IN:
			f = fgraph.CallIn
		case C.FGC_FENCE_CALL_OUT:
			f = fgraph.CallOut
		}
		h.Fence(s, f)
	}
}

//export fgcGoBad
func fgcGoBad(addr C.ulong, size, flags C.int, pc unsafe.Pointer) {
	in := active
	if in.resetting {
		return
	}
	in.fold()
	what := "load"
	if flags&C.FGC_STORE != 0 {
		what = "store"
	}
	if flags&C.FGC_FREE != 0 {
		what = "kfree"
	}
	s := in.site(pc, -1, flags&C.FGC_STORE != 0, false, -1)
	in.m.Crash(s, fmt.Sprintf("out-of-range %s of %d bytes at %#x (fgraph.c:%d)", what, int(size), uint64(addr), in.line(pc)))
}

//export fgcGoWarn
func fgcGoWarn(line C.int, cond *C.char, pc unsafe.Pointer) {
	in := active
	if in.resetting {
		return
	}
	in.fold()
	s := in.site(pc, -1, false, false, -1)
	in.m.Warn(s, fmt.Sprintf("WARN at fgraph.c:%d: %s", int(line), C.GoString(cond)))
}

//export fgcGoBug
func fgcGoBug(line C.int, pc unsafe.Pointer) {
	in := active
	in.m.Crash(fgraph.SiteCOther, fmt.Sprintf("BUG() at fgraph.c:%d", int(line)))
	panic(CrashError{fmt.Sprintf("BUG() at fgraph.c:%d", int(line))})
}

// CrashError is a crash of the compiled code that cannot return to it.
type CrashError struct{ Msg string }

func (e CrashError) Error() string { return e.Msg }

//export fgcGoClock
func fgcGoClock() C.ulonglong {
	v := active.m.TraceClock() // digested there, for either core (fgraph.Digester)
	return C.ulonglong(v)
}

//export fgcGoOpsTest
func fgcGoOpsTest(user C.int, ip C.ulong, pc unsafe.Pointer) C.int {
	ok := active.m.OpsTest(int(user), fgraph.Word(ip))
	active.answer(2 | b2u(ok))
	if ok {
		return 1
	}
	return 0
}

//export fgcGoSubops
func fgcGoSubops(user, startup, after C.int) {
	in := active
	if in.resetting || after == 0 {
		return
	}
	in.fold()
	// ftrace_startup_subops() made the ops' hash live; shutdown retired it.
	v := fgraph.Word(0)
	s := fgraph.SiteUnregisterFinish
	if startup != 0 {
		v, s = 1, fgraph.SiteRegisterFinish
	}
	a := fgraph.AddrOps + fgraph.Addr(int(user)*fgraph.OpsWords+fgraph.OpsReady)
	if h := in.m.Hooks(); h != nil {
		h.Store(s, a, v, fgraph.Plain)
	} else {
		in.m.Mem[a] = v
	}
}

//export fgcGoEntry
func fgcGoEntry(user C.int, fn C.ulong, depth C.int, gops C.ulong, pc unsafe.Pointer) C.int {
	in := active
	in.fold()
	m := in.m
	tr := &fgraph.Trace{Func: fgraph.Word(fn), Depth: int(depth), Retp: m.CurrentRetp()}
	h := m.Hooks()
	if h != nil {
		h.Fence(fgraph.SiteEnterCall, fgraph.CallIn)
	}
	ok := m.UserEntry(int(user), fgraph.Word(gops), tr)
	if h != nil {
		h.Fence(fgraph.SiteEnterCallRet, fgraph.CallOut)
	}
	in.resume()
	in.answer(4 | b2u(ok))
	if ok {
		return 1
	}
	return 0
}

//export fgcGoRet
func fgcGoRet(user C.int, fn C.ulong, depth C.int, gops C.ulong, pc unsafe.Pointer) {
	in := active
	in.fold()
	m := in.m
	tr := &fgraph.Trace{Func: fgraph.Word(fn), Depth: int(depth)}
	h := m.Hooks()
	if h != nil {
		h.Fence(fgraph.SiteRetCall, fgraph.CallIn)
	}
	m.UserReturn(int(user), fgraph.Word(gops), tr)
	if h != nil {
		h.Fence(fgraph.SiteRetCallRet, fgraph.CallOut)
	}
	in.resume()
}

// covered are the functions whose store lines the line coverage reports:
// push, set_bitmap, reserve and pop.
var covered = map[string]bool{"ftrace_push_return_trace": true, "set_bitmap": true, "fgraph_reserve_data": true,
	"ftrace_pop_return_trace": true, "__ftrace_return_to_handler": true, "function_graph_enter": true}
