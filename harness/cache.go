package harness

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The explorer's visited-state cache (ExploreOptions.Cache).
//
// At a choice point the DFS has not been to on its current path, the state
// of the run (state.go) is looked up. If the subtree below an equal state
// was explored completely before, by any worker, the run stops there and
// the explorer adds that subtree's totals (schedules, choice points,
// failing schedules, schedules per known finding) instead of running it
// again. When the DFS leaves a choice point it recorded, the totals of its
// subtree are stored under its state. The budget used so far is part of
// the state, so a hit has exactly the schedules below it that the plain
// explorer would run: the cached explorer reports the same schedule count,
// known-finding counts and violation count as the plain one (a test holds
// it to that on std, peer-spin and every mutant), and the first violation
// it meets is the plain explorer's first (a pruned subtree holds only what
// its twin already showed).
//
// What it does not give exactly: coverage counts (interrupts per site) are
// of the schedules run, not of those covered; the set of sites hit is the
// same. OnRun sees the schedules run, not the pruned ones.

// totals are the running counts of a piece, by which a subtree's are
// measured (its known findings are not: knownTot).
type totals struct {
	runs, points, viol int64
	// The same counts for the runs of kbuild's compiler model
	// (Result.Kbuild).
	runsK, violK int64
}

// perPath divides t's schedule counts and kt's findings (nil: none) by m,
// the multiplier of merged remote placements (runner.rmult) of the run
// that recorded a point: stored, a subtree's totals are per schedule of
// its path (remotes.go), for a hit to multiply by its own (timesPath).
// Choice points are per run and stay. where names the table for the
// internal error when they do not divide.
func perPath(t *totals, kt *knownTot, m int64, where string) {
	if t.runs%m != 0 || t.viol%m != 0 || t.runsK%m != 0 || t.violK%m != 0 {
		internalf("%s: totals %+v below a point of multiplier %d", where, *t, m)
	}
	t.runs, t.viol, t.runsK, t.violK = t.runs/m, t.viol/m, t.runsK/m, t.violK/m
	if kt != nil {
		for j := range kt.d {
			kt.d[j] /= m
			kt.dk[j] /= m
		}
	}
}

// timesPath is perPath undone: stored totals times the multiplier m of
// the run that hit them.
func timesPath(t *totals, kt *knownTot, m int64) {
	t.runs, t.viol, t.runsK, t.violK = t.runs*m, t.viol*m, t.runsK*m, t.violK*m
	if kt != nil {
		for j := range kt.d {
			kt.d[j] *= m
			kt.dk[j] *= m
		}
	}
}

// knownTot is what a subtree holds of the known findings, whatever its
// prefix reported: per finding, the schedules whose suffix (the run below
// the subtree's point) detects it, suppressed detections included (d; dk
// of kbuild's model), and the oracles that detect it first within the
// suffix (by, a bit per index in Oracles). The known findings reported so
// far are not part of the state (state.go, stVerdicts), so a subtree's
// count of a finding is all its schedules if its prefix reported it, else
// d; and its (oracle, finding) pairs are the prefix's or by.
type knownTot struct {
	d, dk [maxKnown]int64
	by    [maxKnown]uint8
	// nz has bit j set where d[j], dk[j] or by[j] may be non-zero: every
	// write of a finding's counts sets its bit, so that the loops over the
	// findings visit those bits only (most subtrees hold one or two of
	// the variant's twenty; the loops over every finding were 2 % of
	// peer-spin K=3's instructions). A superset: TestKnownTotNZ.
	nz uint64
}

// The findings' bits fit nz.
var _ [64 - maxKnown]struct{}

// det is one detection of a known finding in a run (runner.violate, with
// the state cache on): when (the run's clock), which finding (its index)
// and which oracle. The run's log of them (Result.dets) is in clock order,
// with one entry per finding and clock, the first.
type det struct {
	at   int64
	k, o uint8
}

// clock orders a run's detections and its recorded points: the choice
// points so far, then the tail lookups so far. At a lookup the point is
// already counted (r.points), so a detection at a clock at or after a
// recorded point's is in the point's suffix, one before it in its prefix;
// all tails are looked up after the last choice point, and told apart by
// tailN.
func (r *runner) clock() int64 { return int64(r.points)<<20 | r.tailN }

// logDet logs a detection of known finding k by oracle o.
func (r *runner) logDet(k, o int) {
	at := r.clock()
	for i := len(r.res.dets) - 1; i >= 0 && r.res.dets[i].at == at; i-- {
		if int(r.res.dets[i].k) == k {
			return
		}
	}
	r.res.dets = append(r.res.dets, det{at: at, k: uint8(k), o: uint8(o)})
}

// addDets adds to kt, for a point at clock from, what the detections of
// dets in [from, to) show: n schedules (nk of them kbuild's) detect each
// finding logged there, by the oracle of its first entry; of the other
// findings, e's counts and oracles (nil: none) are added.
func (kt *knownTot) addDets(dets []det, from, to, n, nk int64, e *knownTot, mask uint64) {
	var p preDets
	p.of(dets, from, to)
	kt.addPre(&p, n, nk, e, mask)
}

// addPre adds to kt n schedules (nk of them kbuild's) that detect each
// finding of p, by the oracle p names; of the other findings of mask (the
// variant's: stateCache.kmask), e's counts and oracles (nil: none).
func (kt *knownTot) addPre(p *preDets, n, nk int64, e *knownTot, mask uint64) {
	if ktCheck {
		kt.checkNZ()
	}
	for b := p.seen; b != 0; b &= b - 1 {
		j := bits.TrailingZeros64(b)
		kt.d[j] += n
		kt.dk[j] += nk
		kt.by[j] |= 1 << p.o[j]
	}
	kt.nz |= p.seen
	if e == nil {
		return
	}
	// Only the findings e may hold: adding another's zeros changes nothing.
	add := e.bitsIn(mask) &^ p.seen
	for b := add; b != 0; b &= b - 1 {
		j := bits.TrailingZeros64(b) & (maxKnown - 1)
		kt.d[j] += e.d[j]
		kt.dk[j] += e.dk[j]
		kt.by[j] |= e.by[j]
	}
	kt.nz |= add
}

// bitsIn is the findings of mask whose counts may not be zero (with
// ktAllSlots, every one of mask).
func (kt *knownTot) bitsIn(mask uint64) uint64 {
	if ktCheck {
		kt.checkNZ()
	}
	if ktAllSlots {
		return mask
	}
	return kt.nz & mask
}

// checkNZ is an internal error if a finding's counts are not zero and
// its bit of nz is not set (tests: ktCheck).
func (kt *knownTot) checkNZ() {
	if kt == nil {
		return
	}
	for j := range kt.d {
		if (kt.d[j] != 0 || kt.dk[j] != 0 || kt.by[j] != 0) && kt.nz&(1<<j) == 0 {
			internalf("known totals: %s has counts %d, %d, oracles %#x, and no bit in nz %#x", KnownFindings[j].Name, kt.d[j], kt.dk[j], kt.by[j], kt.nz)
		}
	}
}

