package harness

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Totals kept per pending order (the state cache with lazy orders at R=1).
//
// A state with pending regions (lazy.go) stands for several region orders
// at once: its live options. Two states that differ only in their live
// options never merged in the state cache, although most of what lies
// below them is the same: a third of peer-spin K=3's runs explored, again,
// the orders an earlier state had explored under other company. With R=1
// the budget allows at most one region out of program order, so every
// schedule below a state s with pending regions P(s) is one *combo*:
//
//   - (r, o): region r of P(s) in order o, other than program order, and
//     every other region of P(s) in program order;
//   - prog: every region of P(s) in program order (which includes the
//     schedules reordering a region that becomes pending below s); there
//     is none once a region has paid (lzNarrow to a class without program
//     order).
//
// A combo's schedules below s are those of the eager engine from s with
// the combo's orders chosen: they depend on the state without its live
// sets (memory, contexts, budget, which regions are pending and whether
// one paid, the anchor of an instance in flight) and on the combo's own
// future in the instances in flight (its keys there: appendOptKeys), not
// on which other options are live. So such a state is looked up by its
// *reduced key* (the state encoded without the live sets, the
// representative of an instance in flight and the other options' keys:
// runner.reduced) and one signature per combo; the table (splitTable)
// holds, per reduced key, the totals of every combo stored under it, and
// a lookup hits when every combo of the state is there: the subtree's
// totals are their sum, from whichever states stored them.
//
// To store a state's combos, its subtree's totals are kept per combo:
//   - the schedules, failing schedules and choice points of (r, o) by
//     running totals per region and option (splitter.ro), to which every
//     counted run and hit adds its combos' counts: the subtree's are the
//     difference since the point, as for the totals themselves; prog's
//     are the rest;
//   - the known findings per combo at each recorded point (splitCombo.kt),
//     by the clocks of cache.go, each combo of a run or a hit adding to
//     the combo of the point it falls in (at): a known finding's oracles
//     (knownTot.by) cannot be subtracted, and their union over the combos
//     would overstate a state that stands for fewer of them.
//
// States without pending regions are cached as before: everything below
// them is their prog. States with pending regions go to this table only
// (splitTable, which the workers share under a lock). Tails keep their
// own table; a tail hit stands for the run's combos at the point, one
// schedule each (tailCombos). With R > 1 a schedule may reorder two
// regions, the combos above do not cover it, and the engine is off.
//
// The keys of an option in the instances in flight are in its signature,
// as they are in the whole state's encoding. Left out (a throwaway test,
// 6 Dec 2026), std's and peer-spin's counts did not change: they should
// follow from the anchor and the option's order, which the reduced key
// holds. They stay, at a small cost, rather than rest on that argument.

// combo is a schedule class below a state with pending regions: region
// site in option o (o > 0), or prog (o < 0).
type combo struct {
	site fgraph.Site
	o    int8
}

var progCombo = combo{o: -1}

// splitCombo is a combo of a recorded point: its signature, the running
// totals of (site, o) when the point was recorded (not prog's), and the
// known findings of its schedules so far.
type splitCombo struct {
	c   combo
	sig uint64
	t0  totals
	kt  *knownTot // nil until the first count comes (splitter.newKT)
}

// weighted is a combo of a counted run or a hit, with its totals and its
// own known findings (a hit's or a left point's; nil: none).
type weighted struct {
	c  combo
	t  totals
	kt *knownTot
}

// splitter is a worker's part of the per-combo totals.
type splitter struct {
	*splitTable
	// q is the worker's count of lookups of the shared table (retire).
	q *quiet
	// ro: the running totals per region and order (not program order).
	ro *[fgraph.NumSites][64]totals
	// hit is the combos of the subtree the run stopped at (every hit).
	hit []weighted
	// Scratch: a run's or a left point's combos; a signature's words; the
	// combos of the point recorded at each depth of the path.
	run   []weighted
	words []uint64
	pool  [][]splitCombo
	kts   []knownTot  // a hit's combos' known findings (hit[i].kt)
	free  []*knownTot // the points' (splitCombo.kt), given back when left
	kept  knownTot    // keep's copy
}

