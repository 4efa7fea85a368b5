package harness

import (
	"slices"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

func TestCutPieces(t *testing.T) {
	ev := []OptKind{OptContinue, OptIRQ, OptRemote}
	irq := []OptKind{OptContinue, OptIRQ}
	ord := []OptKind{OptOrder, OptOrder}
	path := func(kinds ...[]OptKind) [][]OptKind { return kinds }
	for _, tc := range []struct {
		name                  string
		kinds                 [][]OptKind
		shard, shards, pieces int
		want                  []int // each option's piece, in path order
		why                   string
	}{
		{"one event a point", path(irq, irq, irq, irq), 0, 1, 4, []int{0, 1, 2, 3},
			"estimates 16, 9, 4, 1: each holds the share of what is left after the earlier ones"},
		{"an order is a piece of its own", path(ev, ev, ev, ord, ev, ev, ev, ev, ev, ev), 0, 1, 8, []int{0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
			"the order at point 3 (option 6) weighs 7^3 = 343 of 1,015, more than a share of what is left: a piece alone; the later events, 36 and less each, share the last pieces"},
		{"four pieces: the order with the events after it", path(ev, ev, ev, ord, ev, ev, ev, ev, ev, ev), 0, 1, 4, []int{0, 0, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
			"with four pieces the order does not fit the third piece's share: it starts the last, which takes what is left"},
		{"more pieces than options", path(irq, irq), 0, 1, 4, []int{0, 1},
			"the last pieces own nothing"},
		{"another shard's options weigh nothing", path(ev, ev, ev), 1, 2, 2, []int{0, 1, 1, 1, 1, 1},
			"shard 1 of 2 owns (0, 1), (1, 2) and (2, 1) (p+c odd: the hash's multiplier is odd), estimates 9, 4 and 1: the first is over half, a piece alone"},
		{"no options", path([]OptKind{OptContinue}), 0, 1, 4, []int{},
			"a default path with one option per point leaves nothing to cut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := cutPieces(tc.kinds, tc.shard, tc.shards, tc.pieces)
			if !slices.Equal(m.of, tc.want) {
				t.Errorf("pieces %v, want %v (%s)", m.of, tc.want, tc.why)
			}
			if !slices.IsSorted(m.of) {
				t.Errorf("pieces %v: not runs of consecutive options", m.of)
			}
		})
	}
}

// TestPieceMapPartition: every option of std's default path, and options
// beyond it (a run that was not deterministic), belong to exactly one
// piece of one shard, for one to three shards of one to 32 pieces: the
// pieces partition the space exactly, whatever the estimate.
func TestPieceMapPartition(t *testing.T) {
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{Cache: true, LazyOrders: true}
	for _, shards := range []int{1, 2, 3} {
		for _, pieces := range []int{1, 2, 32} {
			maps := make([]*pieceMap, shards)
			for s := range maps {
				maps[s] = newPieceMap(sc, opt, s, shards, pieces)
			}
			points := len(maps[0].first) - 1
			if pieces > 1 && points < 10 {
				t.Fatalf("%d shards, %d pieces: a default path of %d points", shards, pieces, points)
			}
			used := make([]int, pieces)
			for pos := 0; pos < points+3; pos++ {
				for c := 1; c < 12; c++ {
					owners := 0
					for s, m := range maps {
						for p := 0; p < pieces; p++ {
							if m.owns(p, pos, c) {
								owners++
								if s == 0 {
									used[p]++
								}
							}
						}
					}
					if owners != 1 {
						t.Fatalf("%d shards of %d pieces: option %d of point %d has %d owners", shards, pieces, c, pos, owners)
					}
				}
			}
			if shards == 1 && pieces == 32 && slices.Contains(used[:16], 0) {
				t.Errorf("pieces %v own no option among the first 16 (the cut left pieces empty on a path of %d points)", used, points)
			}
		}
	}
}

// TestPieceMapStd: on std with no cap (lazy orders), the option that holds
// a fifth of the work, the second order of the eager region met first on
// the default path, is in a piece with no later option: the workers start
// it early rather than behind the options after it. The cut is the same
// from run to run.
func TestPieceMapStd(t *testing.T) {
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 0
	opt := ExploreOptions{Cache: true, LazyOrders: true}
	m := newPieceMap(sc, opt, 0, 1, 32)
	k := &kindRecorder{}
	r, err := newRunner(sc)
	if err != nil {
		t.Fatal(err)
	}
	r.lazy, r.hashing = true, true
	r.run(k, RunOptions{})
	at := -1
	for pos, ks := range k.kinds {
		if len(ks) > 1 && ks[1] == OptOrder {
			at = pos
			break
		}
	}
	if at < 0 {
		t.Fatal("no order point on std's default path (the scenario changed: pick another)")
	}
	u := m.first[at]
	if u+1 < len(m.of) && m.of[u+1] == m.of[u] {
		t.Errorf("the order at point %d (option %d) shares piece %d with the option after it: pieces %v", at, u, m.of[u], m.of)
	}
	if m.of[u] > 16 {
		t.Errorf("the order at point %d is in piece %d of 32: pulled after half the pieces", at, m.of[u])
	}
	if again := newPieceMap(sc, opt, 0, 1, 32); !slices.Equal(again.of, m.of) || !slices.Equal(again.first, m.first) {
		t.Errorf("the cut differs from run to run: %v, then %v", m.of, again.of)
	}
}

func TestPieceQueue(t *testing.T) {
	q := newPieceQueue(5)
	var got []int
	for _, w := range []int{0, 1, 1, 0, 2, 0, 1} {
		if p, ok := q.take(w); ok {
			got = append(got, p)
		}
	}
	// Worker 0 from the front, the others from the back, each piece once.
	if want := []int{0, 4, 3, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("pieces %v, want %v", got, want)
	}
}
