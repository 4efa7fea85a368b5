package fgraph

import (
	"fmt"
	"strings"
	"testing"
)

// storeRec is one store the port made through the shim.
type storeRec struct {
	Site Site
	Addr Addr
	Val  Word
}

// recHooks is a transparent Hooks implementation: it performs every access
// on Machine.Mem exactly as the detached shim would, and records stores and
// visited sites so tests can assert which words were written.
type recHooks struct {
	m      *Machine
	stores []storeRec
	sites  map[Site]int
	// kinds is the access kind of the last load at each site.
	kinds map[Site]Kind
	// rereads counts Reread calls per site; rereadTo, if it has the
	// site, is the value the "second load" returns (a torn read).
	rereads  map[Site]int
	rereadTo map[Site]Word
}

func attachRec(m *Machine) *recHooks {
	h := &recHooks{m: m, sites: map[Site]int{}, kinds: map[Site]Kind{}, rereads: map[Site]int{}, rereadTo: map[Site]Word{}}
	m.SetHooks(h)
	return h
}

func (h *recHooks) Load(s Site, a Addr, k Kind) Word {
	h.sites[s]++
	h.kinds[s] = k
	return h.m.Mem[a]
}

func (h *recHooks) Store(s Site, a Addr, v Word, k Kind) {
	h.sites[s]++
	h.stores = append(h.stores, storeRec{s, a, v})
	h.m.Mem[a] = v
}

func (h *recHooks) AtomicAdd(s Site, a Addr, delta int64) Word {
	h.sites[s]++
	h.stores = append(h.stores, storeRec{s, a, h.m.Mem[a] + Word(delta)})
	h.m.Mem[a] += Word(delta)
	return h.m.Mem[a]
}

func (h *recHooks) Fence(s Site, f Fence) { h.sites[s]++ }

func (h *recHooks) Reread(s Site, a Addr, prev Word) Word {
	h.rereads[s]++
	if v, ok := h.rereadTo[s]; ok {
		return v
	}
	return prev
}

// taskWordStores returns the shadow-stack indices of task t written so far,
// with the site that wrote them.
func (h *recHooks) taskWordStores(t int) []storeRec {
	lo := h.m.WordAddr(t, 0)
	hi := h.m.WordAddr(t, h.m.cfg.StackWords)
	var out []storeRec
	for _, s := range h.stores {
		if s.Addr >= lo && s.Addr < hi {
			out = append(out, storeRec{s.Site, s.Addr - lo, s.Val})
		}
	}
	return out
}

// curr is task t's curr_ret_stack.
func curr(m *Machine, t int) int { return wordInt(m.Mem[m.TaskBase(t)+TaskCurr]) }

// depth is task t's curr_ret_depth.
func depth(m *Machine, t int) int { return wordInt(m.Mem[m.TaskBase(t)+TaskDepth]) }

// overrun is task t's trace_overrun.
func overrun(m *Machine, t int) int { return wordInt(m.Mem[m.TaskBase(t)+TaskOverrun]) }

// stackWord is task t's ret_stack[i].
func stackWord(m *Machine, t, i int) Word { return m.Mem[m.WordAddr(t, i)] }

// mustRegister registers o and fails the test unless it lands on index want
// (want < 0: any index).
func mustRegister(t testing.TB, m *Machine, o *Ops, want int) int {
	t.Helper()
	got := m.RegisterFtraceGraph(o)
	if got < 0 || (want >= 0 && got != want) {
		t.Fatalf("RegisterFtraceGraph(%s) = %d, want %d (warnings %v)", o.Name, got, want, m.Warnings)
	}
	return got
}

// hasWarning reports whether some warning message contains sub.
func hasWarning(m *Machine, sub string) bool {
	for _, w := range m.Warnings {
		if strings.Contains(w.Msg, sub) {
			return true
		}
	}
	return false
}

// records filters a log by kind and user (ops index; -2 means any).
func records(log []Record, kind RecordKind, ops int) []Record {
	var out []Record
	for _, r := range log {
		if r.Kind == kind && (ops == -2 || r.Ops == ops) {
			out = append(out, r)
		}
	}
	return out
}

// noPanic runs f and turns a Go panic into a test failure.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: Go panic: %v", what, r)
		}
	}()
	f()
}

func hexWords(ws []Word) string {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%#x", w)
	}
	return b.String()
}