// splitTable is the stored combos, which the workers share: they store
// under mu and look up without it (blockShared).
type splitTable struct {
	// Read by blockShared, apart from what the storing worker writes: on a
	// cache line of their own, so that a lookup does not wait for the line
	// that the other worker's lock and counters last wrote (with the lock
	// taken by lookups too, two workers spent 4 % more of their time in the
	// table than one; peer-spin K=3, 6 Dec 2026, seventeenth session).
	_      [64]byte
	shared bool
	// hk is the exploration's test hooks (hooks.go).
	hk *testHooks
	// pub, when shared, is the index's slots as published last, and
	// blkDir and slabDir the directories of blk and slab (chunked.share).
	pub     atomic.Pointer[[]slot]
	blkDir  [][]uint64
	slabDir [][]splitKnown
	_       [64]byte

	mu sync.Mutex
	// The table: per reduced key, a block of its stored combos in blk
	// (blkLen: the signatures, then per combo the totals and the known
	// findings' place in slab), so that a lookup of every combo
	// of a state reads one block (a table keyed per combo cost a cache
	// miss per combo: 0.4 s more on peer-spin K=3). The index is slots as
	// the state cache's (a Go map was 10 MB of garbage as it grew and 2 %
	// of peer-spin K=3's time in its lookups); keys is how many it holds.
	slots []slot
	next  []slot // the array slots will double into, mapped ahead (aheadOf)
	keys  int
	// spare: the blocks left behind when theirs grew, by their room (below
	// spareCaps combos), for new blocks to take (spareBlock). Without
	// them, peer-spin K=3 left 22,843 blocks behind: 9 of the blocks'
	// 40 MiB, and std C=0 with two workers peaked at 815 MB of RSS
	// against 714 MB. Shared, a block left behind waits until no lookup
	// can be reading it (retire).
	spare [spareCaps][]int32
	// readers are the workers' counts of lookups begun and ended (odd: in
	// one; splitter.q). open is the blocks retired since the last seal;
	// sealed, those retired before it, with the readers' counts then
	// (sealSeen), which go to spare once every reader then in a lookup
	// has left it (reclaim).
	readers      []*quiet
	open, sealed []retiredBlock
	sealSeen     []uint64
	reused       int // blocks taken from spare while shared
	blk          chunked[uint64]
	slab         chunked[splitKnown]
	mem          arena
	full         int64
	states       int64
	max          int // combos at most (ExploreOptions.CacheEntries)
	n            int // combos stored
	// closed: a store was refused (the table is full). From then on the
	// states with pending regions are looked up here, then stored whole
	// in the state cache's table, as without the totals per combo, and
	// no state is stored here: a point recorded before may have missed
	// some of its subtree's combos since (splitting).
	closed atomic.Bool
}

// quiet is a worker's count of lookups of a shared table begun and ended,
// on a cache line of its own.
type quiet struct {
	_ [64]byte
	n atomic.Uint64
	_ [56]byte
}

// retiredBlock is a block left behind, at, with room for room combos.
type retiredBlock struct {
	at   int32
	room int
}

// register makes a reader's count, for a worker that looks up the shared
// table. A reader registered after a block was retired reads the index
// after the block was unlinked from it, so the block need not wait for it.
func (sp *splitTable) register() *quiet {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	q := new(quiet)
	sp.readers = append(sp.readers, q)
	return q
}

// retire keeps a block that a key outgrew, shared, after the key's new
// block is in the index: a lookup that read the index before may still
// read it.
func (sp *splitTable) retire(at int32, room int) {
	sp.open = append(sp.open, retiredBlock{at, room})
}

// reclaim gives the sealed blocks to spare once every reader that was in
// a lookup when they were sealed has left it (its count moved on: a lookup
// begun after the seal read the index after they were unlinked), then
// seals the open ones with the readers' counts now. A reader's count is
// written (atomically) after its last read of a block, and read here
// before the block is written again.
func (sp *splitTable) reclaim() {
	if len(sp.sealed) > 0 {
		for i, n := range sp.sealSeen {
			if n&1 == 1 && sp.readers[i].n.Load() == n {
				return // still in the lookup it was in
			}
		}
		for _, b := range sp.sealed {
			sp.spare[b.room] = append(sp.spare[b.room], b.at)
		}
		sp.sealed = sp.sealed[:0]
	}
	if len(sp.open) > 0 {
		sp.open, sp.sealed = sp.sealed, sp.open
		sp.sealSeen = sp.sealSeen[:0]
		for _, q := range sp.readers {
			sp.sealSeen = append(sp.sealSeen, q.n.Load())
		}
	}
}

// newSplitTable makes a table of at most max combos (max: the state
// cache's bound, ExploreOptions.CacheEntries). A combo takes about what a
// whole state takes there (a 56-byte record in a block that doubles,
// against a 48-byte entry and a 16-byte slot), so this table can grow to
// about the other's size. With a quarter of it, std C=0 filled it early
// and looked up every later state twice (here, then whole): 80.4 s against
// 72.1 s without the totals per combo; with the whole bound, 69.5 s and
// 3,991,267 runs instead of 4,843,477, at 1,227 MiB of peak RSS instead of
// 538 MiB (6 Dec 2026, one worker).
func newSplitTable(max int, shared bool) *splitTable {
	if max <= 0 {
		max = DefaultCacheEntries
	}
	t := &splitTable{max: max, shared: shared, hk: &noHooks}
	t.blk.shift, t.slab.shift = slabChunkShift, slabChunkShift
	if shared {
		// Blocks take at most 1.5 times the words of their combos, and
		// without reuse the blocks left behind as many again: 5 words a
		// combo, 2 a block; a combo's known findings at most one each.
		t.blk.share((max*22)>>slabChunkShift + 2)
		t.slab.share((max*len(KnownFindings))>>slabChunkShift + 2)
		t.blkDir, t.slabDir = t.blk.dir, t.slab.dir
	}
	return t
}

