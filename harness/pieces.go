package harness

import "sync"

// How a job's shard is cut into pieces, and the order workers pull them.
//
// A job (one Explore call) explores shard Shard of Shards: the schedules
// whose first non-default choice, option c at choice point p of the
// all-default path, has shardOf(p, c, Shards) == Shard, a hash that the
// jobs of a sharded run agree on without talking. With more than one
// worker the job's shard is cut again, into pieces along the default path:
// each piece owns a run of consecutive (p, c), piece 0 the earliest points
// and the last piece the latest. Worker 0 pulls pieces from the front, the
// others from the back.
//
// Why along the path, pulled from both ends. One worker's DFS leaves the
// points of the default path latest first; a worker pulling from the back
// explores in that order, one pulling from the front earliest first,
// which is as good for the cache (peer-spin K=3: 70,780 runs for pieces
// of one point each run earliest first in sequence, 72,512 latest first,
// 72,449 for one worker's DFS). The two meet only at their last pieces,
// so they seldom explore the same states at once: pieces of one point
// each pulled earliest first by both workers ran 80,481-81,333 runs.
// Until 6 Dec 2026 (seventeenth session) pieces owned (p, c) by the hash
// and were pulled largest first by the estimate below: two workers ran
// 77,700 runs on peer-spin K=3 where one runs 72,449, and 3,570,000 on
// std with no cap where one runs 3,393,359. Cut along the path they run
// 71,911-72,611 and 3,391,907-3,401,254 (docs/state-cache.md, "Pieces
// cut along the default path").
//
// The cut balances an estimate of each (p, c)'s subtree, made from one run
// of the all-default schedule: of a point p of P, (P-p)^3 for an option
// that spends no event (a region order, a lazy region's other class),
// (P-p)^2 for an interrupt or a remote action, which leaves one event fewer
// for its subtree; an option another shard owns weighs nothing. Each piece
// takes options while they fit in its share of what is left, so an early
// order, whose subtree is the whole exploration after it again (a fifth of
// std with no cap), is a piece of its own, pulled early. The estimate
// decides the cut only: every (p, c) belongs to exactly one piece, whatever
// the estimate, so the pieces partition the shard exactly.

// shardOf is the job, of shards, that owns the schedules whose first
// non-default choice is option c at choice point pos. Owning by position
// alone left one shard of four with 61 % of std on v6.11: half the space
// lies under the options of one point (a reordered region's orders); by
// position and option, the largest group is 0.6 % of the space.
func shardOf(pos, c, shards int) int {
	return int((uint64(pos)*0x9e3779b97f4a7c15 + uint64(c)) % uint64(shards))
}

// pieceMap says which job and which piece of it own each option of the
// all-default path.
type pieceMap struct {
	shard, shards int // the job's shard, of shards
	pieces        int // the pieces the job's shard is cut into
	// first[p] is the index of point p's option 1 among the options of the
	// recorded default path (first[P] is their number); of[u] is option
	// u's piece.
	first, of []int
}

// owns reports whether piece of m's job owns the schedules whose first
// non-default choice is option c at point pos. A point or option the
// recorded default path does not have (only if runs were not
// deterministic, which the DFS's replays catch) belongs to the last piece.
func (m *pieceMap) owns(piece, pos, c int) bool {
	if shardOf(pos, c, m.shards) != m.shard {
		return false
	}
	if pos+1 < len(m.first) && c >= 1 && m.first[pos]+c-1 < m.first[pos+1] {
		return m.of[m.first[pos]+c-1] == piece
	}
	return piece == m.pieces-1
}

// kindRecorder is a chooser that takes every default and records the
// options of each choice point.
type kindRecorder struct{ kinds [][]OptKind }

func (k *kindRecorder) Choose(p *Point, opts []Option) int {
	ks := make([]OptKind, len(opts))
	for i, o := range opts {
		ks[i] = o.Kind
	}
	k.kinds = append(k.kinds, ks)
	return 0
}

// newPieceMap cuts shard of shards of sc, explored with opt, into pieces
// from one run of its all-default schedule. A run that fails or panics
// still leaves the points it reached; the pieces report the failure
// themselves.
func newPieceMap(sc *Scenario, opt ExploreOptions, shard, shards, pieces int) *pieceMap {
	k := &kindRecorder{}
	if pieces > 1 {
		o := opt.RunOptions
		runDefault(sc, k, RunOptions{Strict: o.Strict, NoOracles: o.NoOracles, KeepGoing: o.KeepGoing, InOrder: o.InOrder}, func(r *runner) {
			r.lazy = opt.LazyOrders       // its choice points are the lazy engine's
			r.mergeOpt = opt.MergeRemotes // and the merged placements'
			r.hashing, _ = Cacheable(sc)
			r.hashing = r.hashing && opt.Cache
		})
	}
	return cutPieces(k.kinds, shard, shards, pieces)
}

// runDefault runs the all-default schedule of sc once with chooser ch (a
// recorder that takes every default), on a runner that setup, if not nil,
// prepares. It reports false if no runner could be made or the run
// panicked; what ch recorded up to there stays.
func runDefault(sc *Scenario, ch Chooser, opt RunOptions, setup func(*runner)) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	r, err := newRunner(sc)
	if err != nil {
		return false
	}
	if setup != nil {
		setup(r)
	}
	r.run(ch, opt)
	return true
}

// cutPieces cuts the options of a default path (the kinds of each point's
// options) owned by shard of shards into pieces runs of consecutive
// options, each with about its share of the estimate (the top of this
// file).
func cutPieces(kinds [][]OptKind, shard, shards, pieces int) *pieceMap {
	m := &pieceMap{shard: shard, shards: max(shards, 1), pieces: pieces, first: make([]int, len(kinds)+1)}
	var w []float64
	rest := 0.0
	n := float64(len(kinds))
	for pos, ks := range kinds {
		m.first[pos] = len(w)
		left := n - float64(pos)
		for c := 1; c < len(ks); c++ {
			x := 0.0
			if shardOf(pos, c, m.shards) == shard {
				x = left * left
				if ks[c] == OptOrder || ks[c] == OptContinue {
					x *= left
				}
			}
			w = append(w, x)
			rest += x
		}
	}
	m.first[len(kinds)] = len(w)
	m.of = make([]int, len(w))
	// A piece closes before the option that would take it past its share
	// of what is left, so an option larger than a share is a piece of its
	// own.
	piece, held := 0, 0.0
	share := rest / float64(pieces)
	for u, x := range w {
		if held > 0 && held+x > share && piece < pieces-1 {
			piece++
			held, share = 0, rest/float64(pieces-piece)
		}
		m.of[u] = piece
		held += x
		rest -= x
	}
	return m
}

// pieceQueue hands out the pieces 0..n-1, each once: from the front to
// worker 0, from the back to the others.
type pieceQueue struct {
	mu     sync.Mutex
	lo, hi int // the pieces not handed out: lo..hi-1
}

func newPieceQueue(n int) *pieceQueue { return &pieceQueue{hi: n} }

// take returns the next piece for worker w; false when none is left.
func (q *pieceQueue) take(w int) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lo >= q.hi {
		return 0, false
	}
	if w == 0 {
		q.lo++
		return q.lo - 1, true
	}
	q.hi--
	return q.hi, true
}
