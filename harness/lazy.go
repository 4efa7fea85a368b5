package harness

import (
	"iter"
	"math/bits"
	"slices"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Lazy region orders (ExploreOptions.LazyOrders; docs/lazy-orders.md).
//
// The eager engine chooses a region's commit order at its first instance
// and keeps it at every later one: one subtree per order, each exploring
// every interrupt placement again although most of them cannot tell the
// orders apart. The lazy engine keeps a region *pending* instead: a set of
// orders (its live options) that one run stands for, committed in the
// order of one of them (the representative, program order while it is
// live). At each yield inside an instance of a pending region, the live
// options fall into classes by what that yield can tell apart: the set of
// stores they have committed (which decides memory and the oracles'
// bookkeeping there) and what the oracles reported on the way (their
// effects, found by committing each live option's order in a sandbox from
// the instance's start or its last event, and putting the state back). An
// event taken there stands for the representative's class only; every
// other class is offered the same event as an option of its own, which
// narrows the region to that class and goes on in its representative's
// order (the commits since the last anchor are made again, in that order,
// for real). At the instance's end the classes whose oracles reported
// something else are offered as options too. A run that ends with a
// region pending stands for every schedule its live options make with its
// events, as many as the budget allows (runner.lzWeights): the counts are
// the eager engine's, with fewer runs.
//
// Eager, as before: a region whose order a known finding's matcher reads
// (reserve.w2's: reserve-reorder), the orders that drop a dead store
// (offered at the region's first instance), regions with more than 64
// orders, and regions whose oracle bookkeeping depends on the order of
// their stores (lzOrderFree).

// lzOpts is a pending region's option list: the orders of its first
// instance that drop no store, program order first.
type lzOpts struct {
	key   uint64          // the first instance's shape (state.go encodes it)
	sites [][]fgraph.Site // per option: its ranking of the region's sites
	first [][]int         // per option: its order of the first instance
	kb    uint64          // the options kbuild's compiler may emit
	drops []Option        // the orders of the first instance that drop a store (chosen eagerly)
}

// lzKey is what a yield inside a pending instance shows of one option:
// the stores committed (a bit per store of the instance) and a digest of
// what the oracles reported since the anchor (0: nothing; lzStopped: a
// violation that stops the run).
type lzKey struct{ mask, sig uint64 }

const lzStopped = 1 << 63

// lzInst is an instance of a pending region being committed by a context.
type lzInst struct {
	region fgraph.Site
	buf    []pending
	// ords: per option live at the instance's start, its order of the
	// instance (indices into buf).
	ords [64][]int
	// ordsID names the list ords was taken from (lzStepsOf).
	ordsID *[]int
	rep    int // the option committed now
	k      int // stores committed
	// The anchor: the state at anchorK commits (the instance's start, or
	// right after its last event), which a switch of representative and
	// the sandboxes go back to.
	anchorK int
	an      lzAnchor
	// The keys the sandbox found since the anchor: for each option of
	// klive in order, kn keys (key: option o's after anchorK+j+1
	// commits), flat: the instance's own (kown) or a record's of reuse
	// (read only); kn is 0 when one option was live.
	klive      uint64
	kn         int
	keys, kown []lzKey
	// row is, per option of klive, where its keys start in keys (key).
	row [64]int32
	// evAt: an event was taken at the yield after evAt commits.
	evAt int
	// clean and cleanList are the committed sets whose in-place check the
	// sandbox found clean since the anchor (lzCheck): a bit per set below
	// 64, the others listed.
	clean     uint64
	cleanList []uint64
}

// lzAnchor is what a commit and an in-place check can change, saved.
type lzAnchor struct {
	vals                         []fgraph.Word // memory at the instance's addresses
	occ                          []int32       // the committing context's occurrence counts of the instance's sites
	lastSite                     fgraph.Site
	nyield                       int32
	entryV                       inflightEntry
	popV                         inflightPop
	resvV                        inflightReserve
	hasE, hasP, hasR             bool
	inRW, spread, stale, stopped bool
	fixes                        []wordFix
	nv, nk, nd                   int
	logSeen, warnSeen            int
	ver, checked                 uint64
	cursors                      [8]int
	cursorDepth                  int
}

// lzExt is an extra option of a yield inside a pending instance: narrow
// the region to the class of option rep, and take base option base
// (0: continue).
type lzExt struct{ rep, base int }

// lzEligible reports whether region's first instance buf may be pending.
func (r *runner) lzEligible(buf []pending) bool {
	return r.lazy && r.rep == nil && !r.compiled && len(buf) >= 2 && buf[0].site != fgraph.SiteReserveW2 && lzOrderFree(buf)
}

// lzOrderFree reports whether the oracles' bookkeeping of an instance's
// commits (runner.onCommit) is the same whatever their order: it is but
// for reserve.w1 (it reads memory) and two of push.w3, reserve.w2 and
// enter.restore together (each sets the entry's top).
func lzOrderFree(buf []pending) bool {
	n := 0
	for _, st := range buf {
		switch st.site {
		case fgraph.SiteReserveW1:
			return false
		case fgraph.SitePushW3, fgraph.SiteReserveW2, fgraph.SiteEnterRestore:
			n++
		}
	}
	return n < 2
}

// lzStart begins the commit of c's region buf. It returns the pending
// instance (nil if the region is not pending), or, at a region's first
// instance where a dead-store-dropping order was chosen, that order.
func (r *runner) lzStart(c *ctx, buf []pending) (lz *lzInst, order, drop []int, eager bool) {
	region := buf[0].site
	fresh := false
	var o *lzOpts
	if r.lzLive[region] == 0 {
		b := &r.sc.Bound
		if r.orders.has[region] || !r.lzEligible(buf) || r.rUsed >= b.R || b.spent(r.kUsed, r.rUsed, r.eUsed) {
			return nil, nil, nil, false
		}
		o = r.lzShape(buf)
		if o == nil {
			return nil, nil, nil, false
		}
		if drops := o.drops; len(drops) > 0 {
			// The orders that drop a store change the instance's end state:
			// chosen here, as the eager engine does.
			ch := append(r.lzChoice[:0], Option{Kind: OptOrder, Order: r.identity(len(buf))})
			ch = append(ch, drops...)
			r.lzChoice = ch
			p := &r.ptOrder
			*p = Point{Kind: PointOrder, Ctx: c.name, Pos: Pos{Site: region, Occ: 1}, Level: c.level, Index: r.points}
			r.points++
			if i := r.ask(p, ch); i > 0 && i < len(ch) {
				order, drop = r.fixOrder(c, region, buf, ch[i])
				return nil, order, drop, true
			}
		}
		r.lzPend(region, o)
		fresh = true
	}
	o = r.lzOpt[region]
	ords := o.first
	if !fresh {
		ords = r.lzOrders(c, buf, o)
		if !lzOrderFree(buf) {
			r.lzPick(c, region, ords)
		}
	}
	live := r.lzLive[region]
	lz = r.lzFree()
	lz.region, lz.buf, lz.k, lz.anchorK, lz.evAt = region, buf, 0, 0, -1
	lz.ordsID = &ords[0]
	for l := live; l != 0; l &= l - 1 {
		i := bits.TrailingZeros64(l)
		lz.ords[i] = ords[i] // read-only: shared by every instance of the shape
		if len(lz.ords[i]) != len(buf) {
			internalf("lazy orders: option %d of %s commits %d of %d stores", i, region, len(lz.ords[i]), len(buf))
		}
	}
	lz.rep = bits.TrailingZeros64(live)
	c.lz = lz
	r.lzN++
	r.lzAnchorAt(c, lz)
	r.lzSandbox(c, lz)
	return lz, nil, nil, false
}

// lzPick narrows region, pending, to one of its live options at a later
// instance whose oracle bookkeeping depends on the order of its commits
// (lzOrderFree), though its first instance's did not (with F2 at C=2 an
// instance of push.w4's region buffers enter.restore twice): the
// classes' keys do not hold that bookkeeping, so from here each live
// option is its own run, chosen at an order point (ords: each option's
// order of the instance) as the eager engine chooses, program order
// first. An option other than program order pays for a region that had
// not paid.
func (r *runner) lzPick(c *ctx, region fgraph.Site, ords [][]int) {
	live := r.lzLive[region]
	if bits.OnesCount64(live) < 2 {
		return
	}
	ch := r.lzChoice[:0]
	for l := live; l != 0; l &= l - 1 {
		ch = append(ch, Option{Kind: OptOrder, Order: ords[bits.TrailingZeros64(l)]})
	}
	r.lzChoice = ch
	p := &r.ptOrder
	*p = Point{Kind: PointOrder, Ctx: c.name, Pos: Pos{Site: region, Occ: int(c.occ[region]) + 1}, Level: c.level, Index: r.points}
	r.points++
	i := r.ask(p, ch)
	if i < 0 || i >= len(ch) {
		i = 0
	}
	l := live
	for range i {
		l &= l - 1
	}
	o := bits.TrailingZeros64(l)
	if !r.lzPaid[region] && o != 0 {
		r.lzPaid[region] = true
		r.rUsed++
		if r.opt.OnChoice != nil {
			r.opt.OnChoice(r.sched)
		}
	}
	r.lzSetLive(region, 1<<o)
	r.lzCollapse()
}

// lzOrders returns every option of o's order of the instance buf (a later
// one than the first): each option's ranking applied as regionOrder
// applies a chosen one, under kbuild's constraints while the run is
// kbuild's with that option (r.aliasDep, o.kb). They depend on buf's
// shape only, and are computed once per shape.
func (r *runner) lzOrders(c *ctx, buf []pending, o *lzOpts) [][]int {
	key := append(r.lzKeyBuf[:0], byte(o.key), byte(o.key>>8), byte(o.key>>16), byte(o.key>>24),
		byte(o.key>>32), byte(o.key>>40), byte(o.key>>48), byte(o.key>>56), byte(boolU(r.aliasDep)))
	key = r.appendShape(key, buf, true)
	r.lzKeyBuf = key
	if ords, ok := r.lzOrdCache[string(key)]; ok {
		return ords
	}
	ords := make([][]int, len(o.sites))
	for i := range ords {
		if i == 0 {
			ords[i] = identity(len(buf))
			continue
		}
		ord, _ := r.applyOrder(c, buf, o.sites[i], nil, r.sc.Alias || !(r.aliasDep || o.kb&(1<<i) == 0))
		ords[i] = slices.Clone(ord)
	}
	if r.lzOrdCache == nil {
		r.lzOrdCache = map[string][][]int{}
	}
	r.lzOrdCache[string(key)] = ords
	return ords
}

// lzShape returns the option list of a region whose first instance is buf,
// shared by every run with the same shape; nil if it cannot be pending
// (fewer than two orders that drop nothing, or more than 64).
func (r *runner) lzShape(buf []pending) *lzOpts {
	opts := r.orderOptions(buf) // sets r.sigBuf to buf's shape
	if o, ok := r.lzShapes[string(r.sigBuf)]; ok {
		return o
	}
	key := string(r.sigBuf)
	var nd, drops []Option
	for _, x := range opts {
		if x.Drop == nil {
			nd = append(nd, x)
		} else {
			drops = append(drops, x)
		}
	}
	if r.lzShapes == nil {
		r.lzShapes = map[string]*lzOpts{}
	}
	if len(nd) < 2 || len(nd) > lzMaxOptions {
		r.lzShapes[key] = nil
		return nil
	}
	o := &lzOpts{key: strHash(key), drops: drops}
	for i, x := range nd {
		o.sites = append(o.sites, sitesOf(buf, x.Order))
		o.first = append(o.first, slices.Clone(x.Order))
		if r.sc.Alias || lzKbuildLegal(r, buf, x.Order) {
			o.kb |= 1 << i
		}
	}
	r.lzShapes[key] = o
	return o
}

// lzKbuildLegal reports whether kbuild's compiler may emit order (noteAlias).
func lzKbuildLegal(r *runner, buf []pending, order []int) bool {
	for p := range order {
		for q := p + 1; q < len(order); q++ {
			if order[p] > order[q] && r.aliasKeeps(buf[order[q]], buf[order[p]]) {
				return false
			}
		}
	}
	return true
}

// lzPend makes region pending with every option of o live.
func (r *runner) lzPend(region fgraph.Site, o *lzOpts) {
	n := len(o.sites)
	r.lzLive[region] = 1<<n - 1
	if n == 64 {
		r.lzLive[region] = ^uint64(0)
	}
	r.lzOpt[region], r.lzPaid[region] = o, false
	r.lzList = append(r.lzList, region)
}

// lzUnpend ends region's pending state: it keeps program order.
func (r *runner) lzUnpend(region fgraph.Site) {
	r.lzLive[region], r.lzOpt[region], r.lzPaid[region] = 0, nil, false
	r.lzList = slices.DeleteFunc(r.lzList, func(s fgraph.Site) bool { return s == region })
	r.keepProgramOrder(region)
}

// lzCollapse ends every pending region that program order is still live
// in once the budget allows no order more: they keep program order.
func (r *runner) lzCollapse() {
	b := &r.sc.Bound
	if len(r.lzList) == 0 || r.rUsed < b.R && !b.spent(r.kUsed, r.rUsed, r.eUsed) {
		return
	}
	for i := len(r.lzList) - 1; i >= 0; i-- {
		if reg := r.lzList[i]; !r.lzPaid[reg] {
			r.lzUnpend(reg)
		}
	}
}

// lzFree returns an instance record to fill (the runner keeps one per
// nesting of contexts).
func (r *runner) lzFree() *lzInst {
	if r.lzN < len(r.lzPool) {
		return r.lzPool[r.lzN]
	}
	lz := &lzInst{}
	r.lzPool = append(r.lzPool, lz)
	return lz
}

// lzActive reports whether c's instance lz is still of a pending region.
func (r *runner) lzActive(lz *lzInst) bool { return r.lzLive[lz.region] != 0 }

// lzMixed reports whether an instance of a pending region that has paid
// is in flight with more than one option live: between its commits the
// options leave other words in memory than the representative's
// (uxClean). An unpaid region needs no such test there: where the remote
// unwind is the last choice no order can be spent, so its schedules are
// program order's, its representative while live.
func (r *runner) lzMixed() bool {
	for _, x := range r.ctxs {
		if lz := x.lz; lz != nil && r.lzPaid[lz.region] && bits.OnesCount64(r.lzLive[lz.region]) > 1 {
			return true
		}
	}
	return false
}

// lzAnchorAt saves the state lz's commits and checks can change, at lz.k
// commits.
func (r *runner) lzAnchorAt(c *ctx, lz *lzInst) {
	a := &lz.an
	lz.anchorK = lz.k
	a.vals, a.occ = a.vals[:0], a.occ[:0]
	for _, st := range lz.buf {
		a.vals = append(a.vals, r.m.Mem[st.addr])
		a.occ = append(a.occ, c.occ[st.site])
	}
	a.lastSite, a.nyield = c.lastSite, c.nyield
	a.entryV, a.popV, a.resvV = c.entryV, c.popV, c.resvV
	a.hasE, a.hasP, a.hasR = c.entry != nil, c.pop != nil, c.resv != nil
	a.inRW, a.spread, a.stale, a.stopped = r.inReserveWindow, r.clobberSpread, r.staleRetp, r.stopped
	a.fixes = append(a.fixes[:0], r.clobberedFixes...)
	a.nv, a.nk, a.nd = len(r.res.Violations), len(r.res.Known), len(r.res.dets)
	a.logSeen, a.warnSeen = r.logSeen, r.warnSeen
	a.ver, a.checked = r.ver, r.checked
	a.cursors, a.cursorDepth = r.cursors, r.cursorDepth
}

// lzRestore puts lz's anchor back.
func (r *runner) lzRestore(c *ctx, lz *lzInst) {
	a := &lz.an
	for i, st := range lz.buf {
		r.poke(st.addr, a.vals[i])
		c.occ[st.site] = a.occ[i]
	}
	c.lastSite, c.nyield = a.lastSite, a.nyield
	c.entryV, c.popV, c.resvV = a.entryV, a.popV, a.resvV
	c.entry, c.pop, c.resv = nil, nil, nil
	if a.hasE {
		c.entry = &c.entryV
	}
	if a.hasP {
		c.pop = &c.popV
	}
	if a.hasR {
		c.resv = &c.resvV
	}
	r.inReserveWindow, r.clobberSpread, r.staleRetp, r.stopped = a.inRW, a.spread, a.stale, a.stopped
	r.clobberedFixes = append(r.clobberedFixes[:0], a.fixes...)
	r.res.Violations, r.res.Known, r.res.dets = r.res.Violations[:a.nv], r.res.Known[:a.nk], r.res.dets[:a.nd]
	r.logSeen, r.warnSeen = a.logSeen, a.warnSeen
	r.ver, r.checked = a.ver, a.checked
	r.cursors, r.cursorDepth = a.cursors, a.cursorDepth
}

// lzSandbox computes, for every live option of lz's region, its keys after
// each commit from the anchor on: it commits the option's order with the
// bookkeeping and the in-place checks, and puts the anchor back.
func (r *runner) lzSandbox(c *ctx, lz *lzInst) {
	live := r.lzLive[lz.region]
	lz.clean, lz.cleanList = 0, lz.cleanList[:0]
	lz.klive, lz.kn, lz.keys = live, 0, nil
	if bits.OnesCount64(live) < 2 {
		return // one option: nothing to tell apart
	}
	var rec sandRec
	taken := false
	if r.reuse != nil {
		if rec, taken = r.takeSandbox(lz, live); taken && !r.hk.lzVerifyReuse {
			return
		}
	}
	kg, cov := r.opt.KeepGoing, r.cov
	r.opt.KeepGoing, r.cov = true, nil
	ncov := 0
	if r.snaps != nil {
		ncov = len(r.snaps.cov)
	}
	lz.kown = lz.kown[:0]
	var mem []fgraph.Word
	if r.hk.lzVerifyClean {
		mem = slices.Clone(r.m.Mem)
	}
	if r.lzClean(lz, live) {
		lz.kown = r.lzCleanKeys(lz, live, lz.kown)
		if r.hk.lzVerifyClean {
			r.lzVerifyCleanKeys(c, lz, live, kg, mem)
		}
	} else {
		for l := live; l != 0; l &= l - 1 {
			lz.kown = r.lzSimulate(c, lz, bits.TrailingZeros64(l), kg, lz.kown)
			r.lzRestore(c, lz)
		}
	}
	lz.setKeys(lz.kown, len(lz.buf)-lz.anchorK)
	r.opt.KeepGoing, r.cov = kg, cov
	if r.snaps != nil {
		r.snaps.cov = r.snaps.cov[:ncov]
	}
	switch {
	case taken:
		// lzVerifyReuse: the record taken must be what the run finds.
		if !r.reuse.sameKeys(lz, live, rec) {
			internalf("lazy orders: a sandbox of a shared prefix found other keys than its record")
		}
		r.hk.lzReuseChecked.Add(1)
	case r.reuse != nil:
		r.recordSandbox(lz, live)
	}
}

// lzClean reports whether every in-place check the sandbox of lz would
// make is clean, and nothing else in it reports, without committing: the
// sandbox's checks are the readers' walk, the callback records and the
// WARNs (checkInPlace). No record or WARN waits to be judged, and the
// commits make none. The commits' bookkeeping reports nothing either: no
// store is at or past the capacity the capacity oracle judges, and the
// region is order-free (lzEligible: no reserve.w1, whose bookkeeping
// reads memory). Every store writes a word of a shadow stack. If the
// readers' memo holds the inputs of their last clean walk of this task
// (readers.go) and no store writes a word that walk read, every walk on
// the way reads what that one read and is clean; otherwise the sets of
// stores checked are looked up one by one (lzCleanSets). Not in a traced
// run (the commits would be traced).
func (r *runner) lzClean(lz *lzInst, live uint64) bool {
	if r.tr != nil || r.hk.lzSimulateAll || r.hk.checkHook != nil || len(lz.buf) > 64 {
		return false // (a test's hook may crash a check the memos call clean)
	}
	m := r.m
	memo := true
	if !r.opt.NoOracles {
		if len(m.Log) > r.logSeen || r.warnSeen < len(m.Warnings) || !r.readerMemoOn() {
			return false
		}
		memo = r.rmemo.same(r, m.Current)
	}
	covered := false
	for i := range lz.buf {
		a := lz.buf[i].addr
		t := r.stackAt[a]
		if t < 0 || a >= r.stacks[t].lo+fgraph.Addr(r.maxOff) {
			return false
		}
		covered = covered || r.rmemo.covers(a)
	}
	if r.opt.NoOracles || memo && !covered {
		return true
	}
	return !r.hk.lzCleanNoSets && r.lzCleanSets(lz, live, memo)
}

// lzVis is, for each store of an instance, whether an unwinder can see
// its commit (runner.visible): where lzSimulate checks in its sandbox.
// (Every store writes a word of a shadow stack, lzClean, so
// curr_ret_stack does not move and the answer is the anchor's.)
type lzVis uint64

// lzVisibility returns lz's lzVis.
func (r *runner) lzVisibility(lz *lzInst) lzVis {
	var v lzVis
	for i := range lz.buf {
		if r.visible(lz.buf[i].addr) {
			v |= 1 << i
		}
	}
	return v
}

// lzSteps yields, for each option of live and each of its commits from
// lz's anchor, the set committed then and whether lzSimulate checks right
// after it: after the first commit if a check was due at the anchor
// (due), and after a commit an unwinder can see (vis).
func lzSteps(lz *lzInst, live uint64, vis lzVis, due bool) iter.Seq2[uint64, bool] {
	return func(yield func(uint64, bool) bool) {
		for l := live; l != 0; l &= l - 1 {
			ord := lz.ords[bits.TrailingZeros64(l)]
			var mask uint64
			for _, j := range ord[:lz.anchorK] {
				mask |= 1 << j
			}
			first := due
			for _, j := range ord[lz.anchorK:] {
				mask |= 1 << j
				if !yield(mask, first || vis&(1<<j) != 0) {
					return
				}
				first = false
			}
		}
	}
}

// lzCleanSets is lzClean where some of lz's stores write words the last
// clean walk read, or the readers' memo holds no clean walk now: each set
// of stores after whose commit the sandbox would check (lzVis) is
// written into memory by itself, and the walk is clean if the memo still
// covers it (memo: it holds, and the set writes none of its words) or
// readerSeen kept a clean walk with those inputs (readseen.go), as
// checkReaders would find; then memory is put back. Any set that is
// neither leaves the sandbox to its commits. The stores' addresses must
// differ: then a set's memory is the same whatever order committed it.
func (r *runner) lzCleanSets(lz *lzInst, live uint64, memo bool) bool {
	m := r.m
	vis := r.lzVisibility(lz)
	for i := range lz.buf {
		for j := range i {
			if lz.buf[i].addr == lz.buf[j].addr {
				return false
			}
		}
	}
	due := r.checked != r.ver
	var old [64]fgraph.Word
	rs := r.rseen
	if rs.n > 0 {
		rs.setShape(r, m.Current) // (the probes below write stack words only)
	}
	for _, set := range r.lzStepsOf(lz, live).sets {
		mask := set.mask
		if !set.check(vis, due) {
			continue
		}
		if mask >= 64 {
			return false // (a region of more than six stores: rare)
		}
		cov := false
		for w := mask; w != 0; w &= w - 1 {
			st := &lz.buf[bits.TrailingZeros64(w)]
			cov = cov || r.rmemo.covers(st.addr)
			old[bits.TrailingZeros64(w)] = m.Mem[st.addr]
			m.Mem[st.addr] = st.val
		}
		clean := memo && !cov
		if !clean && rs.n > 0 {
			_, clean = rs.hitShape(r, m.Current)
		}
		for w := mask; w != 0 && !r.hk.lzCleanKeepsProbe; w &= w - 1 {
			m.Mem[lz.buf[bits.TrailingZeros64(w)].addr] = old[bits.TrailingZeros64(w)]
		}
		if !clean {
			return false
		}
	}
	return true
}

// lzCleanKeys appends to out the keys lzSimulate would find for lz's live
// options where every check is clean (lzClean): after each commit from
// the anchor, the set committed and the digest of no report (lzSig's: the
// sticky flag of a spread clobber, if set); and it marks clean the sets
// whose check lzSimulate would make (lzCheck, where lzVis says).
func (r *runner) lzCleanKeys(lz *lzInst, live uint64, out []lzKey) []lzKey {
	var sig uint64
	if r.clobberSpread {
		sig = 2
	}
	due := r.checked != r.ver && !r.hk.lzCleanWrong
	st := r.lzStepsOf(lz, live)
	for _, mask := range st.steps {
		out = append(out, lzKey{mask, sig})
	}
	if r.opt.NoOracles {
		return out
	}
	vis := r.lzVisibility(lz)
	for _, set := range st.sets {
		if set.check(vis, due) && !lz.isClean(set.mask) {
			if set.mask < 64 {
				lz.clean |= 1 << set.mask
			} else {
				lz.cleanList = append(lz.cleanList, set.mask)
			}
		}
	}
	return out
}

// lzStepList is lzSteps's walk of an instance's live options from its
// anchor, kept per list of orders, live options and anchor (it depends on
// nothing else): steps, every set committed in the walk's order; sets,
// each set once, in the order of its first step, with the stores whose
// commit completes it (last) and whether it is some option's first step
// (first), which decide whether a sandbox checks after it.
type lzStepList struct {
	steps []uint64
	sets  []lzStepSet
}

type lzStepSet struct {
	mask, last uint64
	first      bool
}

// check reports whether lzSimulate checks after some step that commits
// the set: a first step where a check was due at the anchor, or a step
// an unwinder can see (vis).
func (s *lzStepSet) check(vis lzVis, due bool) bool {
	return s.first && due || s.last&uint64(vis) != 0
}

type lzStepKey struct {
	ords    *[]int
	live    uint64
	anchorK int
}

// lzStepsOf returns lz's lzStepList for the options of live, found once
// per list of orders, live options and anchor.
func (r *runner) lzStepsOf(lz *lzInst, live uint64) *lzStepList {
	k := lzStepKey{lz.ordsID, live, lz.anchorK}
	if r.lzStepLast != nil && r.lzStepLastK == k {
		return r.lzStepLast
	}
	st := r.lzStepMemo[k]
	if st == nil {
		st = &lzStepList{}
		for mask, first := range lzSteps(lz, live, 0, true) {
			st.steps = append(st.steps, mask)
			j := -1
			for i, x := range st.sets {
				if x.mask == mask {
					j = i
					break
				}
			}
			if j < 0 {
				j = len(st.sets)
				st.sets = append(st.sets, lzStepSet{mask: mask})
			}
			st.sets[j].first = st.sets[j].first || first
		}
		// The store each step commits: its set less the step before's.
		prev, n := uint64(0), 0
		for l := live; l != 0; l &= l - 1 {
			prev = 0
			for _, j := range lz.ords[bits.TrailingZeros64(l)][:lz.anchorK] {
				prev |= 1 << j
			}
			for range len(lz.buf) - lz.anchorK {
				mask := st.steps[n]
				for i := range st.sets {
					if st.sets[i].mask == mask {
						st.sets[i].last |= mask &^ prev
					}
				}
				prev, n = mask, n+1
			}
		}
		if r.lzStepMemo == nil {
			r.lzStepMemo = map[lzStepKey]*lzStepList{}
		}
		r.lzStepMemo[k] = st
	}
	r.lzStepLast, r.lzStepLastK = st, k
	return st
}

// lzVerifyCleanKeys, in tests (lzVerifyClean), commits lz's options in
// the sandbox after lzCleanKeys found their keys, and fails with an
// internal error unless memory is still mem (as before lzClean) and the
// commits find the same keys and clean sets.
func (r *runner) lzVerifyCleanKeys(c *ctx, lz *lzInst, live uint64, kg bool, mem []fgraph.Word) {
	if !slices.Equal(mem, r.m.Mem) {
		internalf("lazy orders: memory changed while the keys of a sandbox whose checks are all clean were found")
	}
	keys, clean, list := slices.Clone(lz.kown), lz.clean, slices.Clone(lz.cleanList)
	lz.kown, lz.clean, lz.cleanList = lz.kown[:0], 0, lz.cleanList[:0]
	for l := live; l != 0; l &= l - 1 {
		lz.kown = r.lzSimulate(c, lz, bits.TrailingZeros64(l), kg, lz.kown)
		r.lzRestore(c, lz)
	}
	if !slices.Equal(keys, lz.kown) || clean != lz.clean || !slices.Equal(list, lz.cleanList) {
		internalf("lazy orders: the keys of a sandbox whose checks are all clean are %v (clean %#x %v), its commits found %v (clean %#x %v)",
			keys, clean, list, lz.kown, lz.clean, lz.cleanList)
	}
	r.hk.lzCleanVerified.Add(1)
}

// lzSimulate commits option o's order of lz from the anchor, appending its
// keys to out. A Go panic of a check (the panic oracle's, in a real run)
// stops it like a violation.
func (r *runner) lzSimulate(c *ctx, lz *lzInst, o int, keepGoing bool, out []lzKey) (res []lzKey) {
	ord := lz.ords[o]
	var mask uint64
	for _, j := range ord[:lz.anchorK] {
		mask |= 1 << j
	}
	var sig uint64
	nv, nk, nd := lz.an.nv, lz.an.nk, lz.an.nd
	j := lz.anchorK
	defer func() {
		if x := recover(); x != nil {
			switch x.(type) {
			case *InternalError, chooserPanic, abortRun, haltRun:
				panic(x) // the harness's own, not a check's crash
			}
			sig = mix(sig, 0x70616e6963) | lzStopped
			for ; j < len(ord); j++ {
				mask |= 1 << ord[j]
				out = append(out, lzKey{mask, sig})
			}
			res = out
		}
	}()
	for ; j < len(ord); j++ {
		mask |= 1 << ord[j]
		if sig&lzStopped == 0 {
			st := &lz.buf[ord[j]]
			r.poke(st.addr, st.val)
			if r.visible(st.addr) {
				r.ver++
			}
			r.onCommit(c, *st)
			c.lastSite = st.site
			if !r.opt.NoOracles && r.checked != r.ver {
				r.checked = r.ver
				r.lzCheck(c, lz, st.site, mask)
			}
			sig = r.lzSig(sig, &nv, &nk, &nd)
			if nv > lz.an.nv && !keepGoing {
				sig |= lzStopped
			}
		}
		out = append(out, lzKey{mask, sig})
	}
	return out
}

// lzCheck is the in-place check of a sandbox after the stores of mask
// committed. The state it reads is the anchor's with those stores (the
// bookkeeping of an instance's commits does not depend on their order,
// lzOrderFree), so a check that reported nothing, with no callback record
// nor WARN pending (the first check after the anchor judges those), is
// one every other option passing through the same set would make: it is
// not made again (lzInst.clean: the sets found clean since the anchor).
// Nearly all are clean: on peer-spin K=3 52 of 3.8 million.
func (r *runner) lzCheck(c *ctx, lz *lzInst, s fgraph.Site, mask uint64) {
	idle := r.logSeen == len(r.m.Log) && r.warnSeen == len(r.m.Warnings)
	if idle && lz.isClean(mask) {
		return
	}
	// Clean is no violate call at all: a repeated detection of a known
	// finding adds nothing to the run's lists, but on a path that had not
	// made it before it would.
	n := r.violations
	r.checkInPlace(c, s)
	if !idle || r.violations != n {
		return
	}
	if mask < 64 {
		lz.clean |= 1 << mask
	} else {
		lz.cleanList = append(lz.cleanList, mask)
	}
}

// isClean reports whether the set mask was found clean since the anchor.
func (lz *lzInst) isClean(mask uint64) bool {
	if mask < 64 {
		return lz.clean&(1<<mask) != 0
	}
	return slices.Contains(lz.cleanList, mask)
}

// lzCleanHere reports whether the in-place check at this yield of c's
// pending instance, after the representative's k commits, is one its
// sandbox found clean: the same set, nothing pending (lzCheck).
func (r *runner) lzCleanHere(c *ctx) bool {
	lz := c.lz
	if !r.lzActive(lz) || lz.k <= lz.anchorK || r.logSeen != len(r.m.Log) || r.warnSeen != len(r.m.Warnings) {
		return false
	}
	var mask uint64
	for _, j := range lz.ords[lz.rep][:lz.k] {
		mask |= 1 << j
	}
	return lz.isClean(mask)
}

// lzSig folds into sig what the oracles reported since the marks: the new
// violations (oracle and message), known findings reported (finding and
// oracle) and detections (finding and oracle, once each), and the sticky
// flag a known finding matches on.
func (r *runner) lzSig(sig uint64, nv, nk, nd *int) uint64 {
	if *nv == len(r.res.Violations) && *nk == len(r.res.Known) && *nd == len(r.res.dets) {
		// Nothing reported since (nearly always: the three empty loops
		// below were 1 % of peer-spin K=3's instructions).
		if r.clobberSpread {
			sig |= 2
		}
		return sig &^ lzStopped
	}
	for _, v := range r.res.Violations[*nv:] {
		sig = mix(mix(sig|1, uint64(oracleIndex[v.Oracle])), strHash(v.Msg))
	}
	for _, v := range r.res.Known[*nk:] {
		sig = mix(mix(sig|1, uint64(knownIndex[v.Known])<<8|uint64(oracleIndex[v.Oracle])), 0x6b6e6f776e)
	}
	for i, d := range r.res.dets[*nd:] {
		dup := false
		for _, e := range r.res.dets[*nd : *nd+i] {
			if e.k == d.k && e.o == d.o {
				dup = true
				break
			}
		}
		if !dup {
			sig = mix(sig|1, uint64(d.k)<<8|uint64(d.o)|0x64657400)
		}
	}
	*nv, *nk, *nd = len(r.res.Violations), len(r.res.Known), len(r.res.dets)
	if r.clobberSpread {
		sig |= 2
	}
	return sig &^ lzStopped
}

// lzOptions adds to the options base of the yield after lz.k commits of
// c's pending instance the options of the other classes: each narrows the
// region to its class and takes one of base's events, or, at the
// instance's last yield, goes on with the class's order (its oracles
// reported something else). It returns the options and how many of them
// are base's.
func (r *runner) lzOptions(c *ctx, base []Option) ([]Option, int) {
	lz := c.lz
	nb := len(base)
	if !r.lzActive(lz) {
		return base, nb
	}
	live := r.lzLive[lz.region]
	if bits.OnesCount64(live) < 2 {
		return base, nb
	}
	last := lz.k == len(lz.buf)
	if nb <= 1 && !last {
		return base, nb // no event here: nothing to tell apart
	}
	j := lz.k - lz.anchorK - 1
	rk := lz.key(lz.rep, j)
	// Narrowing a region that has not paid to a class (which then has no
	// program order) spends an order: one of R and of C, and the event it
	// takes one more of C. A region still pending without having paid
	// has an order left in the budget (lzCollapse).
	b := &r.sc.Bound
	paid := r.lzPaid[lz.region]
	canEvent := paid || b.C == 0 || r.kUsed+r.rUsed+r.eUsed+2 <= b.C
	if !paid && (r.rUsed >= b.R || b.spent(r.kUsed, r.rUsed, r.eUsed)) {
		internalf("lazy orders: %s pending with no order left in the budget", lz.region)
	}
	if !canEvent && !last {
		return base, nb
	}
	ext := r.lzExts[:0]
	// The classes other than the representative's, each by its first
	// option: by the committed set alone (a bit per set below 64) where
	// the oracles reported nothing, the common case, else listed.
	var firsts [64]int8
	var sets uint64
	nc := 0
	for l := live; l != 0; l &= l - 1 {
		o := bits.TrailingZeros64(l)
		k := lz.key(o, j)
		if k == rk {
			continue
		}
		if k.sig == 0 && k.mask < 64 {
			if sets&(1<<k.mask) != 0 {
				continue
			}
			sets |= 1 << k.mask
		} else {
			seen := false
			for _, f := range firsts[:nc] {
				if lz.key(int(f), j) == k {
					seen = true
					break
				}
			}
			if seen {
				continue
			}
			firsts[nc] = int8(o)
			nc++
		}
		if k.sig&lzStopped == 0 && canEvent {
			for x := 1; x < nb; x++ {
				ext = append(ext, lzExt{rep: o, base: x})
			}
		}
		if last {
			ext = append(ext, lzExt{rep: o, base: 0})
		}
	}
	r.lzExts = ext
	if len(ext) == 0 {
		return base, nb
	}
	opts := append(r.lzOptBuf[:0], base...)
	if nb == 0 {
		opts = append(opts, Option{Kind: OptContinue})
		nb = 1
	}
	for _, e := range ext {
		o := Option{Kind: OptContinue}
		if e.base > 0 {
			o = base[e.base]
		}
		opts = append(opts, o)
	}
	r.lzOptBuf = opts
	return opts, nb
}

// key is option o's key after anchorK+j+1 commits.
func (lz *lzInst) key(o, j int) lzKey {
	return lz.keys[int(lz.row[o&63])+j]
}

// setKeys takes keys, kn for each option of klive in order, as the keys
// of the instance.
func (lz *lzInst) setKeys(keys []lzKey, kn int) {
	lz.keys, lz.kn = keys, kn
	n := int32(0)
	for l := lz.klive; l != 0; l &= l - 1 {
		lz.row[bits.TrailingZeros64(l)] = n
		n += int32(kn)
	}
}

// lzClass is the set of live options whose key at lz's yield equals
// option o's.
func (r *runner) lzClass(lz *lzInst, o int) uint64 {
	j := lz.k - lz.anchorK - 1
	k := lz.key(o, j)
	var out uint64
	for l := r.lzLive[lz.region]; l != 0; l &= l - 1 {
		if x := bits.TrailingZeros64(l); lz.key(x, j) == k {
			out |= 1 << x
		}
	}
	return out
}

// lzStay narrows c's pending region to the representative's class at this
// yield: an event taken here, or the instance's end, tells the other
// classes apart (their own options explore them).
func (r *runner) lzStay(c *ctx) {
	lz := c.lz
	if !r.lzActive(lz) || bits.OnesCount64(r.lzLive[lz.region]) < 2 {
		return
	}
	r.lzSetLive(lz.region, r.lzClass(lz, lz.rep))
}

// lzNarrow narrows c's pending region to the class of option o at this
// yield, and goes on in o's order: the commits since the anchor are made
// again in that order, with the in-place checks, for real.
func (r *runner) lzNarrow(c *ctx, o int) {
	lz := c.lz
	region := lz.region
	class := r.lzClass(lz, o)
	if !r.lzPaid[region] && class&1 == 0 {
		// The run now stands for orders other than program order only.
		r.lzPaid[region] = true
		r.rUsed++
		if r.opt.OnChoice != nil {
			r.opt.OnChoice(r.sched)
		}
	}
	r.lzSetLive(region, class)
	r.lzCollapse()
	rep := bits.TrailingZeros64(class)
	if rep == lz.rep {
		return
	}
	k := lz.k
	r.lzRestore(c, lz)
	lz.rep = rep
	ord := lz.ords[rep]
	for j := lz.anchorK; j < k; j++ {
		st := lz.buf[ord[j]]
		r.poke(st.addr, st.val)
		if r.visible(st.addr) {
			r.ver++
		}
		r.onCommit(c, st)
		c.occ[st.site]++
		c.lastSite = st.site
		c.nyield++
		lz.k = j + 1
		if !r.opt.NoOracles && r.checked != r.ver {
			r.checked = r.ver
			r.checkYield(c, st.site)
		}
		if r.stopped {
			return
		}
	}
}

// lzSetLive sets region's live options, noting when none of them is one
// kbuild's compiler may emit (the run is then the no-alias model's only).
func (r *runner) lzSetLive(region fgraph.Site, live uint64) {
	r.lzLive[region] = live
	if r.lzPaid[region] && live&r.lzOpt[region].kb == 0 && !r.sc.Alias {
		r.aliasDep = true
	}
}

// lzCredit counts coverage for an event taken after lz.k commits of a
// pending instance: it stands for its class, whose options committed
// different stores last.
func (r *runner) lzCredit(lz *lzInst, level int) {
	if r.cov == nil && r.snaps == nil {
		return
	}
	at := func(o int) fgraph.Site { return lz.buf[lz.ords[o][lz.k-1]].site }
	live := r.lzLive[lz.region]
	for l := live; l != 0; l &= l - 1 {
		o := bits.TrailingZeros64(l)
		s := at(o)
		first := true // the first option of the class with this site
		for m := live & (1<<o - 1); m != 0; m &= m - 1 {
			if at(bits.TrailingZeros64(m)) == s {
				first = false
				break
			}
		}
		if first && s != at(lz.rep) {
			r.covHitAt(s, level)
		}
	}
}

// lzAfterYield is called after the yield that follows the k-th commit of
// c's pending instance lz: after an event there it moves the anchor past
// it and runs the sandboxes again. It returns the option the instance
// goes on in (lz.rep), which the yield may have changed: it narrowed the
// region to another class (lzNarrow), or a nested instance of the region,
// inside an event there, did.
func (r *runner) lzAfterYield(c *ctx, lz *lzInst) int {
	if !r.lzActive(lz) {
		if lz.rep != 0 {
			internalf("lazy orders: %s left pending while committed in option %d", lz.region, lz.rep)
		}
		return 0
	}
	if rep := bits.TrailingZeros64(r.lzLive[lz.region]); rep != lz.rep {
		// Every live option has committed the same stores here (the event
		// narrowed the region to one class), so the rest is the new
		// representative's.
		var a, b uint64
		for _, j := range lz.ords[rep][:lz.k] {
			a |= 1 << j
		}
		for _, j := range lz.ords[lz.rep][:lz.k] {
			b |= 1 << j
		}
		if a != b {
			internalf("lazy orders: %s switched to option %d, which committed other stores", lz.region, rep)
		}
		lz.rep = rep
	}
	if lz.evAt == lz.k && lz.k < len(lz.buf) {
		r.lzAnchorAt(c, lz)
		r.lzSandbox(c, lz)
	}
	return lz.rep
}

// lzSplittable reports whether a pending region stands for more than one
// order: a later yield may still tell them apart.
func (r *runner) lzSplittable() bool {
	for _, reg := range r.lzList {
		if r.lzLive[reg]&(r.lzLive[reg]-1) != 0 {
			return true
		}
	}
	return false
}

// lzQuiet reports whether the only choices left to the run are splits of
// pending regions (no event is left): the quiescent points are then looked
// up (dfs.quiet).
func (r *runner) lzQuiet() bool {
	b := &r.sc.Bound
	return r.lzSplittable() && (b.spent(r.kUsed, r.rUsed, r.eUsed) || r.kUsed >= b.K && r.eUsed >= b.E)
}

// lzEnd ends c's pending instance.
func (r *runner) lzEnd(c *ctx) {
	c.lz = nil
	r.lzN--
}

// lzWeights are the schedules a run stands for: every choice of one live
// option per pending region that the budget left allows (program order
// costs nothing; another order one of R and of C, unless the region has
// paid already), and as many of kbuild's.
func (r *runner) lzWeights() (w, wk int64) {
	b := &r.sc.Bound
	J := b.R - r.rUsed
	if b.C > 0 {
		J = min(J, b.C-(r.kUsed+r.rUsed+r.eUsed))
	}
	w, wk = 1, 1
	var m, mk []int
	for _, reg := range r.lzList {
		live, kb := r.lzLive[reg], r.lzOpt[reg].kb
		if r.lzPaid[reg] {
			w *= int64(bits.OnesCount64(live))
			wk *= int64(bits.OnesCount64(live & kb))
			continue
		}
		m = append(m, bits.OnesCount64(live&^1))
		mk = append(mk, bits.OnesCount64(live&kb&^1))
	}
	w *= esum(m, J)
	wk *= esum(mk, J)
	if w < 1 {
		// Program order, or the options of a paid region, are always left.
		internalf("lazy orders: a run that stands for %d schedules", w)
	}
	if r.aliasDep && !r.sc.Alias {
		wk = 0
	}
	return w, wk
}

// esum is e_0 + ... + e_J of m, the elementary symmetric sums: the ways to
// pick at most J of the regions and one of each one's options.
func esum(m []int, J int) int64 {
	if J < 0 {
		return 0
	}
	J = min(J, len(m))
	var buf [8]int64
	e := buf[:]
	if J >= len(e) {
		e = make([]int64, J+1)
	}
	e[0] = 1
	for _, x := range m {
		for j := J; j >= 1; j-- {
			e[j] += e[j-1] * int64(x)
		}
	}
	var s int64
	for _, v := range e[:J+1] {
		s += v
	}
	return s
}

// lzMaterialize runs the failing lazy run res again with the eager engine,
// on runner m: each region pending at its end in its representative's
// order (program order while that is live), every other region as res
// chose it, and each event at the same position of its context. The
// result is a schedule of the eager engine's, which its file replays, with
// res's weights. A run that does not fail the same way is an internal
// error: the lazy run did not stand for its representative.
func (r *runner) lzMaterialize(res *Result, m *runner, ro RunOptions) *Result {
	ch := &lzEager{m: m, evs: res.Schedule.Events, ords: r.evOrd, orders: map[fgraph.Site]Order{}}
	for _, o := range res.Schedule.Orders {
		ch.orders[o.Region] = o
	}
	for _, reg := range r.lzList {
		if r.lzPaid[reg] {
			// An option of kbuild's if the run stands for one: a failure
			// under kbuild is reported as one.
			live := r.lzLive[reg]
			if kb := live & r.lzOpt[reg].kb; res.weightK > 0 && kb != 0 {
				live = kb
			}
			rep := bits.TrailingZeros64(live)
			ch.orders[reg] = Order{Region: reg, Sites: r.lzOpt[reg].sites[rep]}
		}
	}
	ro.Coverage, ro.OnChoice, ro.Trace = nil, nil, false
	out := m.run(ch, ro)
	if ch.used != len(ch.evs) || !out.Failed() || violOracles(out) != violOracles(res) {
		internalf("lazy orders: a failing run (%s) run again with its orders took %d of %d events and gave %s", violSummary(res), ch.used, len(ch.evs), violSummary(out))
	}
	out.weight, out.weightK, out.Run = res.weight, res.weightK, res.Run
	return out
}

// violOracles is the set of oracles res's violations name.
func violOracles(res *Result) OracleSet {
	var o OracleSet
	for _, v := range res.Violations {
		o |= 1 << oracleIndex[v.Oracle]
	}
	return o
}

func violSummary(res *Result) string {
	if !res.Failed() {
		return "no violation"
	}
	return res.Violations[0].String()
}

// lzEager is lzMaterialize's chooser: every event at its context and
// position, every region in the order given.
type lzEager struct {
	m      *runner
	evs    []Event
	ords   []int32
	used   int
	orders map[fgraph.Site]Order
}

func (c *lzEager) Choose(p *Point, opts []Option) int {
	switch p.Kind {
	case PointYield:
		for j, e := range c.evs {
			if e.In != p.Ctx || c.ords[j] != p.ord {
				continue
			}
			for i, o := range opts {
				if e.Kind == EvIRQ && o.Kind == OptIRQ || e.Kind == EvNMI && o.Kind == OptNMI || e.Kind == EvRemote && o.Kind == OptRemote && o.Remote == e.Remote {
					c.used++
					return i
				}
			}
		}
	case PointOrder:
		want, ok := c.orders[p.Pos.Site]
		if !ok {
			return 0
		}
		buf := c.m.top().buf
		for i, o := range opts {
			if slices.Equal(sitesOf(buf, o.Order), want.Sites) && slices.Equal(sitesOf(buf, o.Drop), want.Drop) {
				return i
			}
		}
		internalf("lazy orders: region %s offers no order %v", p.Pos.Site, want.Sites)
	}
	return 0
}