// splitKnown is a stored combo's count of one known finding (its index in
// KnownFindings): schedules, kbuild's, the oracles.
type splitKnown struct {
	d, dk uint32
	j, by uint8
}

// The words of a block of capacity c: its length and c, the combos'
// signatures (c words, side by side, so that a search reads eight to a
// cache line: with each beside its totals, the searches were 2 % of
// peer-spin K=3's instructions), then per combo blkRec words: runs |
// viol<<32, runsK | violK<<32, rel (choice points less the prefix's per
// schedule, as cacheEntry), and its known findings (the first's index in
// slab << 32 | their number). (Counts past 32 bits are not stored: a
// subtree of more than 4 G schedules. With a word per count the table
// took 50 % more memory, and on this project's virtual machine every MiB
// first touched costs about 1.4 ms of the kernel's page clearing: 9 % of
// peer-spin K=3's time, two thirds of it this table's.)
const (
	blkHead = 2
	blkRec  = 4
)

// spareCaps bounds the room of the blocks kept for reuse (splitTable.spare).
const spareCaps = 64

// blkLen is the length of a block of capacity c.
func blkLen(c int) int { return blkHead + c*(1+blkRec) }

// index is where the block of reduced key k starts in blk, if it has one.
func (sp *splitTable) index(k stateKey) (int32, bool) {
	if len(sp.slots) == 0 {
		return 0, false // nothing stored yet: no slots either
	}
	a, b := slotKey(k)
	s := sp.slots[probe(sp.slots, a, b)]
	return s.entry(), s.a != 0 || s.be != 0
}

// setIndex makes at the start of k's block.
func (sp *splitTable) setIndex(k stateKey, at int32) {
	if sp.slots == nil {
		sp.slots = allocOf[slot](&sp.mem, 1<<10)
	}
	aheadOf(&sp.mem, sp.slots, sp.keys+1, &sp.next)
	if (sp.keys+1)*4 > len(sp.slots)*3 {
		old := sp.slots
		sp.slots = doubled(&sp.mem, old, &sp.next)
		if !sp.shared {
			freeOf(&sp.mem, old)
		} else {
			// As the state cache's (stateCache.grow): published, then
			// the old array reads as free slots.
			p := new([]slot)
			*p = sp.slots
			sp.pub.Store(p)
			retireOf(&sp.mem, old)
		}
	}
	if sp.shared && sp.pub.Load() == nil {
		p := new([]slot)
		*p = sp.slots
		sp.pub.Store(p)
	}
	a, b := slotKey(k)
	i := probe(sp.slots, a, b)
	if s := sp.slots[i]; s.a == 0 && s.be == 0 {
		sp.keys++
	}
	if !sp.shared {
		sp.slots[i] = mkSlot(a, b, at)
		return
	}
	// A reader sees the key's old block or its new one, each with the
	// combos it holds.
	storeSlot(&sp.slots[i], mkSlot(a, b, at))
}

// block is the stored combos of reduced key k (nil: none) and where they
// start in blk.
func (sp *splitTable) block(k stateKey) (b []uint64, at int32) {
	at, ok := sp.index(k)
	if !ok {
		return nil, 0
	}
	c := int(sp.blk.at(at, blkHead)[1])
	return sp.blk.at(at, blkLen(c)), at
}

// blockShared is block for a worker that does not hold the lock: the
// block of k as published last (setIndex, probeShared), its length read
// whole, cut to the combos published (store writes its combos, then the
// length). A block left behind when its key's grew keeps the combos it
// had until no lookup can be reading it (retire): a lookup may miss a
// combo stored a moment ago, which costs time only, never sees one half
// written.
func (sp *splitTable) blockShared(k stateKey) (b []uint64, n int) {
	p := sp.pub.Load()
	if p == nil {
		return nil, 0
	}
	at, ok := probeShared(*p, k)
	if !ok {
		return nil, 0
	}
	h := chunkAt(sp.blkDir, slabChunkShift, at, blkHead)
	n = int(atomic.LoadUint64(&h[0]))
	c := int(h[1]) // set before the block was published, never changed
	return chunkAt(sp.blkDir, slabChunkShift, at, blkLen(c)), n
}

// slabShared is slab.at for a worker that does not hold the lock.
func (sp *splitTable) slabShared(at int32, n int) []splitKnown {
	return chunkAt(sp.slabDir, slabChunkShift, at, n)
}

// findN is the record of the combo of signature sig among the first n
// combos of block b (nil: none).
func findN(b []uint64, n int, sig uint64) []uint64 {
	c := int(b[1])
	for i, s := range b[blkHead : blkHead+n] {
		if s == sig {
			return b[blkHead+c+i*blkRec:][:blkRec]
		}
	}
	return nil
}

// splitOn reports whether the state cache keeps per-combo totals: lazy
// orders at R=1, hashed keys, not the verifying tests.
func (cs *cacheState) splitOn() bool {
	r := cs.r
	return r.lazy && r.sc.Bound.R == 1 && cs.c.exact == nil && cs.verify == nil && !cs.r.hk.noSplit
}

