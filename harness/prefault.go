package harness

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// The tables' pages faulted in on an idle core.
//
// On the project's VMs the first write to a page of memory is dear, and
// dearest for the huge pages the state tables ask for (bigmem.go): the
// kernel finds a free 2 MiB page, compacting memory when it has none, and
// zeroes it, there and then, on the thread that wrote. A throwaway program
// that wrote a byte of each page of a fresh MADV_HUGEPAGE mapping of 64
// MiB took 105 ms in one run and 10 ms in the next (7 Dec 2026); small
// pages took 23-28 ms both times. On peer-spin K=3 with one worker, 8.4 %
// of the CPU samples were the kernel's clear_page_erms under the tables'
// stores (perf record), and the process used 1.08 s of CPU in 1.20 s:
// the worker waited for its pages while the other core sat idle.
//
// So every array mapped apart from the heap is handed to its table at
// once, and one goroutine of the process, the prefaulter, faults its
// pages in from the first on, a huge page at a time, with
// madvise(MADV_POPULATE_WRITE), while the worker goes on. A page the
// table writes before the prefaulter gets there is faulted in by that
// write, as before, and left alone by the prefaulter. Since a doubling's
// rehash writes every page of a fresh array at once, and a new chunk is
// written from its first page on, those arrays are mapped ahead (aheadOf,
// chunked.ahead), for the prefaulter to fault in before they are needed.
// With both, the worker's share of clear_page_erms fell to 1.5 %.
//
// Nothing the exploration reads depends on it: populating writes nothing
// (the pages read as zeros until the table writes them, as they would
// anyway), so the same schedule gives the same bytes whichever thread
// faulted a page in; this is why a goroutine is allowed here, beside the
// harness's deterministic core. What it changes is when the pages become
// resident: peak RSS counts an array's whole mapping, a chunk's tail the
// table never reached included, and an array mapped ahead that the run
// ends before using.
//
// It pays only where a core is idle: on peer-spin K=3, two workers on the
// two cores ran no faster with it (ten alternating pairs, medians 0.778 s
// against 0.767 s), since the prefaulter then takes its time from one of
// them. So Explore turns it on for the tables of an exploration with
// fewer workers than GOMAXPROCS (prefaultFor), and off for the others.
//
// An array given back (freeOf, retireOf, release) is marked gone first.
// The prefaulter looks at the mark before each huge page, holding the
// mapping's lock, which the one giving the array back then takes once
// (mapping.end): no page of it is faulted in after that, so a retired
// array's pages, given back with MADV_DONTNEED, stay given back, and a
// range unmapped and mapped again for something else is never touched.
//
// A kernel without MADV_POPULATE_WRITE (before 5.14) answers EINVAL: the
// first error turns the prefaulter off, and the tables fault their pages
// in themselves.

// mapping is an array mapped apart from the heap (allocOf).
type mapping struct {
	b    []byte
	gone atomic.Bool
	mu   sync.Mutex // held by the prefaulter while it faults in a huge page
}

// end marks m gone and waits for a huge page the prefaulter may be
// faulting in: from its return, nothing touches m's pages but its owner.
func (m *mapping) end() {
	m.gone.Store(true)
	m.mu.Lock() // (an empty critical section: the wait is the point)
	m.mu.Unlock()
}

// prefaultQueue is how many arrays wait for the prefaulter at most; an
// array that finds the queue full is faulted in by its table's writes.
const prefaultQueue = 256

var prefaulter struct {
	once   sync.Once
	ch     chan prefaultReq
	off    atomic.Bool  // an error: the kernel cannot populate
	queued atomic.Int64 // arrays queued so far (tests)
}

// prefaultReq is an array to fault in, or, with done set, a flush.
type prefaultReq struct {
	m    *mapping
	done chan struct{}
}

// populateHook, when set, faults a huge page's worth in instead of
// populate (tests).
var populateHook atomic.Pointer[func(m *mapping, b []byte) error]

var errNoPopulate = errors.New("harness: no array is mapped apart from the heap")

// prefaultFor reports whether the tables of an exploration with this many
// workers are to be faulted in by the prefaulter: while a core is idle.
func prefaultFor(workers int) bool {
	return workers < runtime.GOMAXPROCS(0)
}

// prefault queues m for the prefaulter, started at the first array.
func prefault(m *mapping) {
	if prefaulter.off.Load() {
		return
	}
	prefaulter.once.Do(func() {
		prefaulter.ch = make(chan prefaultReq, prefaultQueue)
		go prefaultLoop(prefaulter.ch)
	})
	select {
	case prefaulter.ch <- prefaultReq{m: m}:
		prefaulter.queued.Add(1)
	default:
	}
}

func prefaultLoop(ch <-chan prefaultReq) {
	for req := range ch {
		if req.done != nil {
			close(req.done)
			continue
		}
		m := req.m
		for off := 0; off < len(m.b) && prefaultPage(m, off); off += hugePage {
		}
	}
}

// prefaultPage faults in the huge page of m at off, unless m is gone; it
// reports whether the prefaulter is to go on with m.
func prefaultPage(m *mapping, off int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone.Load() || prefaulter.off.Load() {
		return false
	}
	b := m.b[off:min(off+hugePage, len(m.b))]
	var err error
	if h := populateHook.Load(); h != nil {
		err = (*h)(m, b)
	} else {
		err = populate(b)
	}
	if err != nil {
		prefaulter.off.Store(true)
		return false
	}
	return true
}

// prefaultFlush returns once the prefaulter has handled every array
// queued before the call (tests).
func prefaultFlush() {
	if prefaulter.ch == nil {
		return
	}
	done := make(chan struct{})
	prefaulter.ch <- prefaultReq{done: done}
	<-done
}
