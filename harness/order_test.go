package harness

import (
	"slices"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

func TestOrderPieces(t *testing.T) {
	ev := []OptKind{OptContinue, OptIRQ, OptRemote}
	irq := []OptKind{OptContinue, OptIRQ}
	ord := []OptKind{OptOrder, OptOrder}
	path := func(kinds ...[]OptKind) [][]OptKind { return kinds }
	for _, tc := range []struct {
		name                  string
		kinds                 [][]OptKind
		first, shards, pieces int
		wantFirst             int // the piece that must come first
	}{
		// One IRQ a point: owner(p, 1, 4) is (p+1) mod 4, and the earlier
		// the point, the larger the subtree.
		{"the earliest event first", path(irq, irq, irq, irq), 0, 1, 4, 1},
		// An order's subtree is the whole exploration after it again:
		// (P-p)^3 against the events' (P-p)^2. owner(3, 1, 4) = (3*golden+1)
		// mod 4 = 0.
		{"an order outweighs earlier events", path(ev, ev, ev, ord, ev, ev, ev, ev, ev, ev), 0, 1, 4, 0},
		// No option at all: every estimate is 0, index order.
		{"ties keep index order", path([]OptKind{OptContinue}), 0, 1, 4, 0},
		// Shard 1 of 2, two pieces: pieces 0 and 1 are shards 1 and 3 of 4,
		// owning options 1 and 3 of point 0 (option 2 is shard 2's); option
		// 3 is an order, so piece 1 comes first.
		{"a shard's own pieces", path([]OptKind{OptContinue, OptIRQ, OptRemote, OptOrder}, []OptKind{OptContinue}), 1, 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := orderPieces(tc.kinds, tc.first, tc.shards, tc.pieces)
			sorted := slices.Clone(got)
			slices.Sort(sorted)
			for i, v := range sorted {
				if v != i {
					t.Fatalf("order %v is not a permutation of %d pieces", got, tc.pieces)
				}
			}
			if got[0] != tc.wantFirst {
				t.Errorf("order %v: piece %d first, want %d", got, got[0], tc.wantFirst)
			}
		})
	}
}

// TestPieceOrderStd: on std with no cap (lazy orders), the piece that owns
// the eager region order met on the default path (the second order of a
// region whose orders drop a store) comes first; it held a fifth of the
// work. The order is a permutation, and the same from run to run.
func TestPieceOrderStd(t *testing.T) {
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 0
	e := &explorer{sc: sc, opt: ExploreOptions{Cache: true, LazyOrders: true}, shards: 1, pieces: 32}
	got := e.pieceOrder(true)
	if len(got) != 32 {
		t.Fatalf("order %v, want 32 pieces", got)
	}
	k := &kindRecorder{}
	r, err := newRunner(sc)
	if err != nil {
		t.Fatal(err)
	}
	r.lazy, r.hashing = true, true
	r.run(k, RunOptions{})
	want := -1
	for pos, ks := range k.kinds {
		if len(ks) > 1 && ks[1] == OptOrder {
			want = owner(pos, 1, 32)
			break
		}
	}
	if want < 0 {
		t.Fatal("no order point on std's default path (the scenario changed: pick another)")
	}
	if got[0] != want {
		t.Errorf("order %v: piece %d first, want %d (owns the first order point's second order)", got, got[0], want)
	}
	if again := e.pieceOrder(true); !slices.Equal(again, got) {
		t.Errorf("order %v, then %v", got, again)
	}
}