// close refuses a store: the table is full (closed).
func (sp *splitTable) close() {
	sp.full++
	if !sp.closed.Swap(true) && sp.hk.splitClosed != nil {
		sp.hk.splitClosed.Add(1)
	}
}

// splitting reports whether the totals per combo are kept: splitOn, and
// the table still takes combos (splitTable.closed).
func (cs *cacheState) splitting() bool {
	return cs.splitOn() && !cs.splitter().closed.Load()
}

// pointCombos lists the combos of the current state: prog unless a region
// has paid, then (r, o) for each pending region, by site, and each live
// option other than program order.
func (r *runner) pointCombos(dst []splitCombo) []splitCombo {
	var regs [8]fgraph.Site
	ks, paid := r.pendingSorted(regs[:0])
	if !paid {
		dst = append(dst, splitCombo{c: progCombo})
	}
	for _, reg := range ks {
		for l := r.lzLive[reg] &^ 1; l != 0; l &= l - 1 {
			dst = append(dst, splitCombo{c: combo{reg, int8(bits.TrailingZeros64(l))}})
		}
	}
	return dst
}

// pendingSorted appends the pending regions to dst by site, and reports
// whether one has paid.
func (r *runner) pendingSorted(dst []fgraph.Site) (ks []fgraph.Site, paid bool) {
	ks = append(dst, r.lzList...)
	slices.Sort(ks)
	for _, reg := range ks {
		paid = paid || r.lzPaid[reg]
	}
	return ks, paid
}

// runCombos is the run's combos at its end with their weights (lzWeights
// at R=1: program order and one schedule per other live option, these
// while the budget allows one order more; a paid region's options), its
// verdict (failed) and its choice points (on its first combo). w and wk
// are the run's weights, which the combos must add up to: its pending
// regions' (lzWeights) times m, its multiplier by merged remote
// placements (runner.rmult), by which each combo is multiplied.
func (r *runner) runCombos(dst []weighted, failed bool, points, w, wk, m int64) []weighted {
	b := &r.sc.Bound
	J := b.R - r.rUsed
	if b.C > 0 {
		J = min(J, b.C-(r.kUsed+r.rUsed+r.eUsed))
	}
	kbOK := !r.aliasDep || r.sc.Alias
	var regs [8]fgraph.Site
	ks, paid := r.pendingSorted(regs[:0])
	var sw, swk int64
	add := func(c combo, cw, cwk int64) {
		cw, cwk = cw*m, cwk*m
		t := totals{runs: cw, runsK: cwk}
		if failed {
			t.viol, t.violK = cw, cwk
		}
		if len(dst) == 0 {
			t.points = points
		}
		sw, swk = sw+cw, swk+cwk
		dst = append(dst, weighted{c: c, t: t})
	}
	if !paid {
		add(progCombo, 1, boolI(kbOK))
	}
	for _, reg := range ks {
		if !r.lzPaid[reg] && J < 1 {
			continue
		}
		kb := r.lzOpt[reg].kb
		for l := r.lzLive[reg] &^ 1; l != 0; l &= l - 1 {
			o := bits.TrailingZeros64(l)
			add(combo{reg, int8(o)}, 1, boolI(kbOK && kb&(1<<o) != 0))
		}
	}
	if sw != w || swk != wk {
		internalf("split: a run's combos weigh %d (%d of kbuild's), its weights %d (%d)", sw, swk, w, wk)
	}
	return dst
}

func boolI(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sig is combo c's signature in the current state: the combo, and its
// keys in each instance in flight (option o in its region's, program
// order in the others').
func (r *runner) sig(sp *splitter, c combo) uint64 {
	w := append(sp.words[:0], uint64(c.site)|uint64(uint8(c.o))<<32)
	for _, x := range r.ctxs {
		if lz := x.lz; lz != nil && r.lzActive(lz) {
			o := 0
			if lz.region == c.site && c.o > 0 {
				o = int(c.o)
			}
			if r.hk.lzStateDrop != "instance" {
				w = r.appendOptKeys(w, lz, o)
			}
		}
	}
	sp.words = w
	return xxh3.Hash(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8))
}

// appendOptKeys encodes option o's keys in the instance lz in flight,
// from here to its end (appendInst's part for o).
func (r *runner) appendOptKeys(dst []uint64, lz *lzInst, o int) []uint64 {
	if lz.evAt == lz.k {
		return append(dst, 1)
	}
	j := lz.k - lz.anchorK - 1
	if j < 0 || lz.kn == 0 {
		return append(dst, 2)
	}
	dst = append(dst, 3)
	for x := j; x < lz.kn; x++ {
		k := lz.key(o, x)
		dst = append(dst, k.mask, k.sig)
	}
	return dst
}