// Test hooks: ktCheck checks knownTot.nz wherever the totals are added or
// stored (checkNZ); ktAllSlots makes the loops over a mask visit every
// finding of it, as before knownTot.nz; ktNZWrong leaves nz out of the
// slab's counts added to a hit (cacheState's add: a wrong rule).
var ktCheck, ktAllSlots, ktNZWrong bool

// Wrong rules for the detection log, in tests (TestCacheKnownRulesCaught):
// detsReportedOnly logs only the detections that are reported (a subtree
// then misses what its suffix detects after its prefix reported it);
// detsAfter takes a detection at a point's own clock for its prefix's.
var detsReportedOnly, detsAfter bool

// cacheEntry is a stored subtree: its schedules, their choice points (less
// the prefix's, per schedule: rel), failing schedules, the same two counts
// for kbuild's model, and its knownTot (an offset into the table's slab,
// -1 when all zero: the d of the variant's findings, their dk, their by).
type cacheEntry struct {
	runs, rel, viol int64
	runsK, violK    int64
	known           int32
}

// CacheStats counts what the state cache did.
type CacheStats struct {
	// States is the number of distinct states stored (subtrees explored).
	States int64
	// Hits counts the points whose subtree was taken from the cache.
	Hits int64
	// Lookups counts the points looked up: choice points, tails and quiet
	// points (quiescent), and the points right after an interrupt
	// returned (afterEvent).
	Lookups int64
	// Full counts the subtrees not stored because the table was full.
	Full int64
	// Bytes is the memory the table and its slab hold.
	Bytes int64
}

func (s *CacheStats) add(o *CacheStats) {
	s.States += o.States
	s.Hits += o.Hits
	s.Lookups += o.Lookups
	s.Full += o.Full
	s.Bytes += o.Bytes
}

// DefaultCacheEntries bounds the table the workers share (ExploreOptions.CacheEntries).
// The tables grow by doubling as states are stored, so a problem that
// stores fewer states never reaches the bound; the bound decides only how
// far the largest ones may grow. At 2^20, std with no cap (C=0) filled
// both tables and took 148.6 s with two workers; at 2^23 it took about
// 41 s and 1.7 GiB (docs/state-cache.md, "The default table bound"). The
// table of combos (split.go) takes the same bound in combos, and at 2^23
// std C=0 filled it (it then records states whole): 3,983,226 runs and
// 46.7 s with one worker, against 3,393,359 runs and 39.2 s (878 MiB
// peak RSS against 760) at 2^24 (6 Dec 2026, fifteenth session).
const DefaultCacheEntries = 1 << 24

// stateCache is an open-addressing table from state keys to subtree
// totals, growing by doubling up to a bound; when full it stores nothing
// more (a miss costs time, never soundness). With exact set, keys are the
// encodings themselves.
type stateCache struct {
	// Read by every lookup, and written only before the workers start (pub
	// at a doubling): on cache lines of their own, apart from what a store
	// writes (mu, the counts, the chunks' ends), which would otherwise take
	// the line from under the other worker's next lookup (as in the table
	// of combos, splitTable).
	_      [64]byte
	shared bool // more than one worker: mu is taken (one worker: 2 % of std C=3 in Lock and Unlock)
	// pub is the slots array the readers probe when shared (get takes no
	// lock; see getShared): set at each doubling, after the new array is
	// filled. Nil when not shared, and in exact mode (a map), where get
	// takes mu.
	pub atomic.Pointer[[]slot]
	// entDir and slabDir are the directories of ents and slab when
	// shared (chunked.share), which the readers read.
	entDir  [][]cacheEntry
	slabDir [][]uint32
	// kslot lists the known findings of the scenario's variant (the only
	// ones a count can be non-zero for), whose counts the slab keeps.
	kslot []int
	kmask uint64 // kslot's findings, a bit each
	drop  int    // a component left out (tests of the state's completeness), -1 none
	exact map[string]cacheEntry
	// tails is the table of the tails' states (dfs.tail); nil in that table
	// itself (table() is asked of the subtrees' table only).
	tails *stateCache
	_     [64]byte

	// mu serializes the workers' stores, in the one table they share: a
	// subtree below a point off the all-default prefix is whole in every
	// piece, so one worker's entry holds for all. Lookups take it only in
	// exact mode (getShared).
	mu sync.Mutex
	// slots is the open-addressing table (linear probing): a key and the
	// index of its entry in ents, 16 bytes; ents are the entries in the
	// order they were stored, in chunks that never move, so a doubling
	// moves the slots only. (Until 5 Dec 2026 the slots held the whole
	// key and entry, 64 bytes: std C=3's table was 128 MiB at 38 % load,
	// and a doubling wrote all of it.)
	slots  []slot
	next   []slot // the array slots will double into, mapped ahead (aheadOf)
	ents   chunked[cacheEntry]
	n, max int
	// slab holds the knownTot of the entries that have one (d, dk, by of
	// the variant's findings), in chunks that never move: it grew by
	// append before, and its copies were a third of std C=3's page faults.
	slab  chunked[uint32]
	mem   arena // the arrays mapped apart from the heap (bigmem.go)
	stats CacheStats
	// splitBytes is what the table of combos held (split.go).
	splitBytes atomic.Int64
}

// flush makes the worker's pending stores and adds its lookups and hits
// to the tables' stats.
func (cs *cacheState) flush() {
	for i, c := range [2]*stateCache{cs.c, cs.c.tails} {
		if c == nil {
			continue
		}
		if c.shared {
			c.mu.Lock()
		}
		cs.putPending(i, c)
		c.stats.add(&cs.counts[i])
		if c.shared {
			c.mu.Unlock()
		}
		cs.counts[i] = CacheStats{}
	}
}

// pendingPut is a store a worker made later (cacheState.put).
type pendingPut struct {
	k  stateKey
	ks string
	t  totals
	kt knownTot
	p0 int64
}

// maxPend bounds a worker's pending stores per table (about 0.5 KB each):
// past it, the worker waits for the lock.
const maxPend = 1 << 13

// put stores a complete subtree's totals in tbl. Workers that share the table do not wait for each other: when
// the other holds it (a doubling can take 0.1 s on std C=3), the store
// waits in this worker's list until its next store finds the table free.
// A store made later costs only lookups that miss meanwhile (the other
// worker's, or this one's, which explore the subtree again and store it
// again: the first stays). With the lock taken each time, two workers on
// std C=3 spent 0.30 s of a 5.6 s run blocked in put after get stopped
// locking (block profile, ninth session).
func (cs *cacheState) put(tbl *stateCache, k stateKey, ks string, t *totals, kt *knownTot, p0 int64) {
	if !tbl.shared || cs.verify != nil || tbl.exact != nil {
		// (Exact mode keeps whole encodings, kilobytes each: they are
		// not held in a list.)
		tbl.put(k, ks, t, kt, p0)
		return
	}
	i := cs.which(tbl)
	cs.pend[i] = append(cs.pend[i], pendingPut{k, ks, *t, *kt, p0})
	if !tbl.mu.TryLock() {
		if len(cs.pend[i]) < maxPend {
			return
		}
		tbl.mu.Lock()
	}
	cs.putPending(i, tbl)
	tbl.mu.Unlock()
}

