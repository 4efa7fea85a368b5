package harness

import "unsafe"

// The state cache's tables are the run's only large allocations: on std at
// C=3 the two tables and their slab reach 181 MiB, and every doubling
// writes a fresh array. On the project's machine a first touch of a 4 KiB
// page cost 14 µs (a 128 MiB array took 0.41-0.47 s to touch; with
// transparent huge pages 8 ms), and 85 % of std C=3's 121 k page faults
// were the tables' (perf record -e page-faults). So arrays of at least
// bigMin bytes are mapped apart from the Go heap and advised to use huge
// pages where the system has them (bigmem_linux.go; the default
// transparent_hugepage setting of Debian, "madvise", gives them only to
// memory that asks). They hold no pointers, so the collector need not see
// them; the cache unmaps them when it grows or is released. Where a core
// is idle, the prefaulter faults them in there (prefault.go).
//
// A mapping is a whole number of huge pages (hugePage), so an array from
// bigMin up takes a huge page even when it is smaller: one fault of a
// zeroed 2 MiB page where 64-512 small pages would each fault (on
// peer-spin K=3, 10.9 k page faults in all with bigMin at 2 MiB, 5.3 k at
// 256 KiB: docs/state-cache.md, ninth session). The rest of
// the mapping is the slice's capacity, which a chunk that doubles in place
// (chunked.take) uses without moving. Smaller arrays stay on the heap,
// so that a small problem does not hold 2 MiB for each of its first
// arrays (a table starts at 64 KiB of slots and 16 KiB chunks).

// bigMin is the smallest array that is mapped on its own.
const bigMin = 256 << 10

// hugePage is the size mappings are rounded up to: the x86-64 huge page.
const hugePage = 2 << 20

// arena tracks the arrays a table mapped, to unmap them when released.
type arena struct {
	maps map[unsafe.Pointer]*mapping
	// prefault: the arrays mapped are faulted in by the prefaulter
	// (prefault.go), set where a core is idle (prefaultFor).
	prefault bool
}

// allocOf returns a zeroed slice of n Ts; T must hold no pointers. A
// mapped one has the capacity of its whole mapping, zeroed too.
func allocOf[T any](a *arena, n int) []T {
	var z T
	size := n * int(unsafe.Sizeof(z))
	if size < bigMin || n == 0 {
		return make([]T, n)
	}
	b := mapBig((size + hugePage - 1) &^ (hugePage - 1))
	if b == nil {
		return make([]T, n)
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if a.maps == nil {
		a.maps = map[unsafe.Pointer]*mapping{}
	}
	m := &mapping{b: b}
	a.maps[p] = m
	if a.prefault {
		prefault(m) // prefault.go: its pages faulted in on an idle core
	}
	return unsafe.Slice((*T)(p), len(b)/int(unsafe.Sizeof(z)))[:n]
}

// freeOf gives s back if allocOf mapped it (a heap slice is the
// collector's); s must not be used after.
func freeOf[T any](a *arena, s []T) {
	if len(s) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(s))
	if m, ok := a.maps[p]; ok {
		delete(a.maps, p)
		m.end()
		unmapBig(m.b)
	}
}

// retireOf gives back the pages of s if allocOf mapped it, and keeps the
// mapping until release: a worker may still be reading it without a lock
// (stateCache.getShared), and reads zeros there from now on. A heap slice
// is the collector's.
func retireOf[T any](a *arena, s []T) {
	if len(s) == 0 {
		return
	}
	if m, ok := a.maps[unsafe.Pointer(unsafe.SliceData(s))]; ok {
		m.end()
		dropBig(m.b)
	}
}

// release unmaps every array still mapped; nothing of them may be used
// after. The order is the map's, which nothing observes.
func (a *arena) release() {
	for p, m := range a.maps {
		delete(a.maps, p)
		m.end()
		unmapBig(m.b)
	}
}