// findSplit looks the current state (with pending regions) up by its
// reduced key and its combos' signatures, at path depth depth; on a miss
// it sets *kd to the point to record, as find does.
func (cs *cacheState) findSplit(kd *keyed, depth int) (hit bool) {
	r, sp := cs.r, cs.splitter()
	r.reduced = true
	cs.scratch = r.appendState(cs.scratch[:0], cs.c.drop)
	r.reduced = false
	k := hashState(cs.scratch)
	i := len(r.tails.keys)
	for len(sp.pool) <= i {
		sp.pool = append(sp.pool, nil)
	}
	pts := r.pointCombos(sp.pool[i][:0])
	for j := range pts {
		pts[j].sig = r.sig(sp, pts[j].c)
	}
	sp.pool[i] = pts
	p0 := int64(r.points)
	cs.counts[0].Lookups++
	if sp.take(pts, k, p0) {
		cs.counts[0].Hits++
		cs.hit, cs.hitSplit, cs.hitP, cs.hitAt = true, true, p0, r.clock()
		r.stopped, r.hitExec = true, r.executed()
		return true
	}
	for j := range pts {
		if c := pts[j].c; c.o >= 0 {
			pts[j].t0 = sp.ro[c.site][c.o]
		}
	}
	*kd = keyed{depth: depth, k: k, t0: cs.tot, p0: p0, at: r.clock(), mult: r.rmult, sp: pts}
	return false
}

// splitter is the worker's per-combo totals (their running totals made at
// first use).
func (cs *cacheState) splitter() *splitter {
	if cs.sp == nil || cs.sp.splitTable == nil {
		internalf("split: a piece without its worker's table of combos")
	}
	sp := cs.sp
	if sp.ro == nil {
		sp.ro = new([fgraph.NumSites][64]totals)
	}
	return sp
}

// take sets sp.hit to the stored totals of every combo of pts under the
// reduced key k, if all are stored.
func (sp *splitter) take(pts []splitCombo, k stateKey, p0 int64) bool {
	sp.hit = sp.hit[:0]
	if cap(sp.kts) < len(pts) {
		sp.kts = make([]knownTot, len(pts)+8)
	}
	// Shared, without the lock (blockShared); the lock taken by every
	// lookup cost two workers 4 % of their time (its cache line and the
	// table's counters passed from one core to the other at each).
	var b []uint64
	var n int
	if sp.shared {
		if sp.q == nil {
			sp.q = sp.register()
		}
		sp.q.n.Add(1) // in a lookup (retire)
		defer sp.q.n.Add(1)
		b, n = sp.blockShared(k)
	} else if b, _ = sp.block(k); b != nil {
		n = int(b[0])
	}
	if b == nil {
		return false
	}
	for i := range pts {
		pc := &pts[i]
		rec := findN(b, n, pc.sig)
		if rec == nil {
			if sp.hk.splitWrong == "partial" && len(sp.hit) > 0 {
				continue
			}
			return false
		}
		runs := int64(uint32(rec[0]))
		// (A lazy run counts its choice points once, and stands for
		// several schedules: a count of points per schedule can come out
		// below zero here, and is taken as none.)
		w := weighted{c: pc.c, t: totals{runs: runs, points: max(0, int64(rec[2])+runs*p0), viol: int64(rec[0] >> 32), runsK: int64(uint32(rec[1])), violK: int64(rec[1] >> 32)}}
		if nk := int(uint32(rec[3])); nk > 0 {
			kt := &sp.kts[:cap(sp.kts)][len(sp.hit)]
			*kt = knownTot{}
			var ks []splitKnown
			if sp.shared {
				ks = sp.slabShared(int32(rec[3]>>32), nk)
			} else {
				ks = sp.slab.at(int32(rec[3]>>32), nk)
			}
			for _, x := range ks {
				kt.d[x.j], kt.dk[x.j], kt.by[x.j] = int64(x.d), int64(x.dk), x.by
				kt.nz |= 1 << (x.j & (maxKnown - 1))
			}
			w.kt = kt
		}
		sp.hit = append(sp.hit, w)
	}
	return true
}

// keep is a copy of kt that sp holds (so that the caller's, on its
// stack, does not escape to the heap: a knownTot per left point and per
// hit, 13 MiB of garbage on peer-spin K=2).
func (sp *splitter) keep(kt *knownTot) *knownTot {
	sp.kept = *kt
	return &sp.kept
}

// newKT is a zeroed knownTot for a point's combo.
func (sp *splitter) newKT() *knownTot {
	if n := len(sp.free); n > 0 {
		kt := sp.free[n-1]
		sp.free = sp.free[:n-1]
		*kt = knownTot{}
		return kt
	}
	return new(knownTot)
}

// hitTotals sums the hit's combos: the subtree's totals and known findings.
func (sp *splitter) hitTotals(t *totals, kt *knownTot, mask uint64) (known bool) {
	for i := range sp.hit {
		w := &sp.hit[i]
		t.runs += w.t.runs
		t.points += w.t.points
		t.viol += w.t.viol
		t.runsK += w.t.runsK
		t.violK += w.t.violK
		if w.kt != nil {
			known = true
			add := w.kt.bitsIn(mask)
			for b := add; b != 0; b &= b - 1 {
				j := bits.TrailingZeros64(b) & (maxKnown - 1)
				kt.d[j] += w.kt.d[j]
				kt.dk[j] += w.kt.dk[j]
				kt.by[j] |= w.kt.by[j]
			}
			kt.nz |= add
		}
	}
	return known
}

