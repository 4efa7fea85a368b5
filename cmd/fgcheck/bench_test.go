package main

import (
	"sync"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// The cost of exploring a schedule against the cost of replaying it with
// every oracle off (DESIGN.md "Speed": the exploration's cost per schedule
// should stay within a small factor of that). Both report ns/schedule over
// the first benchRuns schedules of std on latest.

const benchRuns = 2000

// odometer is a depth-first chooser over harness.Run, used to collect the
// schedules the exhaustive explorer visits first.
type odometer struct {
	path []struct{ c, n int }
	pos  int
}

func (d *odometer) Choose(_ *harness.Point, opts []harness.Option) int {
	if d.pos < len(d.path) {
		d.pos++
		return d.path[d.pos-1].c
	}
	d.path = append(d.path, struct{ c, n int }{0, len(opts)})
	d.pos++
	return 0
}

func (d *odometer) next() bool {
	for len(d.path) > 0 {
		s := &d.path[len(d.path)-1]
		if s.c+1 < s.n {
			s.c++
			d.pos = 0
			return true
		}
		d.path = d.path[:len(d.path)-1]
	}
	return false
}

var benchSchedules = sync.OnceValues(func() ([]harness.Schedule, error) {
	sc := harness.Standard(fgraph.Latest)
	d := &odometer{}
	var out []harness.Schedule
	for len(out) < benchRuns {
		res, err := harness.Run(sc, d, harness.RunOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Schedule)
		if !d.next() {
			break
		}
	}
	return out, nil
})

func BenchmarkExploreStd(b *testing.B) {
	sc := harness.Standard(fgraph.Latest)
	for b.Loop() {
		s, err := harness.Explore(sc, harness.ExploreOptions{MaxRuns: benchRuns})
		if err != nil || s.Runs != benchRuns {
			b.Fatalf("explored %v schedules (%v)", s, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRuns), "ns/schedule")
}

func benchReplay(b *testing.B, opt harness.RunOptions) {
	scheds, err := benchSchedules()
	if err != nil {
		b.Fatal(err)
	}
	sc := harness.Standard(fgraph.Latest)
	b.ResetTimer()
	for b.Loop() {
		for _, s := range scheds {
			if _, err := harness.Run(sc, harness.NewReplay(sc, s), opt); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(scheds)), "ns/schedule")
}

func BenchmarkReplayStdNoOracles(b *testing.B) { benchReplay(b, harness.RunOptions{NoOracles: true}) }

func BenchmarkReplayStd(b *testing.B) { benchReplay(b, harness.RunOptions{}) }
