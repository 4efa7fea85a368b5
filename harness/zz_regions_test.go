package harness

import (
	"fmt"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

type zzCh struct{}

func (zzCh) Choose(p *Point, opts []Option) int {
	if p.Kind == PointOrder {
		fmt.Printf("ORDER %s ctx=%s opts=%d\n", p.Pos, p.Ctx, len(opts))
		for _, o := range opts[:min(len(opts), 30)] {
			fmt.Printf("   %v drop=%v\n", o.Order, o.Drop)
		}
	}
	return 0
}

func TestZZRegions(t *testing.T) {
	for _, sc := range []*Scenario{PeerSpin(fgraph.Latest), Standard(fgraph.Latest)} {
		fmt.Println("==", sc.Name)
		res, err := Run(sc, zzCh{}, RunOptions{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range res.Trace {
			fmt.Println(l)
		}
	}
}