// tailCombos sets sp.hit to the combos of a stored tail the run stopped at
// (t, kt: its totals), which hold one run: the run's combos at the point
// (no choice is left, so they are its combos at its end), each one
// schedule of it with its verdict and known findings.
func (cs *cacheState) tailCombos(t totals, kt *knownTot) {
	sp, r := cs.sp, cs.r
	sp.hit = sp.hit[:0]
	if len(r.lzList) == 0 {
		sp.hit = append(sp.hit, weighted{c: progCombo, t: t, kt: sp.keep(kt)})
		return
	}
	w, wk := r.lzWeights()
	if w != t.runs {
		internalf("split: a stored tail of %d schedules at a point that stands for %d", t.runs, w)
	}
	kbuild := t.runsK != 0
	saved := r.aliasDep
	if !kbuild {
		// The tail's run turned alias-dependent after the point.
		r.aliasDep, wk = true, 0
		if r.sc.Alias {
			internalf("split: a stored tail of no kbuild schedule in an alias scenario")
		}
	}
	ws := r.runCombos(sp.run[:0], t.viol > 0, t.points, w, wk, 1)
	r.aliasDep = saved
	if wk != t.runsK {
		internalf("split: a stored tail of %d kbuild schedules at a point that stands for %d", t.runsK, wk)
	}
	sp.run = ws
	if cap(sp.kts) < len(ws) {
		sp.kts = make([]knownTot, len(ws)+8)
	}
	for i, w := range ws {
		if t.viol > 0 && t.violK == 0 {
			w.t.violK = 0
		}
		w.kt = &sp.kts[:cap(sp.kts)][i]
		*w.kt = knownTot{}
		for b := kt.bitsIn(cs.c.kmask); b != 0; b &= b - 1 {
			j := bits.TrailingZeros64(b) & (maxKnown - 1)
			if kt.d[j] != 0 {
				if kt.d[j] != t.runs {
					internalf("split: a stored tail of %d schedules detects %s in %d", t.runs, KnownFindings[j].Name, kt.d[j])
				}
				w.kt.d[j] = w.t.runs
				w.kt.by[j] = kt.by[j]
				w.kt.nz |= 1 << j
			}
			if kt.dk[j] != 0 {
				w.kt.dk[j] = w.t.runsK
				w.kt.nz |= 1 << j
			}
		}
		sp.hit = append(sp.hit, w)
	}
}

// comboLess is pointCombos' order: program order first, then by region
// and option.
func comboLess(a, b combo) bool {
	if a.o < 0 || b.o < 0 {
		return a.o < 0 && b.o >= 0
	}
	return a.site < b.site || a.site == b.site && a.o < b.o
}

// at is the index in pts (a point's combos) of the combo c of a run or a
// hit below the point falls in: c itself if its region is pending at the
// point, else prog.
func at(pts []splitCombo, c combo) int {
	if c.o >= 0 {
		for i := range pts {
			if pts[i].c == c {
				return i
			}
		}
	}
	if len(pts) == 0 || pts[0].c != progCombo {
		internalf("split: combo %v below a point without program order", c)
	}
	return 0
}

// addRo adds w's totals to the running totals of its region and option.
func (sp *splitter) addRo(w *weighted) {
	if w.c.o < 0 {
		return
	}
	t := &sp.ro[w.c.site][w.c.o]
	t.runs += w.t.runs
	t.points += w.t.points
	t.viol += w.t.viol
	t.runsK += w.t.runsK
	t.violK += w.t.violK
}

// addKnown adds to the combo of the deepest recorded point that each of
// ws falls in what dets in [from, to) show for its schedules, and, for the
// other findings, its own known findings (a hit's).
func (sp *splitter) addKnown(pts []splitCombo, ws []weighted, dets []det, from, to int64, mask uint64) {
	var p preDets
	p.of(dets, from, to)
	for i := range ws {
		w := &ws[i]
		if w.t.runs == 0 || p.seen == 0 && w.kt == nil {
			continue
		}
		pc := &pts[at(pts, w.c)]
		if pc.kt == nil {
			pc.kt = sp.newKT()
		}
		pc.kt.addPre(&p, w.t.runs, w.t.runsK, w.kt, mask)
	}
}

