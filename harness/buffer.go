package harness

import (
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// The compiler store-buffer model (docs/compiler-model.md).
//
// A context's stores are buffered per barrier-delimited region and commit at
// the region's end in one of the orders the compiler may emit:
//   - two stores to the same address keep program order;
//   - ONCE (and atomic) stores keep program order among themselves; plain
//     stores may move across them;
//   - in the no-alias model (the default) plain stores to different
//     addresses may swap; in kbuild's model (Scenario.Alias, GCC and Clang
//     with -fno-strict-aliasing) a store to a ret_stack word keeps its
//     order against other word stores and task-field stores. The default
//     exploration judges both at once: a run that chose an order only the
//     no-alias model allows is marked (runner.aliasDep, noteAlias), and
//     the unmarked runs are exactly the runs of kbuild's model;
//   - a plain store overwritten later in the region may be dropped;
//   - stores of one site (one statement, a loop's iterations) keep program
//     order among themselves.
// One compiled binary has one order per static region (named by its first
// store's site), so a run picks the order at the region's first instance
// and applies it to every later instance.

// mustPrecede reports whether the store a must commit before b (a before b
// in program order) in the scenario's own model: the no-alias model, or
// kbuild's with Scenario.Alias.
func (r *runner) mustPrecede(a, b pending) bool {
	return r.precedes(a, b, r.sc.Alias)
}

// precedes is mustPrecede in kbuild's model (alias) or the no-alias one.
func (r *runner) precedes(a, b pending, alias bool) bool {
	if a.addr == b.addr {
		return true
	}
	if a.site == b.site {
		// One statement's stores (a loop's iterations: a user's payload
		// words) keep their order among themselves: a schedule file names
		// an order by sites, so it could not tell their permutations apart,
		// and no other context reads one of those words while the others
		// are pending (the frame is still in flight).
		return true
	}
	if a.kind != fgraph.Plain && b.kind != fgraph.Plain {
		return true
	}
	return alias && r.aliasKeeps(a, b)
}

// aliasKeeps reports whether alias analysis (-fno-strict-aliasing) keeps a
// before b: a store through the ret_stack pointer may alias any task field
// and any other word.
func (r *runner) aliasKeeps(a, b pending) bool {
	wa, ta := r.classify(a.addr)
	wb, tb := r.classify(b.addr)
	return (wa && (wb || tb)) || (wb && ta)
}

// classify says whether a is a shadow-stack word or a task field.
func (r *runner) classify(a fgraph.Addr) (word, field bool) {
	for t := range r.sc.Tasks {
		b := r.m.TaskBase(t)
		if a >= b && a < b+fgraph.TaskWords {
			return false, true
		}
		if a >= b+fgraph.TaskWords && a < b+fgraph.TaskWords+fgraph.Addr(r.cfg.StackWords) {
			return true, false
		}
	}
	return false, false
}

// dead reports which stores a later store to the same address overwrites
// in this region (plain stores only).
func dead(buf []pending) []bool {
	var d []bool
	for i := range buf {
		if buf[i].kind != fgraph.Plain {
			continue
		}
		for j := i + 1; j < len(buf); j++ {
			if buf[j].addr == buf[i].addr {
				if d == nil {
					d = make([]bool, len(buf))
				}
				d[i] = true
				break
			}
		}
	}
	return d
}

// extensions lists the legal commit orders of keep (indices into buf), in
// lexicographic order, so the program order comes first.
func (r *runner) extensions(buf []pending, keep []int, limit int) [][]int {
	var out [][]int
	used := make([]bool, len(keep))
	cur := make([]int, 0, len(keep))
	var rec func()
	rec = func() {
		if len(out) >= limit {
			return
		}
		if len(cur) == len(keep) {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for x, j := range keep {
			if used[x] {
				continue
			}
			ok := true
			for y := 0; y < x; y++ {
				if !used[y] && r.mustPrecede(buf[keep[y]], buf[j]) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			used[x] = true
			cur = append(cur, j)
			rec()
			cur = cur[:len(cur)-1]
			used[x] = false
		}
	}
	rec()
	return out
}

const maxOrders = 5040

// chosenOrders are the region orders a run has chosen, by region: the
// order every later instance follows (nil sites: program order) and the
// sites whose dead stores it drops. Arrays, not maps: regionOrder reads
// them at every commit and the state encodes them at every lookup (the two
// maps they replace were 5 % of peer-spin's profile).
type chosenOrders struct {
	has   [fgraph.NumSites]bool
	sites [fgraph.NumSites][]fgraph.Site
	drops [fgraph.NumSites][]fgraph.Site
	list  []fgraph.Site // the regions with has set, in the order chosen
}

// set records region's order and dropped sites (both nil: program order).
func (o *chosenOrders) set(region fgraph.Site, sites, drops []fgraph.Site) {
	if !o.has[region] {
		o.has[region] = true
		o.list = append(o.list, region)
	}
	o.sites[region], o.drops[region] = sites, drops
}

// reset forgets every order (the start of a run).
func (o *chosenOrders) reset() {
	for _, s := range o.list {
		o.has[s], o.sites[s], o.drops[s] = false, nil, nil
	}
	o.list = o.list[:0]
}

// keepProgramOrder records that region keeps its program order for the rest
// of the run.
func (r *runner) keepProgramOrder(region fgraph.Site) { r.orders.set(region, nil, nil) }

// regionOrder returns the commit order and the dropped stores of c's region.
func (r *runner) regionOrder(c *ctx, buf []pending) (order, drop []int) {
	n := len(buf)
	region := buf[0].site
	if r.orders.has[region] {
		sites, drops := r.orders.sites[region], r.orders.drops[region]
		if sites == nil && drops == nil {
			return r.identity(n), nil // program order, the common case
		}
		// A later instance: while every order the run chose is one
		// kbuild's compiler may emit, the ranking is applied under kbuild's
		// constraints too, so that the run is exactly the run of the
		// alias-aware model (explore --alias) with the same choices.
		return r.applyOrder(c, buf, sites, drops, r.sc.Alias || !r.aliasDep)
	}
	if n < 2 {
		return r.identity(1), nil
	}
	// Replay: the file names the order by sites.
	if r.rep != nil {
		if o := r.rep.orderFor(region); o != nil {
			r.orders.set(region, o.Sites, o.Drop)
			r.rUsed++
			r.addOrder(*o)
			order, drop := r.applyOrder(c, buf, o.Sites, o.Drop, r.sc.Alias)
			r.noteAlias(buf, order)
			if r.tr != nil {
				if e := r.tracef(c, TraceOrder, "%s order %s = %s", c.name, region, orderLabel(buf, Option{Order: order, Drop: drop})); e != nil {
					e.Site = region.String()
				}
			}
			return order, drop
		}
		r.keepProgramOrder(region)
		return r.identity(n), nil
	}
	if r.rUsed >= r.sc.Bound.R || r.sc.Bound.spent(r.kUsed, r.rUsed, r.eUsed) {
		r.keepProgramOrder(region)
		return r.identity(n), nil
	}
	opts := r.orderOptions(buf)
	i := 0
	if len(opts) > 1 {
		p := &r.ptOrder
		*p = Point{Kind: PointOrder, Ctx: c.name, Pos: Pos{Site: region, Occ: 1}, Level: c.level, Index: r.points}
		r.points++
		i = r.ask(p, opts)
		if i < 0 || i >= len(opts) {
			i = 0
		}
	}
	if i == 0 {
		r.keepProgramOrder(region)
		return r.identity(n), nil
	}
	return r.fixOrder(c, region, buf, opts[i])
}

// fixOrder makes o, an order other than program order chosen at region's
// first instance buf, the region's order for the rest of the run, and
// returns its order and dropped stores of buf.
func (r *runner) fixOrder(c *ctx, region fgraph.Site, buf []pending, o Option) (order, drop []int) {
	sites := sitesOf(buf, o.Order)
	dsites := sitesOf(buf, o.Drop)
	r.orders.set(region, sites, dsites)
	r.rUsed++
	r.lzCollapse()
	r.addOrder(Order{Region: region, Sites: sites, Drop: dsites})
	if r.opt.OnChoice != nil {
		r.opt.OnChoice(r.sched)
	}
	r.noteAlias(buf, o.Order)
	if r.tr != nil {
		if e := r.tracef(c, TraceOrder, "%s order %s = %s", c.name, region, orderLabel(buf, o)); e != nil {
			e.Site = region.String()
		}
	}
	return o.Order, o.Drop
}

// orderOptions lists the legal commit orders of a region (program order
// first), then those with the dead stores dropped. The list depends only on
// the stores' sites, kinds and which of them share an address (and, with
// the alias option, which are words or task fields), so it is computed once
// per such shape and reused by every later run.
func (r *runner) orderOptions(buf []pending) []Option {
	key := r.appendShape(r.sigBuf[:0], buf, r.sc.Alias)
	r.sigBuf = key
	if opts, ok := r.extCache[string(key)]; ok {
		return opts
	}
	opts := make([]Option, 0, 8)
	for _, e := range r.extensions(buf, identity(len(buf)), maxOrders) {
		opts = append(opts, Option{Kind: OptOrder, Order: e})
	}
	if d := dead(buf); d != nil {
		var keep, dr []int
		for i := range buf {
			if d[i] {
				dr = append(dr, i)
			} else {
				keep = append(keep, i)
			}
		}
		for _, e := range r.extensions(buf, keep, maxOrders) {
			opts = append(opts, Option{Kind: OptOrder, Order: e, Drop: dr})
		}
	}
	if r.extCache == nil {
		r.extCache = map[string][]Option{}
	}
	r.extCache[string(key)] = opts
	return opts
}

// appendShape appends to dst the shape of a region instance buf, which is
// all its commit orders depend on: each store's site and kind, the first
// store to the same address, and, with classes, whether it is a
// shadow-stack word or a task field (kbuild's constraints read that).
func (r *runner) appendShape(dst []byte, buf []pending, classes bool) []byte {
	for i, st := range buf {
		same := byte(i)
		for j := 0; j < i; j++ {
			if buf[j].addr == st.addr {
				same = byte(j)
				break
			}
		}
		var class byte
		if classes {
			if w, f := r.classify(st.addr); w {
				class = 1
			} else if f {
				class = 2
			}
		}
		dst = append(dst, byte(st.site), byte(st.site>>8), byte(st.kind), same, class)
	}
	return dst
}

// identity returns 0..n-1 from a shared slice (callers only read it).
func (r *runner) identity(n int) []int {
	for len(r.ident) < n {
		r.ident = append(r.ident, len(r.ident))
	}
	return r.ident[:n:n]
}

func identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

func sitesOf(buf []pending, idx []int) []fgraph.Site {
	if len(idx) == 0 {
		return nil
	}
	s := make([]fgraph.Site, len(idx))
	for i, j := range idx {
		s[i] = buf[j].site
	}
	return s
}

// applyOrder orders a dynamic instance by a recorded site order: a
// topological sort of the constraints (kbuild's with alias, else the
// no-alias model's), lowest recorded rank first, then program order. Stores
// of dropped sites are dropped only where dead.
func (r *runner) applyOrder(c *ctx, buf []pending, sites, drops []fgraph.Site, alias bool) (order, drop []int) {
	n := len(buf)
	d := dead(buf)
	rank := func(s fgraph.Site) int {
		for i, x := range sites {
			if x == s {
				return i
			}
		}
		return len(sites)
	}
	// The order and the drops go into the scratch of c's nesting level:
	// commit consumes them before that level commits again (an interrupt
	// that commits in between runs a level up).
	for len(r.orderBuf) <= c.level {
		r.orderBuf, r.dropBuf = append(r.orderBuf, nil), append(r.dropBuf, nil)
	}
	order, drop = r.orderBuf[c.level][:0], r.dropBuf[c.level][:0]
	var flags [2 * 32]bool
	keep, done := flags[:32], flags[32:]
	if n > 32 {
		keep, done = make([]bool, n), make([]bool, n)
	}
	keep, done = keep[:n], done[:n]
	for i := range buf {
		keep[i] = true
		if d != nil && d[i] {
			for _, s := range drops {
				if s == buf[i].site {
					keep[i] = false
					drop = append(drop, i)
					break
				}
			}
		}
	}
	for len(order)+len(drop) < n {
		best := -1
		for j := 0; j < n; j++ {
			if done[j] || !keep[j] {
				continue
			}
			ok := true
			for i := 0; i < j; i++ {
				if !done[i] && keep[i] && r.precedes(buf[i], buf[j], alias) {
					ok = false
					break
				}
			}
			if ok && (best < 0 || rank(buf[j].site) < rank(buf[best].site)) {
				best = j
			}
		}
		if best < 0 {
			break
		}
		done[best] = true
		order = append(order, best)
	}
	r.orderBuf[c.level], r.dropBuf[c.level] = order[:0], drop[:0] // the storage, grown, for next time
	return order, drop
}

// noteAlias records (r.aliasDep, sticky for the rest of the run) whether
// the commit order chosen at a region's first instance is one kbuild's
// compiler cannot emit: a pair of stores that alias analysis keeps in
// program order (aliasKeeps) commits the other way round. Dropped stores
// do not commit and constrain nothing. Later instances of a region chosen
// while the run was kbuild-legal apply its ranking under kbuild's
// constraints (regionOrder), so they never set it: a run with aliasDep
// false is a run of the alias-aware model.
func (r *runner) noteAlias(buf []pending, order []int) {
	if r.sc.Alias || r.aliasDep {
		return
	}
	for p := range order {
		for q := p + 1; q < len(order); q++ {
			if order[p] > order[q] && r.aliasKeeps(buf[order[q]], buf[order[p]]) {
				r.aliasDep = true
				return
			}
		}
	}
}

// onCommit follows the in-flight state of the context's entry and return.
func (r *runner) onCommit(c *ctx, st pending) {
	// After a run stopped (a cache hit) the code under test runs on to the
	// end of its op, and the next fence commits a store before it sees
	// the stop: not coverage (a run that started at an interrupt's entry,
	// irqstart.go, never gets there).
	if (r.cov != nil || r.snaps != nil) && !r.stopped {
		r.covCommitAt(st.site)
	}
	if r.tr != nil {
		format := "%s commit %s [%#x] = %#x"
		args := []any{c.name, st.site, int(st.addr), st.val}
		if l, ok := r.sc.Target.(Liner); ok && l.Line() > 0 {
			// The compiled code's store: name its source line.
			format += " (fgraph.c:%d)"
			args = append(args, l.Line())
		}
		if e := r.tracef(c, TraceCommit, format, args...); e != nil {
			e.Site, e.Addr, e.Where, e.Value = st.site.String(), int(st.addr), r.addrName(st.addr), st.val
			if strings.Contains(e.Where, "ret_stack[") {
				e.Decoded = r.decodeStore(st.site, st.val)
			}
		}
	}
	if !r.opt.NoOracles {
		r.checkCapacity(c, st)
	}
	if len(r.clobberedFixes) > 0 {
		r.forgetClobbered(st.addr)
	}
	F := r.cfg.FrameWords
	switch st.site {
	case fgraph.SitePushW3:
		if e := c.entry; e != nil {
			e.pushed = true
			e.top = int(int64(st.val))
			e.base = e.top - (F + 1)
		}
	case fgraph.SiteReserveW2, fgraph.SiteEnterRestore:
		if e := c.entry; e != nil && e.pushed {
			e.top = int(int64(st.val))
		}
	case fgraph.SiteEnterOutRet:
		if e := c.entry; e != nil {
			e.pushed = false
		}
	case fgraph.SitePushW5Ret:
		if e := c.entry; e != nil {
			e.ok[0] = true
		}
	case fgraph.SitePushW5Func:
		if e := c.entry; e != nil {
			e.ok[1] = true
		}
	case fgraph.SitePushW5Retp:
		if e := c.entry; e != nil {
			e.ok[2] = true
		}
	case fgraph.SiteRetLower:
		if p := c.pop; p != nil {
			p.lowered++
		}
	case fgraph.SiteReserveW1:
		c.resvV = inflightReserve{addr: st.addr, val: st.val}
		c.resv = &c.resvV
		// fgraph_reserve_data() builds the DATA word's offset from the word
		// below it: a clobbered DATA word still wrong there spreads into
		// this one (known finding reserve-reorder).
		if r.clobbered {
			curr := int(int64(r.m.Mem[r.m.TaskBase(c.task)+fgraph.TaskCurr]))
			if curr > 0 && r.stillClobbered(r.m.WordAddr(c.task, curr-1)) {
				r.clobberSpread = true
			}
		}
	}
	if st.site == fgraph.SiteReserveW2 && c.resv != nil {
		c.resv.raised = true
	}
	r.inReserveWindow = r.reserveWindow()
}

// reserveWindow reports whether some context on the CPU is inside
// fgraph_reserve_data, has raised curr_ret_stack (reserve.w2), and the DATA
// word it wrote (reserve.w1) is not in memory: an interrupt overwrote it and
// the rewrite (reserve.w3) has not landed.
func (r *runner) reserveWindow() bool {
	for _, x := range r.ctxs {
		if v := x.resv; v != nil && v.raised && r.m.Mem[v.addr] != v.val {
			return true
		}
	}
	return false
}
