//go:build linux && !race

package harness

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fgcheck/fgcheck/fgraph"
)

// resident is how many of b's 4 KiB pages are in memory (mincore).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+4095)/4096)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// mappingOf is the mapping allocOf made for s.
func mappingOf[T any](t *testing.T, a *arena, s []T) *mapping {
	t.Helper()
	m := a.maps[unsafe.Pointer(unsafe.SliceData(s))]
	if m == nil {
		t.Fatalf("an array of %d bytes was not mapped apart from the heap", len(s)*int(unsafe.Sizeof(s[0])))
	}
	return m
}

// An array mapped apart from the heap is faulted in whole by the
// prefaulter, with nothing written to it; with the prefaulter off, none of
// it is until the table writes it.
func TestPrefaultFaultsIn(t *testing.T) {
	var a arena
	defer a.release()
	cold := allocOf[uint64](&a, 4<<20/8)
	a.prefault = true
	warm := allocOf[uint64](&a, 4<<20/8)
	prefaultFlush()
	if prefaulter.off.Load() {
		t.Skip("the kernel cannot populate (madvise MADV_POPULATE_WRITE, Linux 5.14): the tables fault their pages in themselves")
	}
	cm, wm := mappingOf(t, &a, cold), mappingOf(t, &a, warm)
	if n := resident(t, cm.b); n != 0 {
		t.Errorf("%d pages of an array left to its table are resident before it wrote any", n)
	}
	if n, all := resident(t, wm.b), len(wm.b)/4096; n != all {
		t.Errorf("%d of %d pages of a prefaulted array are resident", n, all)
	}
	for i, v := range warm[:cap(warm)] {
		if v != 0 {
			t.Fatalf("word %d of a prefaulted array is %#x, want 0", i, v)
		}
	}
}

// An array given back while the prefaulter faults it in: the prefaulter
// finishes the huge page it is at, and touches none after. (Without the
// mark that end sets, or without the check of it under the mapping's lock,
// the prefaulter goes on through the array's other huge pages.)
func TestPrefaultStopsAtEnd(t *testing.T) {
	for _, give := range []struct {
		name string
		back func(a *arena, s []uint64)
	}{
		{"freed", func(a *arena, s []uint64) { freeOf(a, s) }},
		{"retired", func(a *arena, s []uint64) { retireOf(a, s) }},
		{"released", func(a *arena, s []uint64) { a.release() }},
	} {
		t.Run(give.name, func(t *testing.T) {
			var a arena // not prefaulted: queued below, with the hook in place
			defer a.release()
			s := allocOf[uint64](&a, 8<<20/8)
			m := mappingOf(t, &a, s)
			var calls atomic.Int32
			started, proceed := make(chan struct{}), make(chan struct{})
			hook := func(hm *mapping, b []byte) error {
				if hm != m {
					return populate(b) // another test's array
				}
				if calls.Add(1) == 1 {
					close(started)
					<-proceed
				}
				return populate(b)
			}
			populateHook.Store(&hook)
			defer populateHook.Store(nil)
			prefault(m)
			select {
			case <-started:
			case <-time.After(time.Minute):
				t.Fatal("the prefaulter did not reach the array in a minute")
			}
			done := make(chan struct{})
			go func() {
				give.back(&a, s)
				close(done)
			}()
			for !m.gone.Load() {
				runtime.Gosched()
			}
			close(proceed)
			<-done
			prefaultFlush()
			if prefaulter.off.Load() {
				t.Skip("the kernel cannot populate")
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("the prefaulter faulted in %d huge pages of an array of %d, given back during the first; want that one only", n, len(m.b)/hugePage)
			}
		})
	}
}

// An exploration's tables are queued for the prefaulter while a core is
// idle (fewer workers than GOMAXPROCS), and not with a worker on every
// core, where it would take its time from one of them. (Queued, not
// faulted in: the exploration may give its arrays back before the
// prefaulter reaches them.)
func TestExplorePrefaultsWithAnIdleCore(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("one core: no worker count leaves one idle")
	}
	for _, tc := range []struct {
		workers int
		want    bool
	}{
		{1, true},
		{procs, false},
	} {
		prefaultFlush() // room in the queue
		if prefaulter.off.Load() {
			t.Skip("the kernel cannot populate")
		}
		before := prefaulter.queued.Load()
		sum, err := Explore(Standard(fgraph.Latest), ExploreOptions{Cache: true, MergeRemotes: true, Workers: tc.workers})
		if err != nil || !sum.Complete {
			t.Fatalf("%d workers: %v (complete %v)", tc.workers, err, sum != nil && sum.Complete)
		}
		n := prefaulter.queued.Load() - before
		if got := n > 0; got != tc.want {
			t.Errorf("%d workers of %d cores: %d arrays queued for the prefaulter, want some: %v", tc.workers, procs, n, tc.want)
		}
	}
}
