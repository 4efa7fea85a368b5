//go:build !linux || race

package harness

// TablesOffHeap reports whether the state cache's large arrays live apart
// from the Go heap (bigmem.go): not off Linux, nor under the race detector,
// which sees neither the accesses to memory mapped apart from the heap nor
// the order that atomic operations there give (the workers publish the
// tables' entries by atomic stores into those arrays: TestSplitSharedConcurrent
// reported races on the heap data they order).
const TablesOffHeap = false

// mapBig leaves the arrays to the Go heap off Linux.
func mapBig(size int) []byte { return nil }

func unmapBig(b []byte) {}

func dropBig(b []byte) {}

// populate has nothing to fault in: no array is mapped apart.
func populate(b []byte) error { return errNoPopulate }