// putPending makes the pending stores of table i, with its lock held.
func (cs *cacheState) putPending(i int, tbl *stateCache) {
	for j := range cs.pend[i] {
		p := &cs.pend[i][j]
		tbl.putLocked(p.k, p.ks, &p.t, &p.kt, p.p0)
	}
	cs.pend[i] = cs.pend[i][:0]
}

// statsAll is what both tables did, with the memory they hold.
func (c *stateCache) statsAll() CacheStats {
	st := c.stats
	st.Bytes = c.bytes() + c.splitBytes.Load()
	if c.tails != nil {
		t := c.tails.stats
		t.Bytes = c.tails.bytes()
		st.add(&t)
	}
	return st
}

func newStateCache(sc *Scenario, max int, exact bool, drop int, shared bool) *stateCache {
	if max <= 0 {
		max = DefaultCacheEntries
	}
	c := newTable(sc, max, exact, drop)
	// The tails get a table of their own, of the same bound: a tail saves
	// one run's end, a subtree many runs, and in one table the tails
	// filled it first (std at C=3 with the default 2^20 entries took
	// 130 s instead of 92 s).
	c.tails = newTable(sc, max, exact, drop)
	if shared {
		c.share()
		c.tails.share()
	}
	return c
}

// share readies a table for workers that read it without its lock
// (getShared, add): the chunks of entries and counts are listed in
// directories that never move, whose first chunks start whole (a chunk
// that doubled would be replaced under a reader), and the slots are
// published.
func (c *stateCache) share() {
	c.shared = true
	// At most max entries, each with at most 3 words of counts per finding.
	c.ents.share(c.max/(1<<entChunkShift) + 2)
	c.slab.share(c.max*3*max(len(c.kslot), 1)/(1<<slabChunkShift) + 2)
	c.entDir, c.slabDir = c.ents.dir, c.slab.dir
	if c.exact == nil {
		p := new([]slot)
		*p = c.slots
		c.pub.Store(p)
	}
}

func newTable(sc *Scenario, max int, exact bool, drop int) *stateCache {
	c := &stateCache{max: max, drop: drop}
	c.ents.shift, c.slab.shift = entChunkShift, slabChunkShift
	for i, k := range KnownFindings {
		if slices.Contains(k.Variants, sc.Variant) {
			c.kslot = append(c.kslot, i)
			c.kmask |= 1 << i
		}
	}
	if exact {
		c.exact = map[string]cacheEntry{}
	} else {
		c.slots = allocOf[slot](&c.mem, 1<<12)
	}
	return c
}

// slot is a table slot: the key's first word a and, in be, its second's
// low half (a false hit then has probability about n^2 / 2^97 among n
// states, for 10^6 states 3.2e-18, still far below a context's 64-bit
// input digest's 2^-64 per pair) below the index of its entry plus one.
// Two words, each read and written whole, so that a worker reads a slot
// another is filling without a lock (getShared): a is written first, and
// be, never 0 in a filled slot, last. A slot with both words zero is free.
type slot struct {
	a, be uint64
}

func mkSlot(a uint64, b uint32, e int32) slot { return slot{a, uint64(b) | uint64(e+1)<<32} }

// entry is the index of the slot's entry in ents.
func (s slot) entry() int32 { return int32(s.be>>32) - 1 }

// slotKey is k as a slot holds it (never the free slot's zero).
func slotKey(k stateKey) (uint64, uint32) {
	a, b := k.a, uint32(k.b)
	if a == 0 && b == 0 {
		a = 1
	}
	return a, b
}

// find returns the slot of k, or the free slot where it would go.
func (c *stateCache) find(a uint64, b uint32) int { return probe(c.slots, a, b) }

// doubled is old's filled slots in a new array of twice as many: *next,
// if it is one of that size (aheadOf), else one mapped in a now (old
// stays: the caller frees or retires it).
func doubled(a *arena, old []slot, next *[]slot) []slot {
	slots := *next
	*next = nil
	if len(slots) != 2*len(old) {
		freeOf(a, slots)
		slots = allocOf[slot](a, 2*len(old))
	}
	for _, s := range old {
		if s.a != 0 || s.be != 0 {
			slots[probe(slots, s.a, uint32(s.be))] = s
		}
	}
	return slots
}

// aheadOf maps, in a, the array that slots will double into, once n of
// them are filled and the doubling (at three quarters) is near: a
// rehash writes every page of a fresh array at once, before the
// prefaulter (prefault.go) could fault one in, so the next array is
// mapped ahead, for the prefaulter to fault in while the table fills
// (on peer-spin K=3 the doublings' rehashes were 1.1 % of the worker's
// samples in the kernel's clear_page_erms, 7 Dec 2026). Past five
// eighths only: an array mapped ahead that the run never doubles into
// is resident all the same. Arrays on the heap (under bigMin) are not
// faulted in ahead, and not mapped ahead either; nor is anything where
// the arena is not prefaulted (a.prefault), since then nothing would
// fault it in before the doubling.
func aheadOf(a *arena, slots []slot, n int, next *[]slot) {
	if a.prefault && *next == nil && n*8 > len(slots)*5 && 2*len(slots)*int(unsafe.Sizeof(slot{})) >= bigMin {
		*next = allocOf[slot](a, 2*len(slots))
	}
}

// probe returns the slot of (a, b) in slots (a power of two of them, not
// all filled), or the free slot where it would go.
func probe(slots []slot, a uint64, b uint32) int {
	mask := len(slots) - 1
	i := int(a) & mask
	for {
		s := &slots[i]
		if s.a == a && uint32(s.be) == b || s.a == 0 && s.be == 0 {
			return i
		}
		i = (i + 1) & mask
	}
}

// key computes the current state's key (and, in exact mode, its
// encoding), encoding into the worker's scratch.
func (cs *cacheState) key() (stateKey, string) {
	c := cs.c
	cs.scratch = cs.r.appendState(cs.scratch[:0], c.drop)
	if c.exact != nil {
		return stateKey{}, wordsString(cs.scratch)
	}
	return hashState(cs.scratch), ""
}

func (c *stateCache) get(k stateKey, ks string) (cacheEntry, bool) {
	switch {
	case c.exact != nil:
		if c.shared {
			c.mu.Lock()
			defer c.mu.Unlock()
		}
		e, ok := c.exact[ks]
		return e, ok
	case c.shared:
		return c.getShared(k)
	}
	// The entry only on a hit: the table is larger than the caches, and
	// most lookups miss (a second cache miss each, 2 % of peer-spin K=3).
	a, b := slotKey(k)
	if s := c.slots[c.find(a, b)]; s.a == a && uint32(s.be) == b {
		return c.ents.at(s.entry(), 1)[0], true
	}
	return cacheEntry{}, false
}

