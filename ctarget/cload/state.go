//go:build cgo

package cload

/*
#include "fgc_abi.h"
*/
import "C"

import (
	"sort"
	"unsafe"

	"github.com/fgcheck/fgcheck/fgraph"
)

// The compiled code's state, for the explorer's visited-state cache
// (harness/state.go). The harness encodes what it can see of a run: the
// port's address space (Mem, which the runtime mirrors), the machine's
// bookkeeping, the model and every context with a digest of the inputs its
// code was given. What the compiled code keeps beyond that is
//
//   - its statics: fgraph.c's (graph_ops, fgraph_initialized, the other
//     fields of fgraph_array's ops, ...) and the runtime's (the tasks'
//     other fields, the kmalloc arena, the users' fgraph_ops): all in the
//     object's writable segment, which AppendState encodes word by word,
//     less the statics that are no state (fgc_segment: the step budget,
//     the stale copies of the last pending store and range);
//   - its locals, on the C stacks of the contexts in flight: a function of
//     the entry point and of everything its code read. The loads the
//     harness sees are in the contexts' digests already (runner.Load); the
//     loads of shared state it does not see (FGC_OTHER) the runtime digests
//     in fgc_other_in, which fold adds to the running context's digest at
//     every call into Go and at the end of every entry point, as are the
//     answers Go gives the C (ftrace_ops_test, an entry callback's verdict);
//   - the entry points in flight and their flags (Instance.entries, ...).
//
// The remote CPU's thread, blocked in ftrace_*_subops, is encoded as the
// port's deferred tails are: by which remote fired (the cache is off for
// E > 1).

// segment is the object's writable segment as the state encodes it.
type segment struct {
	words   []uint64 // the segment, word by word (C memory, read in place)
	keep    [][2]int // the word ranges of it that are state
	otherIn *C.ulong // fgc_other_in
	bytes   int      // the segment's exact size (fgc_save)
}

// StateDrop, in tests, leaves a part of the compiled code's state out (a
// deliberately incomplete definition, harness/cache_kernel_test.go):
// "statics" the writable segment, "unseen" the digest of the loads the
// harness does not see, "snap" the statics of a snap (RestoreCore does
// nothing).
var StateDrop string

// mapSegment finds the segment after fgc_init.
func (in *Instance) mapSegment() {
	s := in.segmentInfo()
	in.seg.words = unsafe.Slice((*uint64)(unsafe.Pointer(s.words)), int(s.nwords))
	var skip [][2]int
	for _, k := range s.skip {
		if k[1] > k[0] {
			skip = append(skip, [2]int{int(k[0]), int(k[1])})
		}
	}
	sort.Slice(skip, func(i, j int) bool { return skip[i][0] < skip[j][0] })
	in.seg.keep = in.seg.keep[:0]
	at := 0
	for _, k := range skip {
		if k[0] > at {
			in.seg.keep = append(in.seg.keep, [2]int{at, k[0]})
		}
		at = max(at, k[1])
	}
	if at < len(in.seg.words) {
		in.seg.keep = append(in.seg.keep, [2]int{at, len(in.seg.words)})
	}
	in.seg.otherIn = (*C.ulong)(unsafe.Pointer(s.other_in))
	in.seg.bytes = int(s.bytes)
}

// CanSave: the compiled code's state is all data between two entry points
// while the remote CPU's thread is idle (fgraph.SnapCore).
func (in *Instance) CanSave() bool {
	return len(in.entries) == 0 && in.seg.bytes > 0 && !in.remotePending()
}

// SaveCore appends a copy of the writable segment (every static of the
// object, the step budget included: it goes on from there).
func (in *Instance) SaveCore(dst []uint64) []uint64 {
	n := (in.seg.bytes + 7) / 8
	if n == 0 {
		return dst[:0] // not attached
	}
	if cap(dst) < n {
		dst = make([]uint64, n)
	}
	dst = dst[:n]
	in.saveSegment(dst)
	return dst
}

// RestoreCore puts a copy SaveCore made back.
func (in *Instance) RestoreCore(src []uint64) {
	if len(src)*8 < in.seg.bytes || in.seg.bytes == 0 {
		panic("cload: RestoreCore of a copy of another object, or before Attach")
	}
	if StateDrop == "snap" {
		return
	}
	in.restoreSegment(src)
	in.clearEntries()
}

// AppendState appends the compiled code's own state (fgraph.StateCore).
func (in *Instance) AppendState(dst []uint64) []uint64 {
	// The store being committed names its line (Kernel.Line) while
	// inStore > 0; lastPC is stale otherwise.
	pc := uint64(0)
	if in.inStore > 0 {
		pc = uint64(uintptr(in.lastPC))
	}
	dst = append(dst, uint64(len(in.entries)), uint64(in.inStore), pc)
	for i, e := range in.entries {
		dst = append(dst, uint64(e)<<3|b2u(in.afterW3[i])<<2|b2u(in.afterW2[i])<<1|b2u(in.quiet[i]))
	}
	if StateDrop == "statics" {
		return dst
	}
	for _, k := range in.seg.keep {
		dst = append(dst, in.seg.words[k[0]:k[1]]...)
	}
	return dst
}

// fold adds the digest of the loads the harness did not see (and of the
// answers Go gave the C since) to the running context's input digest.
func (in *Instance) fold() {
	if in.seg.otherIn == nil {
		return
	}
	v := uint64(*in.seg.otherIn)
	if v == 0 {
		return
	}
	*in.seg.otherIn = 0
	if d, ok := in.m.Hooks().(fgraph.Digester); ok && StateDrop != "unseen" {
		d.Digest(v)
	}
}

// answer digests a value Go gives the C (like a load it did not report).
func (in *Instance) answer(v uint64) {
	if in.seg.otherIn == nil {
		return
	}
	x := (uint64(*in.seg.otherIn) ^ v ^ 0xa5a5) * 0x9e3779b97f4a7c15
	*in.seg.otherIn = C.ulong(x ^ x>>29)
}
