package harness

import "slices"

// The order in which workers pull the pieces of a shard.
//
// A piece owns the schedules whose first non-default choice is one of its
// (point, option) pairs (owner), so its size is set by the subtrees below
// those options, and they are far from even: on std with no cap, one piece
// of 32 held a fifth of the work (20 s of two workers' 53 s), because it
// owned the second order of an eager region met early, whose subtree is
// the whole exploration after that point again. Pulled in index order it
// started at 34 s and ran alone for the last 12. Started first, the other
// worker fills that time with the small pieces.
//
// pieceOrder estimates each piece's size from one run of the all-default
// schedule (the path every piece starts on) and puts the pieces in
// decreasing order of it (longest processing time first). The estimate of
// an option at point p of P: (P-p)^3 for an option that spends no event
// (a region order, a lazy region's other class), (P-p)^2 for an interrupt
// or a remote action, which leaves one event fewer for its subtree. It is
// a heuristic for the order only: every piece is still explored whole,
// and the totals do not depend on the order.

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

// pieceOrder returns the indices of the job's pieces, largest estimate
// first (ties in index order), or nil when the default run cannot be made.
func (e *explorer) pieceOrder(cache bool) (order []int) {
	defer func() {
		if recover() != nil {
			order = nil // the pieces report the failure themselves
		}
	}()
	r, err := newRunner(e.sc)
	if err != nil {
		return nil
	}
	r.lazy = e.opt.LazyOrders
	r.mergeOpt = e.opt.MergeRemotes
	r.hashing = cache
	k := &kindRecorder{}
	o := e.opt.RunOptions
	r.run(k, RunOptions{Strict: o.Strict, NoOracles: o.NoOracles, KeepGoing: o.KeepGoing, InOrder: o.InOrder})
	return orderPieces(k.kinds, e.opt.Shard, e.shards, e.pieces)
}

// orderPieces is pieceOrder's estimate for the default path's choice
// points (their options' kinds) and the pieces of shard first of shards.
func orderPieces(kinds [][]OptKind, first, shards, pieces int) []int {
	of := shards * pieces
	size := make([]float64, of)
	n := float64(len(kinds))
	for pos, ks := range kinds {
		left := n - float64(pos)
		for c := 1; c < len(ks); c++ {
			w := left * left
			if ks[c] == OptOrder || ks[c] == OptContinue {
				w *= left
			}
			size[owner(pos, c, of)] += w
		}
	}
	order := make([]int, pieces)
	for i := range order {
		order[i] = i
	}
	shard := func(i int) int { return first + i*shards }
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := size[shard(a)], size[shard(b)]
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return order
}
