package harness

import (
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// After a run stopped, the hooks give the code its own stores in program
// order: the stores it buffered before the stop stay before the later
// ones, a fence writes them all, and every access still counts against
// the step budget. With a trace the hooks do what they did before the
// stop (the trace shows it).
func TestHooksAfterStop(t *testing.T) {
	r, err := newRunner(Standard(fgraph.Latest))
	if err != nil {
		t.Fatal(err)
	}
	a, b := fgraph.Addr(len(r.m.Mem)-1), fgraph.Addr(len(r.m.Mem)-2)
	fresh := func(short bool, buf ...pending) *ctx {
		r.m.Mem[a], r.m.Mem[b] = 0, 0
		c := r.newCtx()
		c.buf = append(c.buf[:0], buf...)
		r.ctxs = []*ctx{c}
		r.stopped, r.short, r.budget = true, short, 1000
		r.setSteps(0)
		return c
	}
	s := fgraph.SiteOpStart
	for _, tc := range []struct {
		name, why string
		buf       []pending // stored before the stop, not yet committed
		do        func() fgraph.Word
		ret       fgraph.Word // what do returns
		memA      fgraph.Word // memory at a after do
		left      int         // stores still buffered after do
		steps     int64
	}{
		{"store to memory", "nothing buffered: the store is the code's last word on a",
			nil, func() fgraph.Word { r.Store(s, a, 5, fgraph.Plain); return r.Load(s, a, fgraph.Plain) }, 5, 5, 0, 2},
		{"store after a buffered one", "a later load must not forward the older buffered store",
			[]pending{{addr: a, val: 1}}, func() fgraph.Word { r.Store(s, a, 2, fgraph.Plain); return r.Load(s, a, fgraph.Plain) }, 2, 0, 2, 2},
		{"fence", "the buffered stores go to memory in program order",
			[]pending{{addr: a, val: 1}, {addr: a, val: 3}}, func() fgraph.Word { r.Fence(s, fgraph.SmpWmb); return r.m.Mem[a] }, 3, 3, 0, 0},
		{"atomic add", "it reads the code's own last store and writes memory",
			[]pending{{addr: a, val: 7}}, func() fgraph.Word { return r.AtomicAdd(s, a, 3) }, 10, 10, 0, 1},
		{"reread", "the compiler may keep the value: nothing else runs",
			nil, func() fgraph.Word { r.m.Mem[a] = 9; return r.Reread(s, a, 4) }, 4, 9, 0, 0},
		{"load of another word", "a pending store to a does not forward to b",
			[]pending{{addr: a, val: 1}}, func() fgraph.Word { r.m.Mem[b] = 6; return r.Load(s, b, fgraph.Plain) }, 6, 0, 1, 1},
	} {
		c := fresh(true, tc.buf...)
		got := tc.do()
		if got != tc.ret || r.m.Mem[a] != tc.memA || len(c.buf) != tc.left || r.steps != tc.steps {
			t.Errorf("%s (%s): got %d, memory %d, %d buffered, %d steps; want %d, %d, %d, %d",
				tc.name, tc.why, got, r.m.Mem[a], len(c.buf), r.steps, tc.ret, tc.memA, tc.left, tc.steps)
		}
	}

	// Without the short way (a trace) a store is buffered as before.
	c := fresh(false)
	r.Store(s, a, 5, fgraph.Plain)
	if r.m.Mem[a] != 0 || len(c.buf) != 1 {
		t.Errorf("not short: memory %d, %d buffered; want the store buffered", r.m.Mem[a], len(c.buf))
	}

	// The budget still ends code that loops after the stop.
	fresh(true)
	r.budget, r.nextLook = 10, 0 // look at the next access with the new budget
	r.res = r.pool.get()
	loads := 0
	func() {
		defer func() { recover() }()
		for ; loads < 100; loads++ {
			r.Load(s, a, fgraph.Plain)
		}
	}()
	if loads != 10 || len(r.res.Violations) != 1 {
		t.Errorf("%d loads after the stop with a budget of 10, violations %v; want the 11th to end the run", loads, r.res.Violations)
	}
	r.ctxs = nil
}
