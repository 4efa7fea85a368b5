//go:build !linux

package harness

// TablesOffHeap reports whether the state cache's large arrays live apart
// from the Go heap (bigmem.go): not off Linux.
const TablesOffHeap = false

// mapBig leaves the arrays to the Go heap off Linux.
func mapBig(size int) []byte { return nil }

func unmapBig(b []byte) {}

func dropBig(b []byte) {}
