package harness

import "github.com/fgcheck/fgcheck/fgraph"

// After a run stopped (a cache hit, mostly) the code under test still runs
// on to the end of its op: the port calls the hooks synchronously and the
// harness has no way to unwind its Go frames short of a panic, which cost
// more than the accesses it saved (docs/state-cache.md, "ending a run at
// the hit"). Nothing of that rest of the op is part of the run: no choice
// point, no check, no coverage, no digest. So the hooks take the short
// way: the code sees its own stores in program order, as on one CPU with
// no interrupt, and nothing else happens. The step budget still counts,
// so code that loops after the stop still ends.
//
// Not with a trace or an observer (they show what the code did after the
// stop, as before), nor on a compiled target (its hooks carry its lines).

// afterStop reports whether the hooks take the short way.
func (r *runner) afterStop() bool { return r.stopped && r.short }

// stoppedLoad is Load after the stop: the context's own pending store to
// a, else memory.
func (r *runner) stoppedLoad(a fgraph.Addr) fgraph.Word {
	r.step()
	if r.direct > 0 || len(r.ctxs) == 0 {
		return r.m.Mem[a]
	}
	return r.sees(r.top(), a)
}

// stoppedStore is Store after the stop: straight to memory, unless the
// context still holds stores from before the stop, which must stay before
// it (a later load would forward the older one).
func (r *runner) stoppedStore(a fgraph.Addr, v fgraph.Word) {
	r.step()
	if r.direct > 0 || len(r.ctxs) == 0 {
		r.poke(a, v)
		return
	}
	if c := r.top(); len(c.buf) > 0 {
		c.buf = append(c.buf, pending{addr: a, val: v})
		return
	}
	r.poke(a, v)
}

// stoppedFence is Fence after the stop: the context's pending stores go
// to memory in program order.
func (r *runner) stoppedFence() {
	if r.direct > 0 || len(r.ctxs) == 0 {
		return
	}
	c := r.top()
	for _, st := range c.buf {
		r.poke(st.addr, st.val)
	}
	c.buf = c.buf[:0]
}

// stoppedAdd is AtomicAdd after the stop: the pending stores first, then
// the add in memory.
func (r *runner) stoppedAdd(a fgraph.Addr, d int64) fgraph.Word {
	r.step()
	r.stoppedFence()
	r.poke(a, r.m.Mem[a]+fgraph.Word(d))
	return r.m.Mem[a]
}
