package harness

import (
	"fmt"
	"math/bits"

	"github.com/fgcheck/fgcheck/fgraph"
)

// The stores of a writer (remotes.go): which global words a remote
// unregister or tracer switch would write if it fired here, so that a run
// that goes on past a set's first placement knows, at each later offer
// point, whether the load between may have read what the writer wrote.
//
// A wide writer (an unregister or a tracer switch: the begin of
// unregister_ftrace_graph(), whose tail runs at a quiescent point, after
// the segment) reads and writes global words only, and reads no other
// state but its user's registration (fgraph: unregisterBegin,
// fgraphLRUReleaseIndex). Its stores are then a function of the global
// words it loads and that flag, which a segment does not change: a dry
// run on the machine (its state saved and put back) finds them once per
// distinct values of those words, kept in the runner's table (wsTab). A
// dry run that
// touches a word outside the global ones counts as writing every word
// (the placements then merge as before). The representative checks that
// the writer's real stores are the dry run's (remFiredCheck): an internal
// error otherwise.

// globalWords are the words yieldLoad calls global (fgraph's globals and
// the users' ops words): the remote actions' offer points are the loads
// of them.
const globalWords = int(fgraph.AddrOps) + fgraph.MaxOps*fgraph.OpsWords

// maxWide is the most remote actions a scenario may have for the writers'
// rules (bits of a uint32 mask): a writer listed after the 32nd is merged
// with no later placement (each its own run: sound, no scenario has so
// many).
const maxWide = 32

// wsSet is a set of global words, a bit each.
type wsSet [2]uint64

func (w *wsSet) add(a fgraph.Addr) {
	if int(a) >= globalWords {
		w[0], w[1] = ^uint64(0), ^uint64(0)
		return
	}
	w[a/64] |= 1 << (a % 64)
}

func (w *wsSet) has(a fgraph.Addr) bool { return int(a) >= globalWords || w[a/64]>>(a%64)&1 != 0 }

func (w wsSet) String() string {
	var out []string
	for a := fgraph.Addr(0); int(a) < globalWords; a++ {
		if w.has(a) {
			out = append(out, fmt.Sprint(a))
		}
	}
	return fmt.Sprint(out)
}

// wsEntry is the stores of the wide writers for the memory that gives
// their dry runs' loads the same values: a writer's begin is a function of
// the words it loads (in order: the same values make it load the same
// words next) and of its user's registration.
type wsEntry struct {
	reg   uint32   // bit i: wide writer i's user is registered
	reads []wsRead // the words the dry runs loaded before storing them
	ws    [maxWide]wsSet
}

// wsRead is a word a dry run loaded, and its value.
type wsRead struct {
	a fgraph.Addr
	v fgraph.Word
}

// matches reports whether e holds for m's memory and registrations reg.
func (e *wsEntry) matches(m *fgraph.Machine, reg uint32) bool {
	if e.reg != reg {
		return false
	}
	for _, x := range e.reads {
		if m.Mem[x.a] != x.v {
			return false
		}
	}
	return true
}

// remWidths sets the masks of the scenario's writers: every writer, and
// the wide ones.
func (r *runner) remWidths() {
	r.remWriters, r.remWide = 0, 0
	for i, rem := range r.sc.Remotes {
		if i >= maxWide || rem.Kind == RemoteUnwind {
			continue
		}
		r.remWriters |= 1 << i
		if (rem.Kind == RemoteUnregister || rem.Kind == RemoteReplace) && !r.hk.remNarrow {
			r.remWide |= 1 << i
		}
	}
}

// writerStores makes c.wsIdx the entry of wsTab for the memory of c's
// segment (once per segment).
func (r *runner) writerStores(c *ctx) {
	if c.wsOK {
		return
	}
	m := r.m
	var reg uint32
	for w := r.remWide; w != 0; w &= w - 1 {
		i := bits.TrailingZeros32(w)
		if r.ops[r.sc.Remotes[i].User].Registered() {
			reg |= 1 << i
		}
	}
	idx := -1
	if n := r.wsLast; n < len(r.wsTab) && r.wsTab[n].matches(m, reg) {
		idx = n
	} else {
		for n := range r.wsTab {
			if r.wsTab[n].matches(m, reg) {
				idx = n
				break
			}
		}
	}
	if idx < 0 {
		e := wsEntry{reg: reg}
		for w := r.remWide; w != 0; w &= w - 1 {
			i := bits.TrailingZeros32(w)
			e.ws[i] = r.dryStores(i, &e.reads)
		}
		idx = len(r.wsTab)
		r.wsTab = append(r.wsTab, e)
	}
	r.wsLast = idx
	c.wsOK, c.wsIdx = true, int32(idx)
}

// dryStores runs the begin of wide writer i on the machine with a
// recorder for hooks, adds the words it loaded to reads, and puts the
// machine back.
func (r *runner) dryStores(i int, reads *[]wsRead) wsSet {
	m := r.m
	o := r.ops[r.sc.Remotes[i].User]
	if !o.Registered() {
		return wsSet{} // remoteUnregister does nothing
	}
	m.SaveState(&r.wsSave)
	h := m.Hooks()
	rec := wsRecorder{m: m, reads: *reads}
	m.SetHooks(&rec)
	m.UnregisterBegin(o)
	m.SetHooks(h)
	m.RestoreState(&r.wsSave)
	*reads = rec.reads
	if a := r.hk.wsDrop - 1; a >= 0 && a < globalWords {
		rec.ws[a/64] &^= 1 << (a % 64)
	}
	return rec.ws
}

// wsRecorder is the hooks of a dry run: a remote CPU's accesses (as
// runner's direct ones). It notes the words stored, and the words loaded
// before any store to them with their values; a load of a word outside the
// global ones makes the set every word.
type wsRecorder struct {
	m     *fgraph.Machine
	ws    wsSet
	reads []wsRead
}

func (h *wsRecorder) load(a fgraph.Addr) fgraph.Word {
	v := h.m.Mem[a]
	if int(a) >= globalWords {
		h.ws.add(a)
	} else if !h.ws.has(a) {
		h.reads = append(h.reads, wsRead{a, v})
	}
	return v
}

func (h *wsRecorder) Load(s fgraph.Site, a fgraph.Addr, k fgraph.Kind) fgraph.Word {
	return h.load(a)
}

func (h *wsRecorder) Store(s fgraph.Site, a fgraph.Addr, v fgraph.Word, k fgraph.Kind) {
	h.ws.add(a)
	h.m.Poke(a, v)
}

func (h *wsRecorder) AtomicAdd(s fgraph.Site, a fgraph.Addr, d int64) fgraph.Word {
	v := h.load(a) + fgraph.Word(d)
	h.ws.add(a)
	h.m.Poke(a, v)
	return v
}

func (h *wsRecorder) Fence(s fgraph.Site, f fgraph.Fence) {}

func (h *wsRecorder) Reread(s fgraph.Site, a fgraph.Addr, prev fgraph.Word) fgraph.Word {
	return h.load(a)
}
