//go:build linux && !race

package harness

import "golang.org/x/sys/unix"

// TablesOffHeap reports whether the state cache's large arrays live apart
// from the Go heap (bigmem.go), which then holds little of a run's memory.
const TablesOffHeap = true

// mapBig maps size bytes of zeroed anonymous memory and asks for huge
// pages (madvise(MADV_HUGEPAGE): honoured when transparent_hugepage is
// "always" or "madvise", ignored when "never"); nil if the map fails.
func mapBig(size int) []byte {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: an error leaves small pages
	return b
}

func unmapBig(b []byte) {
	if err := unix.Munmap(b); err != nil {
		internalf("cache: unmapping a table: %v", err)
	}
}

// dropBig gives b's pages back and keeps the mapping: it reads as zeros
// from then on (madvise(MADV_DONTNEED) on private anonymous memory).
func dropBig(b []byte) {
	if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
		internalf("cache: giving back a retired table: %v", err)
	}
}

// populate faults in b's pages for writing without writing them
// (madvise(MADV_POPULATE_WRITE), Linux 5.14): a page already there is
// left as it is, a missing one is mapped zeroed, as a first write would
// map it. An older kernel answers EINVAL.
func populate(b []byte) error {
	return unix.Madvise(b, unix.MADV_POPULATE_WRITE)
}