// getShared is get for workers that share the table, without its lock.
// With the lock, the workers waited for each other's stores: on std C=3
// with two workers 0.27 s blocked, and 0.34 s of CPU in Lock and Unlock,
// for a run of 5.6 s (block and CPU profiles, ninth session). It probes
// the slots published last (pub, probeShared); a miss costs time only.
// The entry a filled slot names was written before the slot (put), in a
// chunk that never moves (chunked.share).
func (c *stateCache) getShared(k stateKey) (cacheEntry, bool) {
	at, ok := probeShared(*c.pub.Load(), k)
	if !ok {
		return cacheEntry{}, false
	}
	return chunkAt(c.entDir, entChunkShift, at, 1)[0], true
}

// probeShared is the entry of k in slots, which a worker holding the lock
// may be filling (storeSlot), each word read whole: a slot being filled
// (be still 0) or an array a doubling left behind (its pages given back:
// zeros, read as free) is a miss, never a wrong entry.
func probeShared(slots []slot, k stateKey) (int32, bool) {
	a, b := slotKey(k)
	mask := len(slots) - 1
	for i := int(a) & mask; ; i = (i + 1) & mask {
		s := &slots[i]
		switch sa := atomic.LoadUint64(&s.a); {
		case sa == a:
			be := atomic.LoadUint64(&s.be)
			if be == 0 {
				return 0, false // being stored
			}
			if uint32(be) == b {
				return slot{sa, be}.entry(), true
			}
		case sa == 0 && atomic.LoadUint64(&s.be) == 0:
			return 0, false
		}
	}
}

// storeSlot writes ns into *s for readers without the lock (probeShared):
// each word whole, be (never 0 in a filled slot) last.
func storeSlot(s *slot, ns slot) {
	atomic.StoreUint64(&s.a, ns.a)
	atomic.StoreUint64(&s.be, ns.be)
}