// comboTotals is, for the recorded point kd whose subtree's totals are t,
// each combo's totals (prog's are the rest).
func (sp *splitter) comboTotals(kd *keyed, t totals) []weighted {
	out := sp.run[:0]
	rest := t
	for i := range kd.sp {
		pc := &kd.sp[i]
		w := weighted{c: pc.c, kt: pc.kt}
		if pc.c.o >= 0 {
			now := sp.ro[pc.c.site][pc.c.o]
			w.t = totals{runs: now.runs - pc.t0.runs, points: now.points - pc.t0.points, viol: now.viol - pc.t0.viol,
				runsK: now.runsK - pc.t0.runsK, violK: now.violK - pc.t0.violK}
			rest.runs -= w.t.runs
			rest.points -= w.t.points
			rest.viol -= w.t.viol
			rest.runsK -= w.t.runsK
			rest.violK -= w.t.violK
		}
		if sp.hk.splitWrong == "by" {
			w.kt = sp.keep(&kd.kt)
		}
		out = append(out, w)
	}
	if len(out) > 0 && out[0].c == progCombo {
		out[0].t = rest
	} else if rest != (totals{}) {
		internalf("split: %+v of a subtree in no combo of a point without program order", rest)
	}
	if rest.runs < 0 || rest.viol < 0 || rest.runsK < 0 || rest.violK < 0 {
		internalf("split: a subtree's program-order combo has negative totals %+v (choice points are per run, not per schedule: not checked)", rest)
	}
	sp.run = out
	return out
}

// leaveSplit gives the parent point pp (nil: none) what the subtree of kd,
// left, holds, and stores kd's combos (kd.sp) or kd (cacheState.store),
// while the totals per combo are kept (splitting).
func (cs *cacheState) leaveSplit(kd *keyed, t totals, pp *keyed) {
	sp, mask := cs.splitter(), cs.c.kmask
	if kd.sp == nil {
		if pp != nil && pp.sp != nil {
			pc := &pp.sp[at(pp.sp, progCombo)]
			if pc.kt == nil {
				pc.kt = sp.newKT()
			}
			pc.kt.addPre(&kd.pre, t.runs, t.runsK, &kd.kt, mask)
		}
		cs.store(kd, t)
		return
	}
	ws := sp.comboTotals(kd, t)
	if pp != nil && pp.sp != nil {
		j := 0 // both lists are by combo (pointCombos): a walk finds most
		for i := range ws {
			w := &ws[i]
			if w.t.runs == 0 {
				continue
			}
			for j < len(pp.sp) && comboLess(pp.sp[j].c, w.c) {
				j++
			}
			k := j
			if k >= len(pp.sp) || pp.sp[k].c != w.c || w.c.o < 0 {
				k = at(pp.sp, w.c)
			}
			pc := &pp.sp[k]
			if pc.kt == nil {
				pc.kt = sp.newKT()
			}
			pc.kt.addPre(&kd.pre, w.t.runs, w.t.runsK, w.kt, mask)
		}
	}
	sp.store(kd, ws, mask)
}

// store stores the combos ws of the point kd that its reduced key does not
// hold yet, and gives back kd's knownTots. (A key that held none holds
// none of them: the combos of a point are distinct, and so are their
// signatures, but for a collision of xxh3's 64 bits.)
func (sp *splitter) store(kd *keyed, ws []weighted, mask uint64) {
	if sp.shared {
		sp.mu.Lock()
		defer sp.mu.Unlock()
	}
	if m := kd.mult; m > 1 {
		// Per schedule of the path above, as the state cache stores a
		// subtree (cacheState.store, remotes.go): a hit multiplies them
		// by its own path's (splitHit). ws and their known findings are
		// kd's, done with.
		for i := range ws {
			perPath(&ws[i].t, ws[i].kt, m, "split")
		}
	}
	b, at := sp.block(kd.k)
	had := b != nil
	// bn is b's combos, this store's written so far included. Shared, the
	// length is published once, at the end (an atomic store waits for the
	// writes before it: one per combo was 0.23 s of a two-worker profile of
	// peer-spin K=3's ten explorations), or by the index with a new block.
	bn := 0
	if b != nil {
		bn = int(b[0])
	}
	for i := range ws {
		w := &ws[i]
		sig := kd.sp[i].sig
		if had && findN(b, bn, sig) != nil {
			continue // the same subtree, stored already
		}
		if sp.n >= sp.max || !fits32(w.t) {
			sp.close()
			continue
		}
		var nk int
		var kat int32
		if w.kt != nil {
			nzs := w.kt.bitsIn(mask)
			for b := nzs; b != 0; b &= b - 1 {
				if w.kt.d[bits.TrailingZeros64(b)&(maxKnown-1)] != 0 {
					nk++
				}
			}
			if nk > 0 {
				var ok bool
				if kat, ok = sp.slab.take(&sp.mem, nk, slabFirst); !ok {
					sp.close()
					continue
				}
				ks := sp.slab.at(kat, nk)[:0]
				for b := nzs; b != 0; b &= b - 1 {
					if j := bits.TrailingZeros64(b) & (maxKnown - 1); w.kt.d[j] != 0 {
						ks = append(ks, splitKnown{d: uint32(w.kt.d[j]), dk: uint32(w.kt.dk[j]), j: uint8(j), by: w.kt.by[j]})
					}
				}
			}
		}
		if b == nil || bn == int(b[1]) {
			// A block with room for the point's combos not stored
			// yet (at most those left), the stored combos copied.
			c, n, oc, at0 := len(ws)-i, 0, 0, at
			if b != nil {
				oc, n = int(b[1]), bn
				c = max(n+c, oc+oc/2)
			}
			nat, rc, ok := sp.spareBlock(c)
			if !ok {
				if nat, ok = sp.blk.take(&sp.mem, blkLen(c), slabFirst); !ok {
					sp.close()
					continue
				}
			}
			c = rc
			nb := sp.blk.at(nat, blkLen(c))
			if b != nil {
				// (Read again: take may have moved the first chunk.)
				ob := sp.blk.at(at, blkLen(oc))
				copy(nb[blkHead:], ob[blkHead:blkHead+n])
				copy(nb[blkHead+c:], ob[blkHead+oc:blkHead+oc+n*blkRec])
				if oc < spareCaps && !sp.shared {
					sp.spare[oc] = append(sp.spare[oc], at)
				}
			}
			nb[0], nb[1] = uint64(n), uint64(c)
			old := b != nil
			b, at = nb, nat
			sp.setIndex(kd.k, at)
			if old && oc < spareCaps && sp.shared {
				// Once the index names nb.
				sp.retire(at0, oc)
			}
		}
		c := int(b[1])
		b[blkHead+bn] = sig
		r := b[blkHead+c+bn*blkRec:][:blkRec]
		r[0], r[1] = uint64(w.t.runs)|uint64(w.t.viol)<<32, uint64(w.t.runsK)|uint64(w.t.violK)<<32
		r[2], r[3] = uint64(w.t.points-w.t.runs*kd.p0), uint64(uint32(kat))<<32|uint64(nk)
		bn++
		if !sp.shared {
			b[0] = uint64(bn)
		}
		sp.n++
	}
	if sp.shared && b != nil && int(b[0]) != bn {
		// Published: the combos and their known findings written
		// before (blockShared reads b[0] first).
		atomic.StoreUint64(&b[0], uint64(bn))
	}
	if !had && b != nil {
		sp.states++
	}
	for i := range kd.sp {
		if kt := kd.sp[i].kt; kt != nil {
			sp.free = append(sp.free, kt)
			kd.sp[i].kt = nil
		}
	}
}