func (c *stateCache) put(k stateKey, ks string, t *totals, kt *knownTot, p0 int64) {
	if c.shared {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	c.putLocked(k, ks, t, kt, p0)
}

// putLocked is put with the lock held (or no other worker).
func (c *stateCache) putLocked(k stateKey, ks string, t *totals, kt *knownTot, p0 int64) {
	// Room first: a subtree not stored must leave nothing in the slab.
	if !c.room() {
		c.stats.Full++
		return
	}
	e := cacheEntry{runs: t.runs, rel: t.points - t.runs*p0, viol: t.viol, runsK: t.runsK, violK: t.violK, known: -1}
	for b := kt.bitsIn(c.kmask); b != 0; b &= b - 1 {
		// (a kbuild count is at most its finding's, and an oracle
		// detects it in some schedule only if d > 0: one non-zero test)
		if i := bits.TrailingZeros64(b) & (maxKnown - 1); kt.d[i] != 0 {
			n := len(c.kslot)
			at, ok := c.slab.take(&c.mem, 3*n, slabFirst)
			if t.runs > math.MaxUint32 || !ok {
				c.stats.Full++ // a count the slab cannot hold: not stored
				return
			}
			e.known = at
			w := c.slab.at(at, 3*n)
			for x, j := range c.kslot {
				w[x], w[n+x], w[2*n+x] = uint32(kt.d[j]), uint32(kt.dk[j]), uint32(kt.by[j])
			}
			break
		}
	}
	if c.exact != nil {
		c.exact[ks] = e
		c.stats.States++
		c.stats.Bytes += int64(len(ks)) + 48
		return
	}
	a, b := slotKey(k)
	s := &c.slots[c.find(a, b)]
	if s.a == a && uint32(s.be) == b {
		// A subtree stored again: its twin, by another worker, with the
		// same totals. Shared, the first stays (another worker may be
		// reading it).
		if !c.shared {
			c.ents.at(s.entry(), 1)[0] = e
		}
		return
	}
	at, ok := c.ents.take(&c.mem, 1, entFirst)
	if !ok {
		c.stats.Full++
		return
	}
	c.ents.at(at, 1)[0] = e
	if c.shared {
		storeSlot(s, mkSlot(a, b, at))
	} else {
		*s = mkSlot(a, b, at)
	}
	c.n++
	c.stats.States++
}

// room reports whether one more state can be stored, growing the table
// while it is below its bound.
func (c *stateCache) room() bool {
	if c.exact != nil {
		return len(c.exact) < c.max
	}
	if (c.n+1)*4 > len(c.slots)*3 {
		if len(c.slots)*2 > c.max*4/3+1 {
			return false
		}
		c.grow()
	} else if len(c.slots)*2 <= c.max*4/3+1 {
		aheadOf(&c.mem, c.slots, c.n+1, &c.next)
	}
	return true
}

func (c *stateCache) grow() {
	old := c.slots
	c.slots = doubled(&c.mem, old, &c.next)
	if c.pub.Load() == nil {
		freeOf(&c.mem, old)
		return
	}
	// Shared: readers may still probe the old array. It stays mapped
	// until release, its pages given back (retireOf: it reads as zeros,
	// free slots), and a heap array is the collector's.
	p := new([]slot)
	*p = c.slots
	c.pub.Store(p)
	retireOf(&c.mem, old)
}

// prefault sets whether the arrays this table and its tails' table map
// from now on are faulted in by the prefaulter (prefault.go).
func (c *stateCache) prefault(on bool) {
	c.mem.prefault = on
	if c.tails != nil {
		c.tails.mem.prefault = on
	}
}

// release gives back the arrays mapped apart from the heap (bigmem.go),
// of this table and its tails' table; nothing may use them after.
func (c *stateCache) release() {
	if c == nil {
		return
	}
	c.slots, c.next, c.ents, c.slab = nil, nil, chunked[cacheEntry]{}, chunked[uint32]{}
	c.mem.release()
	c.tails.release()
}

func (c *stateCache) bytes() int64 {
	b := int64(len(c.slots))*int64(unsafe.Sizeof(slot{})) + c.ents.bytes() + c.slab.bytes()
	if c.exact != nil {
		b += c.stats.Bytes
	}
	return b
}

// add adds an entry's totals to t and its knownTot to kt, for a hit at a
// point with p0 choice points before it.
func (c *stateCache) add(t *totals, kt *knownTot, e cacheEntry, p0 int64) {
	t.runs += e.runs
	t.points += e.rel + e.runs*p0
	t.viol += e.viol
	t.runsK += e.runsK
	t.violK += e.violK
	if e.known < 0 {
		return
	}
	n := len(c.kslot)
	var s []uint32
	if c.shared {
		// Without the lock: the counts were written before the entry that
		// names them (put), in a chunk that never moves.
		s = chunkAt(c.slabDir, slabChunkShift, e.known, 3*n)
	} else {
		s = c.slab.at(e.known, 3*n)
	}
	for i, j := range c.kslot {
		kt.d[j] += int64(s[i])
		kt.dk[j] += int64(s[n+i])
		kt.by[j] |= uint8(s[2*n+i])
		if (s[i]|s[n+i]|s[2*n+i]) != 0 && !ktNZWrong {
			kt.nz |= 1 << j
		}
	}
}

// cacheState is the dfs's part of the cache: the runner whose state it
// reads, the subtree being skipped in this run, the totals so far.
type cacheState struct {
	c       *stateCache
	r       *runner
	scratch []uint64 // the state's encoding (key)
	hit     bool
	hitE    cacheEntry
	hitC    *stateCache // the table hitE is in
	hitP    int64
	hitAt   int64 // the clock of the hit
	// hitSplit: the hit is of the combos of a state with pending regions
	// (split.go), in sp.hit.
	hitSplit bool
	// sp is the worker's running totals per combo and the shared table
	// of combos (split.go), kept across its pieces.
	sp  *splitter
	tot totals
	// tails: the tail points the current run recorded (dfs.tail).
	tails []keyed
	// counts: the lookups and hits of this worker in the subtrees' table
	// and in the tails', added to the tables' stats by flush (counted
	// here, the workers share no counter).
	counts [2]CacheStats
	// pend: the stores this worker could not make at once, the other
	// worker holding the table (put); one list per table, as in counts.
	pend [2][]pendingPut
	// verify (tests): hits are not taken; every subtree whose state was
	// stored is explored again and compared with the stored totals, and
	// verify is called with the first visit's and this visit's schedules
	// when they differ.
	verify func(first, again Schedule, want, got cacheEntry, sameEncoding, sameKnown bool)
	firsts map[stateKey]Schedule
	encs   map[stateKey][]uint64
}

// lookup is called at a choice point the DFS has not seen on its path,
// when the subtree below it is the whole subtree (not a shard's part). It
// returns true if the subtree is in the cache: the run is stopped and the
// subtree's totals are counted when it ends.
func (d *dfs) lookup() (hit bool) {
	alone := d.cache.r.alone()
	if alone && d.cache.r.hk.aloneProbe == nil {
		return false
	}
	// The point is recorded in place: a keyed is a kilobyte, and
	// returning it and appending it were two copies a lookup.
	n := len(d.keys)
	d.keys = slices.Grow(d.keys, 1)[:n+1]
	kd := &d.keys[n]
	hit = d.cache.find(kd, len(d.path))
	if alone {
		d.cache.r.hk.aloneProbe.lookups.Add(1)
		if hit {
			d.cache.r.hk.aloneProbe.hits.Add(1)
		}
	}
	if hit {
		d.keys = d.keys[:n]
	} else if n > 0 {
		kd.pre.of(d.cache.r.res.dets, d.keys[n-1].at, kd.at)
	}
	return hit
}

// alone reports whether the run's state is one that no other path of
// choices reaches: the run has taken no remote action, and every
// interrupt it took is still running, or has just returned to the yield
// it was taken at (afterEvent) while the others still run (its other
// non-default choices, if any, are region orders or a lazy region's
// classes). A lookup there finds nothing, and a subtree stored there
// would never be used, so neither is made (dfs.lookup: at a choice point,
// after an interrupt, between an interrupt's ops, at a quiet point).
//
// Why. The DFS runs each path of choices once; take two paths that reach
// equal states, and the first choice point where they differ.
//   - If one took an interrupt there and the other did not (a yield
//     offers one kind: IRQ at a task's level, NMI above), the context it
//     interrupted stays at that yield while the interrupt runs, which it
//     does to the state, or is back at that yield with the mark of a
//     return (afterEv), which it is at afterEvent: the other path's same
//     context went on past that yield, and a context's position (its ops
//     done, the digest of what its op read and wrote, its last site, its
//     buffered stores: appendCtx) only moves on.
//   - If they chose different orders for a region, the state holds the
//     order chosen (stOrders) for the rest of the run.
//   - A lazy region's classes (lazy.go) differ in what their orders did
//     by that yield, but two classes' memory could meet again after a
//     later store; nothing here argues they cannot. The test measures it.
//
// The counts (interrupts taken, remote actions), the contexts on the CPU
// and the mark are in the state, reduced key included (split.go), so a
// state that is alone equals only states that are alone, and a lookup
// elsewhere never needs what is left out here. What merges is the
// placement of a remote action, or of an interrupt that returned before
// the last event: runs that differ there reach equal states, and those
// states are looked up.
//
// Leaving a lookup out never changes a count, only what the cache can
// save (a subtree is then explored again). TestAloneNeverHits makes these
// lookups (aloneProbe set) on std and peer-spin, with every engine and a
// mutant, and requires that none hits: no hit is lost. Wrong rules (a
// remote action's placement, or an interrupt's that returned earlier,
// taken for one no other path shares) are seen to hit
// (TestAloneWrongCaught). Measured with one worker, the same runs and
// hits (6 Dec 2026): std C=2 looks up 49,834 states instead of 70,173
// and stores 17,999 instead of 38,338; std C=3 1,628,599 lookups instead
// of 1,914,024, 79.0 MiB of tables instead of 125.0; peer-spin K=2
// 12,367 instead of 16,289; peer-spin K=3 158,203 instead of 162,125.
func (r *runner) alone() bool {
	if r.hk.noAlone || r.eUsed > 0 && r.hk.aloneWrong != "remote" {
		return false
	}
	open := 0
	for _, c := range r.ctxs {
		if c.level > 0 && c.nest == 0 { // an interrupt's (a nested call's has nest > 0)
			open++
		}
	}
	if r.afterEv {
		open++ // the interrupt just returned: its yield is where the context stands
	}
	return r.kUsed == open || r.hk.aloneWrong == "returned"
}

// aloneCounts is what aloneProbe counts.
type aloneCounts struct{ lookups, hits atomic.Int64 }

// preDets is the set of known findings detected in a stretch of a run's
// prefix, with the oracle of each one's first detection there.
type preDets struct {
	seen uint64
	o    [maxKnown]uint8
}

// of sets p to the detections in [from, to) of dets: a detection at a
// point's own clock is in the point's suffix.
func (p *preDets) of(dets []det, from, to int64) {
	for _, x := range dets {
		if x.at < from || x.at == from && detsAfter || x.at >= to || p.seen&(1<<x.k) != 0 {
			continue
		}
		p.seen |= 1 << x.k
		p.o[x.k] = x.o
	}
}

// find looks the current state up: on a hit it stops the run and keeps
// the stored totals to count; on a miss it sets *kd to the point to
// record (at path depth depth, -1 for a tail) with the totals so far.
func (cs *cacheState) find(kd *keyed, depth int) (hit bool) {
	r := cs.r
	if depth < 0 {
		if r.tailN++; r.tailN >= 1<<20 {
			internalf("cache: more tail lookups in a run than the clock counts")
		}
	}
	if depth >= 0 && len(r.lzList) > 0 && cs.splitOn() {
		hit := cs.findSplit(kd, depth)
		if hit || !cs.splitter().closed.Load() {
			return hit
		}
		// The table is full: the state is looked up and recorded whole.
		cs.counts[0].Lookups--
	}
	k, ks := cs.key()
	p0 := int64(r.points)
	tbl := cs.c.table(depth)
	e, ok := tbl.get(k, ks)
	st := &cs.counts[cs.which(tbl)]
	st.Lookups++
	if ok {
		st.Hits++
	}
	if ok && cs.verify == nil {
		cs.hit, cs.hitSplit, cs.hitE, cs.hitP, cs.hitC, cs.hitAt = true, false, e, p0, tbl, r.clock()
		r.stopped, r.hitExec = true, r.executed()
		return true
	}
	*kd = keyed{depth: depth, k: k, ks: ks, t0: cs.tot, p0: p0, at: r.clock(), mult: r.rmult}
	if cs.verify != nil {
		kd.sched = r.sched.clone()
		kd.enc = append([]uint64(nil), cs.scratch...)
		kd.verify, kd.want = ok, e
	}
	return false
}

// tail is called at a quiescent point between two ops of a run that can
// make no more choices (runner.noChoiceLeft). What is left of the run is
// then determined by its state, as below a choice point, so the state is
// looked up the same way: a hit stops the run and counts the stored tail
// instead (one schedule, its verdicts, known findings and choice points);
// a miss records the point, and the run's totals are stored under it once
// the run is counted (storeTails). Without it a run ran its whole tail
// whenever its last choice was new, though most tails join one run
// before: std at C=2 looked up 17,634 choice points for 55,272 runs.
// A sharded piece looks up no tail of a run whose choices are all the
// default (only shard 0 counts that run).
func (d *dfs) tail() {
	cs := d.cache
	if cs.hit || d.pm != nil && d.zero || cs.r.hk.noTails {
		return
	}
	n := len(cs.tails)
	cs.tails = slices.Grow(cs.tails, 1)[:n+1]
	if cs.find(&cs.tails[n], -1) {
		cs.tails = cs.tails[:n]
	}
}

// storeTails stores the tails the run just counted recorded (counted:
// the run, or the stored tail it hit, was added to the totals).
func (cs *cacheState) storeTails(counted bool) {
	if counted {
		for i := range cs.tails {
			cs.store(&cs.tails[i], cs.since(&cs.tails[i]))
		}
	}
	cs.tails = cs.tails[:0]
}

// keyed is a recorded choice point on the path: its state and the totals
// when its subtree began.
type keyed struct {
	// mult is the run's multiplier by merged remote placements
	// (runner.rmult, remotes.go) when the point was recorded: every
	// schedule below it counts that many times, and the table holds its
	// totals divided by it.
	mult  int64
	depth int
	k     stateKey
	ks    string
	t0    totals
	p0    int64
	// at is the point's clock; kt its subtree's known findings so far (a
	// detection is the point's only if it comes after at, which a
	// difference of running totals cannot tell). The runs and hits whose
	// deepest recorded point on the path it is add to kt; a point below
	// it adds its own when it is left (dfs.leave), through pre.
	at int64
	kt knownTot
	// pre: the detections between the point above on the path (the last
	// recorded before this one) and this one, the same in every schedule
	// of this point's subtree.
	pre preDets
	// sp: the point's combos when it has pending regions and the totals
	// are kept per combo (split.go); k is then its reduced key.
	sp []splitCombo
	// verify mode (tests): the schedule so far, and the entry a hit found.
	sched  Schedule
	enc    []uint64
	verify bool
	want   cacheEntry
}

// leave stores the subtrees of the recorded points at depth i, now
// complete: a choice point's, and those of quiescent points recorded
// before it at the same depth (quiet), whose subtree is the same.
func (d *dfs) leave(i int) {
	for {
		n := len(d.keys)
		if n == 0 || d.keys[n-1].depth != i {
			return
		}
		kd := &d.keys[n-1] // (not a copy: a kilobyte; nothing appends to keys below)
		d.keys = d.keys[:n-1]
		cs := d.cache
		t := cs.since(kd)
		var pp *keyed
		if n > 1 {
			// The point above gets the subtree's known findings: a finding
			// detected between the two points is in every schedule of it.
			pp = &d.keys[n-2]
			pp.kt.addPre(&kd.pre, t.runs, t.runsK, &kd.kt, cs.c.kmask)
		}
		if !cs.splitting() {
			if kd.sp == nil {
				cs.store(kd, t)
			}
			continue // (a point of a table of combos that filled up: not stored)
		}
		cs.leaveSplit(kd, t, pp)
	}
}

// leaveBelow stores the subtrees of the points recorded deeper than step
// i of the path: quiescent points (quiet) after the last choice point of
// the run that recorded them, complete once step i changes.
func (d *dfs) leaveBelow(i int) {
	for n := len(d.keys); n > 0 && d.keys[n-1].depth > i; n = len(d.keys) {
		d.leave(d.keys[n-1].depth)
	}
}

// quiet is called at a quiescent point between two ops of a run whose only
// choices left are splits of pending regions (lazy.go): no event is left,
// so no yield is a choice point and no tail can be looked up (a tail holds
// one run). The subtree below is the runs that share the path so far: it
// is looked up as a choice point's, at the depth of the next one.
func (d *dfs) quiet() {
	if d.cache.hit || d.pm != nil && d.zero || d.pos < len(d.path) {
		return
	}
	// The clock moves on, as at a tail lookup: a detection before this
	// point is its prefix's.
	r := d.cache.r
	if r.tailN++; r.tailN >= 1<<20 {
		internalf("cache: more lookups after the last choice point of a run than the clock counts")
	}
	d.lookup()
}

// lookupAhead is what the lookups at a point that is no choice point
// (afterEvent, betweenOps) share: with the cache, in a run that goes on,
// unless off, it moves the clock on (in every run that passes the point,
// replayed or new; not with noClock, a test's wrong rule) and returns the
// DFS if the point is in the run's new part and its subtree is whole in
// this piece; else nil.
func (r *runner) lookupAhead(off, noClock bool) *dfs {
	d := r.tails
	if d == nil || r.stopped || r.quietStop || off {
		return nil
	}
	if !noClock {
		if r.tailN++; r.tailN >= 1<<20 {
			internalf("cache: more lookups after choice points in a run than the clock counts")
		}
	}
	if d.cache.hit || d.pm != nil && d.zero || d.pos < len(d.path) {
		return nil // replayed (the point was looked up when it was new), or a shard's part
	}
	return d
}

// afterEvent is the point right after an interrupt returned to the yield
// it was taken at. A run whose changed choice is the interrupt or one
// inside it goes on from there to the end of the op (std at C=3: 82 % of
// the runs change a choice inside an interrupt, and 98 % of those go on
// past its return), yet sibling runs, which differ only inside the
// interrupt, often return to the same state: 77 % of these points repeat
// an earlier one on std at C=3, 19 % on peer-spin K=3. So the state is
// looked up there as a choice point's subtree is, at the depth of the
// next choice point (the subtree below is the runs sharing the path so
// far, as at a quiet point): a hit stops the run and counts the stored
// subtree, a miss records the point, stored when the DFS leaves it.
//
// The clock (tailN) moves on here in every run, the ones that replay the
// point too, so that a detection's clock is the same in every run that
// shares it; event snaps and snaps keep it with the rest of the data.
// Not while a merged representative's stop is deferred (its verdict is
// made; remotes.go), nor without the cache.
func (r *runner) afterEvent() {
	d := r.lookupAhead(r.hk.noAfterEvent, false)
	if d == nil {
		return
	}
	if len(r.ctxs) > 1 && !r.hk.afterEvNested {
		// Back inside an interrupt after a nested one: not looked up. A
		// run that would hit there goes on, as the run that stored that
		// point did, to the outer interrupt's return, and hits there:
		// without these lookups peer-spin K=3 runs the same 72,449 runs
		// with the same 69,317 hits, stores 57,255 states instead of
		// 94,855 (29.7 MiB of tables instead of 45.2) and executes 3 %
		// fewer instructions (11,266 M against 11,614 M; K=2 −6 %, std
		// C=2 −1 %). Those at a task's level stay: without them std C=2
		// executes 18 % more (6 Dec 2026).
		return
	}
	r.afterEv = !r.hk.afterEvUnmarked
	hit := d.lookup()
	r.afterEv = false
	if r.hk.afterEvHits != nil && hit {
		r.hk.afterEvHits.Add(1)
	}
}

// betweenOps is the point between two ops of an interrupt, at the start
// of the next one (exec): the op before has returned, so nothing of it is
// left but data, and the context's input digest starts again. A run whose
// changed choice is the interrupt or one before it in the op went on
// through the interrupt's last op and the rest of the op it interrupted
// before it could hit (afterEvent), though the state between the ops
// repeats: on peer-spin K=3, 42,637 of the 57,494 lookups there hit. So
// the state is looked up there as after an interrupt, at the depth of the
// next choice point: a hit stops the run, a miss records the point.
// Where the op's first yield is a choice point, that point is looked up
// too; its state differs by the yield's bookkeeping (the last site, the
// check the yield makes).
//
// The clock moves on in every run that passes the point, as at afterEvent.
// Not inside an interrupt nested in another one: as for afterEvent, those
// lookups cost more than they save (peer-spin K=3 with them: 10,655 M
// instructions, without: 10,284 M; 6 Dec 2026).
func (r *runner) betweenOps() {
	d := r.lookupAhead(r.hk.noBetweenOps, r.hk.betweenOpsNoClock)
	if d == nil {
		return
	}
	if len(r.ctxs) > 2 && !r.hk.betweenOpsNested {
		return
	}
	if d.lookup() && r.hk.betweenOpsHits != nil {
		r.hk.betweenOpsHits.Add(1)
	}
}

// since is the totals counted since kd was recorded: its subtree's.
func (cs *cacheState) since(kd *keyed) totals {
	t := cs.tot
	t.runs -= kd.t0.runs
	t.points -= kd.t0.points
	t.viol -= kd.t0.viol
	t.runsK -= kd.t0.runsK
	t.violK -= kd.t0.violK
	return t
}

// store stores t, the totals since kd was recorded (cs.since), under its
// state: its subtree is complete (verify mode: compares them with the
// stored ones). kd is done with: a multiplier divides its known findings
// in place.
func (cs *cacheState) store(kd *keyed, t totals) {
	if m := kd.mult; m > 1 {
		perPath(&t, &kd.kt, m, "cache")
	}
	tbl := cs.c.table(kd.depth)
	if cs.verify != nil {
		got := cacheEntry{runs: t.runs, rel: t.points - t.runs*kd.p0, viol: t.viol, runsK: t.runsK, violK: t.violK}
		want := kd.want
		var wt totals
		var wk knownTot
		if kd.verify {
			tbl.add(&wt, &wk, want, 0)
		}
		want.known, got.known = 0, 0
		if kd.verify && (got != want || wk != kd.kt) {
			cs.verify(cs.firsts[kd.k], kd.sched, want, got, slices.Equal(cs.encs[kd.k], kd.enc), wk == kd.kt)
		}
		if !kd.verify {
			if cs.firsts == nil {
				cs.firsts = map[stateKey]Schedule{}
			}
			cs.firsts[kd.k] = kd.sched
			if cs.encs == nil {
				cs.encs = map[stateKey][]uint64{}
			}
			cs.encs[kd.k] = kd.enc
			tbl.put(kd.k, kd.ks, &t, &kd.kt, kd.p0)
		}
		return
	}
	cs.put(tbl, kd.k, kd.ks, &t, &kd.kt, kd.p0)
}

// which is tbl's index in counts and pend: 0 the subtrees' table, 1 the
// tails'.
func (cs *cacheState) which(tbl *stateCache) int {
	if tbl != cs.c {
		return 1
	}
	return 0
}

// table is the table of a point recorded at path depth depth: the tails'
// for a tail (depth -1).
func (c *stateCache) table(depth int) *stateCache {
	if depth < 0 && c.tails != nil {
		return c.tails
	}
	return c
}

// countRun adds one counted run to the cache's totals and to the known
// findings of every recorded point above it.
func (d *dfs) countRun(res *Result) {
	cs := d.cache
	w, wk := res.weights()
	cs.tot.runs += w
	cs.tot.points += int64(res.Points)
	cs.tot.runsK += wk
	if res.Failed() {
		cs.tot.viol += w
		cs.tot.violK += wk
	}
	if len(res.dets) > 0 {
		d.addDetsAbove(res.dets, math.MaxInt64, w, wk, nil)
	}
	if !cs.splitting() {
		return
	}
	sp := cs.splitter()
	if len(cs.r.lzList) == 0 {
		sp.run = append(sp.run[:0], weighted{c: progCombo, t: totals{runs: w, runsK: wk}})
	} else {
		sp.run = cs.r.runCombos(sp.run[:0], res.Failed(), int64(res.Points), w, wk, cs.r.rmult)
		for i := range sp.run {
			sp.addRo(&sp.run[i])
		}
	}
	if i := len(d.keys) - 1; i >= 0 && d.keys[i].sp != nil && len(res.dets) > 0 {
		sp.addKnown(d.keys[i].sp, sp.run, res.dets, d.keys[i].at, math.MaxInt64, cs.c.kmask)
	}
}

// addDetsAbove is knownTot.addDets for the deepest recorded point of the
// path (the points above it get theirs when it is left: dfs.leave) and
// every tail of the run, each from its own clock.
func (d *dfs) addDetsAbove(dets []det, to, n, nk int64, e *knownTot) {
	cs := d.cache
	if i := len(d.keys) - 1; i >= 0 {
		d.keys[i].kt.addDets(dets, d.keys[i].at, to, n, nk, e, cs.c.kmask)
	}
	for i := range cs.tails {
		cs.tails[i].kt.addDets(dets, cs.tails[i].at, to, n, nk, e, cs.c.kmask)
	}
}

// countHit counts the stored subtree the run stopped at (the run is one
// of its schedules): into the cache's totals, the known findings of every
// recorded point above it, and s. A finding the run detected before the
// hit is in every schedule of the subtree; one it did not, in the
// subtree's count of it. Detections after the hit (checks that ran before
// the run stopped) are the subtree's own, which the entry holds.
func (d *dfs) countHit(res *Result, s *Summary) (t totals) {
	cs := d.cache
	var e knownTot
	known := true
	if cs.hitSplit {
		known = cs.sp.hitTotals(&t, &e, cs.c.kmask)
	} else {
		cs.hitC.add(&t, &e, cs.hitE, cs.hitP)
		known = cs.hitE.known >= 0
	}
	if cs.splitting() {
		d.splitHit(res, t, &e)
	}
	if m := cs.r.rmult; m > 1 {
		timesPath(&t, &e, m) // the stored totals are per schedule of the path
	}
	cs.tot.runs += t.runs
	cs.tot.points += t.points
	cs.tot.viol += t.viol
	cs.tot.runsK += t.runsK
	cs.tot.violK += t.violK
	slots, h, ep := cs.c.kslot, cs.hitAt, &e
	if !known {
		ep = nil // the subtree detects no known finding: nothing of it to add
		if len(res.dets) == 0 {
			return t
		}
	}
	d.addDetsAbove(res.dets, h, t.runs, t.runsK, ep)
	var all knownTot
	all.addDets(res.dets, 0, h, t.runs, t.runsK, ep, cs.c.kmask)
	for _, j := range slots {
		if all.d[j] != 0 {
			name := KnownFindings[j].Name
			inc(&s.Known, name, all.d[j])
			s.addKnownBy(name, OracleSet(all.by[j]))
		}
		if all.dk[j] != 0 {
			inc(&s.Kbuild.Known, KnownFindings[j].Name, all.dk[j])
		}
	}
	return t
}

func (s Schedule) clone() Schedule {
	return Schedule{Events: append([]Event(nil), s.Events...), Orders: append([]Order(nil), s.Orders...)}
}

// chunked is a store of Ts in chunks of 1<<shift that never move once
// full (an index is its chunk's number times the chunk length plus its
// offset: an int32, as cacheEntry.known and slot.entry); a take of n
// consecutive Ts never straddles two chunks. The first chunk starts at
// first Ts and doubles while it is the only one, indices unchanged: a
// small problem holds a few KiB, not a huge page. From bigMin on it is a
// mapping of whole huge pages (bigmem.go) and doubles within it without
// moving, up to the mapping's capacity. It holds a table's entries and
// its slab of knownTot words.
type chunked[T any] struct {
	chunks [][]T
	shift  uint
	used   int // Ts taken of the last chunk
	n      int // Ts taken in all
	// dir, when shared, is chunks' backing array whole, allocated once:
	// a chunk added later is seen there without reading chunks, which the
	// adding worker writes (chunkAt).
	dir [][]T
	// ahead is the next chunk, mapped once the last one is five eighths
	// full where the arena is prefaulted, for the prefaulter (prefault.go)
	// to fault in before take writes it: a new chunk is written from its
	// first page on at once.
	ahead []T
}

// share readies s for workers reading it without a lock: a directory of
// up to most chunks that never moves, and first chunks that start whole
// (take refuses a chunk past most).
func (s *chunked[T]) share(most int) {
	most = min(most, math.MaxInt32>>s.shift)
	s.chunks = make([][]T, 0, most)
	s.dir = s.chunks[:most]
}

// chunkAt is at for a reader without the lock, from the directory of a
// shared chunked (dir, shift), which the reader keeps a copy of where no
// store writes: i was published after the Ts it names were written.
func chunkAt[T any](dir [][]T, shift uint, i int32, n int) []T {
	ch := dir[int(i)>>shift]
	o := int(i) & (1<<shift - 1)
	return ch[o : o+n : o+n]
}

// The chunks: 6 MiB of entries (three huge pages: with 3 MiB chunks, each
// chunk's mapping, rounded up to whole huge pages, held a second huge page
// for its last MiB: std C=0 598 MiB of peak RSS against 537 MiB), 2 MiB
// of slab words (a huge page); the first ones 16 KiB.
const (
	entChunkShift  = 17
	slabChunkShift = 19
	entFirst       = 1 << 14 / 48
	slabFirst      = 1 << 12
)

// take reserves n consecutive Ts and returns the first one's index;
// false when the indices would pass an int32.
func (s *chunked[T]) take(a *arena, n, first int) (int32, bool) {
	size := 1 << s.shift
	if s.dir != nil {
		first = size // shared: a chunk is never replaced (share)
	}
	switch last := len(s.chunks) - 1; {
	case last < 0:
		if s.dir != nil && len(s.dir) == 0 {
			return 0, false
		}
		s.chunks = append(s.chunks, allocOf[T](a, max(first, n)))
		s.used = 0
	case s.used+n > len(s.chunks[last]) && last == 0 && len(s.chunks[0]) < size:
		grown := min(2*len(s.chunks[0]), size)
		if grown <= cap(s.chunks[0]) {
			// Within its mapping (allocOf): no copy, no new pages.
			s.chunks[0] = s.chunks[0][:grown]
			break
		}
		ch := allocOf[T](a, grown)
		copy(ch, s.chunks[0])
		freeOf(a, s.chunks[0])
		s.chunks[0] = ch
	}
	if s.used+n > len(s.chunks[len(s.chunks)-1]) {
		if !s.room(size) {
			return 0, false
		}
		ch := s.ahead
		if s.ahead = nil; len(ch) != size {
			ch = allocOf[T](a, size)
		}
		s.chunks = append(s.chunks, ch)
		s.used = 0
	}
	at := (len(s.chunks)-1)*size + s.used
	s.used += n
	s.n += n
	var z T
	if a.prefault && s.ahead == nil && s.used*8 > size*5 && len(s.chunks[len(s.chunks)-1]) == size && size*int(unsafe.Sizeof(z)) >= bigMin && s.room(size) {
		s.ahead = allocOf[T](a, size)
	}
	return int32(at), true
}

// room reports whether another chunk of size Ts fits.
func (s *chunked[T]) room(size int) bool {
	return (len(s.chunks)+1)*size <= math.MaxInt32 && (s.dir == nil || len(s.chunks) < len(s.dir))
}

// at returns the n Ts from index i.
func (s *chunked[T]) at(i int32, n int) []T {
	ch := s.chunks[int(i)>>s.shift]
	o := int(i) & (1<<s.shift - 1)
	return ch[o : o+n : o+n]
}

func (s *chunked[T]) bytes() int64 {
	var z T
	var b int64
	for _, ch := range s.chunks {
		b += int64(len(ch)) * int64(unsafe.Sizeof(z))
	}
	return b
}