// spareBlock is a block left behind by one that grew (spare) with room
// for c combos to half as many again, and its room; false if there is
// none.
func (sp *splitTable) spareBlock(c int) (at int32, room int, ok bool) {
	if sp.shared {
		sp.reclaim()
	}
	for cc := c; cc < min(spareCaps, c+c/2+1); cc++ {
		if l := len(sp.spare[cc]); l > 0 {
			at = sp.spare[cc][l-1]
			sp.spare[cc] = sp.spare[cc][:l-1]
			if sp.shared {
				sp.reused++
			}
			return at, cc, true
		}
	}
	return 0, c, false
}

// fits32 reports whether t's counts fit a block's 32-bit fields.
func fits32(t totals) bool {
	for _, v := range [4]int64{t.runs, t.viol, t.runsK, t.violK} {
		if v < 0 || v > math.MaxUint32 {
			return false
		}
	}
	return true
}

// bytes is the memory the table holds.
func (sp *splitTable) bytes() int64 {
	return sp.blk.bytes() + sp.slab.bytes() + int64(len(sp.slots))*16
}

// splitHit adds the combos of the subtree the run stopped at (totals t,
// known findings kt) to the running totals and to the known findings of
// the deepest recorded point's combos.
func (d *dfs) splitHit(res *Result, t totals, kt *knownTot) {
	cs := d.cache
	sp := cs.splitter()
	switch {
	case cs.hitSplit:
	case cs.hitC != cs.c:
		cs.tailCombos(t, kt) // a tail
	default:
		// A state without pending regions: everything below it is prog.
		sp.hit = append(sp.hit[:0], weighted{c: progCombo, t: t, kt: sp.keep(kt)})
	}
	if m := cs.r.rmult; m > 1 {
		// The stored combos are per schedule of the path (store): the
		// path's merged remote placements multiply them. (Their known
		// findings are the splitter's own copies: sp.kts, sp.kept.)
		for i := range sp.hit {
			timesPath(&sp.hit[i].t, sp.hit[i].kt, m)
		}
	}
	for i := range sp.hit {
		sp.addRo(&sp.hit[i])
	}
	if i := len(d.keys) - 1; i >= 0 && d.keys[i].sp != nil {
		sp.addKnown(d.keys[i].sp, sp.hit, res.dets, d.keys[i].at, cs.hitAt, cs.c.kmask)
	}
}

// release gives back the table's memory, counted in c's stats.
func (sp *splitTable) release(c *stateCache) {
	if sp == nil {
		return
	}
	c.splitBytes.Add(sp.bytes())
	c.mu.Lock()
	c.stats.States += sp.states
	c.stats.Full += sp.full
	c.mu.Unlock()
	sp.mem.release()
	*sp = splitTable{}
}
