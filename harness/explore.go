package harness

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// dfs is the exhaustive chooser: a depth-first odometer over the choice
// points of a stateless re-execution (each run replays a prefix of choices
// and extends it with option 0).
type dfs struct {
	path  []step
	pos   int
	shard int // this worker's shard, or -1
	of    int // number of shards
	zero  bool
}

// step is one choice point on the current path: the choice made, the
// options offered, and how many of them this shard explores.
type step struct{ c, n, lim int }

func (d *dfs) Choose(p *Point, opts []Option) int {
	n := len(opts)
	if d.pos < len(d.path) {
		s := d.path[d.pos]
		if s.n != n {
			panic("harness: nondeterministic run: option count changed on replay of a prefix")
		}
		d.pos++
		if s.c != 0 {
			d.zero = false
		}
		return s.c
	}
	// Sharding: the first non-default choice decides the shard. While every
	// choice so far is the default, only the owner of this position may
	// leave it.
	lim := n
	if d.of > 1 && d.zero && d.pos%d.of != d.shard {
		lim = 1
	}
	d.path = append(d.path, step{0, n, lim})
	d.pos++
	return 0
}

// next advances to the next unexplored path; false when done.
func (d *dfs) next() bool {
	for len(d.path) > 0 {
		s := &d.path[len(d.path)-1]
		if s.c+1 < s.lim {
			s.c++
			d.pos, d.zero = 0, true
			return true
		}
		d.path = d.path[:len(d.path)-1]
	}
	return false
}

// ExploreOptions configure an exploration.
type ExploreOptions struct {
	RunOptions
	// Workers run shards in parallel (0 or 1: single-threaded).
	Workers int
	// Shard/Shards restrict the run to one shard of a sharded space (for CI
	// job matrices); Shards 0 means unsharded.
	Shard, Shards int
	// MaxRuns stops early (0: no limit).
	MaxRuns int64
	// StopAtFirst stops at the first violation.
	StopAtFirst bool
	// OnViolation is called synchronously for every failing run, before
	// anything else happens (write the schedule to disk there).
	OnViolation func(*Result)
	// Checkpoint, if set, is called every CheckpointEvery runs (default
	// 10000) and at the end with the explorer's state; pass a saved state
	// back as Resume to continue a long run where it stopped. Both work
	// with one worker and one shard per call.
	Checkpoint      func(*Checkpoint)
	CheckpointEvery int64
	Resume          *Checkpoint
	// Stop, if set, ends the exploration between two runs once it is true
	// (a signal handler sets it); the Summary is then partial.
	Stop *atomic.Bool
}

// subShards is how many pieces each worker's share is cut into; idle
// workers pull the next piece, which evens out lopsided subtrees.
const subShards = 16

// Checkpoint is the state of an interrupted exhaustive exploration: the DFS
// path of the next schedule to run, and the counts so far. It is plain data
// (JSON-encodable); the scenario is not part of it.
type Checkpoint struct {
	Shard, Shards int
	Path          [][3]int // per choice point: choice, options, options explored
	Runs          int64
	Violations    int64
	Done          bool
}

// Summary is the outcome of an exploration.
type Summary struct {
	Runs       int64
	Violations int64
	First      *Result // the first failing run, if any
	Known      map[string]int64
	Coverage   Coverage
	Points     int64
	Complete   bool // the whole bounded space was explored
}

func (s *Summary) add(o *Summary) {
	s.Runs += o.Runs
	s.Violations += o.Violations
	s.Points += o.Points
	if s.First == nil {
		s.First = o.First
	}
	for k, v := range o.Known {
		if s.Known == nil {
			s.Known = map[string]int64{}
		}
		s.Known[k] += v
	}
	s.Coverage.Merge(&o.Coverage)
	s.Complete = s.Complete && o.Complete
}

// Explore runs the exhaustive DFS over sc within sc.Bound and reports the
// exact number of schedules visited.
func Explore(sc *Scenario, opt ExploreOptions) (*Summary, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	shards := opt.Shards
	if shards <= 0 {
		shards = 1
	}
	workers := opt.Workers
	if workers < 1 {
		workers = 1
	}
	// The job's shard is cut into workers*subShards pieces (one piece with
	// one worker and no checkpointing); workers pull pieces in order.
	pieces := workers * subShards
	if workers == 1 || opt.Checkpoint != nil || opt.Resume != nil {
		pieces = 1
	}
	sub := shards * pieces
	total := &Summary{Complete: true}
	var mu sync.Mutex
	var stop bool
	var wg sync.WaitGroup
	var firstErr error
	var next atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= pieces {
					return
				}
				s, err := exploreShard(sc, opt, opt.Shard+i*shards, sub, &mu, &stop)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if s != nil {
					total.add(s)
				}
				st := stop
				mu.Unlock()
				if st || err != nil || opt.Stop != nil && opt.Stop.Load() {
					total.Complete = false
					return
				}
			}
		}()
	}
	wg.Wait()
	return total, firstErr
}

func exploreShard(sc *Scenario, opt ExploreOptions, shard, of int, mu *sync.Mutex, stop *bool) (*Summary, error) {
	r, err := newRunner(sc)
	if err != nil {
		return nil, err
	}
	d := &dfs{shard: shard, of: of, zero: true}
	s := &Summary{Complete: true}
	if cp := opt.Resume; cp != nil {
		if cp.Done {
			return s, nil
		}
		for _, st := range cp.Path {
			d.path = append(d.path, step{st[0], st[1], st[2]})
		}
		s.Runs, s.Violations = cp.Runs, cp.Violations
	}
	save := func(done bool) {
		if opt.Checkpoint == nil {
			return
		}
		cp := &Checkpoint{Shard: shard, Shards: of, Runs: s.Runs, Violations: s.Violations, Done: done}
		for _, st := range d.path {
			cp.Path = append(cp.Path, [3]int{st.c, st.n, st.lim})
		}
		opt.Checkpoint(cp)
	}
	every := opt.CheckpointEvery
	if every <= 0 {
		every = 10000
	}
	ro := opt.RunOptions
	ro.Coverage = &s.Coverage
	for {
		if opt.Stop != nil && opt.Stop.Load() {
			s.Complete = false
			save(false)
			return s, nil
		}
		res := r.run(d, ro)
		counted := !(of > 1 && len(res.Schedule.Events)+len(res.Schedule.Orders) == 0 && shard != 0)
		if counted {
			s.Runs++
			s.Points += int64(res.Points)
			for _, k := range res.Known {
				if s.Known == nil {
					s.Known = map[string]int64{}
				}
				s.Known[k.Known]++
			}
			if res.Failed() {
				s.Violations++
				res.Run = s.Runs
				if opt.OnViolation != nil {
					mu.Lock()
					opt.OnViolation(res)
					mu.Unlock()
				}
				if s.First == nil {
					s.First = res
				}
				if opt.StopAtFirst {
					mu.Lock()
					*stop = true
					mu.Unlock()
				}
			}
		}
		if opt.MaxRuns > 0 && s.Runs >= opt.MaxRuns {
			if !d.next() {
				save(true)
				return s, nil
			}
			save(false)
			s.Complete = false
			return s, nil
		}
		if opt.StopAtFirst {
			mu.Lock()
			st := *stop
			mu.Unlock()
			if st {
				s.Complete = false
				return s, nil
			}
		}
		if !d.next() {
			save(true)
			return s, nil
		}
		if s.Runs%every == 0 {
			save(false) // the path now names the next schedule to run
		}
	}
}

// random injects at each choice point with probability p, uniformly among
// the alternatives; orders are chosen uniformly.
type random struct {
	rng *rand.Rand
	p   float64
}

func (c *random) Choose(p *Point, opts []Option) int {
	if p.Kind == PointOrder {
		if c.rng.Float64() < 0.5 {
			return c.rng.IntN(len(opts))
		}
		return 0
	}
	if c.rng.Float64() >= c.p {
		return 0
	}
	return 1 + c.rng.IntN(len(opts)-1)
}

// NewRandom returns a seeded random chooser that injects at a choice point
// with probability p.
func NewRandom(seed uint64, p float64) Chooser {
	return &random{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), p: p}
}

// pct is a PCT-style chooser: it picks K change points uniformly among the
// first N choice points of a run and injects a random alternative there.
// For a bug that needs d specific injections among N points, one run finds
// it with probability at least 1/N^d (PCT, Burckhardt et al. 2010, adapted
// to run-to-completion interrupts: no priorities, only change points).
type pct struct {
	rng    *rand.Rand
	n      int
	points map[int]bool
}

// NewPCT returns a PCT chooser for runs of about n choice points with k
// change points per run; call Reset between runs.
func NewPCT(seed uint64, n, k int) *PCTChooser {
	c := &PCTChooser{pct{rng: rand.New(rand.NewPCG(seed, ^seed)), n: n, points: map[int]bool{}}, k}
	c.Reset()
	return c
}

// PCTChooser is the PCT chooser with its per-run reset.
type PCTChooser struct {
	pct
	k int
}

// Reset draws new change points.
func (c *PCTChooser) Reset() {
	clear(c.points)
	for i := 0; i < c.k; i++ {
		c.points[c.rng.IntN(c.n)] = true
	}
}

func (c *PCTChooser) Choose(p *Point, opts []Option) int {
	if !c.points[p.Index] {
		return 0
	}
	return 1 + c.rng.IntN(len(opts)-1)
}

// Sample runs n random schedules (seeded; worker w uses seed+w) and stops at
// the first violation if asked.
func Sample(sc *Scenario, seed uint64, n int64, mode string, opt ExploreOptions) (*Summary, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	workers := opt.Workers
	if workers < 1 {
		workers = 1
	}
	// Size runs once for p and PCT's N.
	base, err := Run(sc, noChoice{}, RunOptions{NoOracles: true})
	if err != nil {
		return nil, err
	}
	pts := base.Points
	if pts < 1 {
		pts = 1
	}
	total := &Summary{Complete: true}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var stop bool
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r, _ := newRunner(sc)
			s := &Summary{}
			ro := opt.RunOptions
			ro.Coverage = &s.Coverage
			var ch Chooser
			var pc *PCTChooser
			k := sc.Bound.K + sc.Bound.E
			if k < 1 {
				k = 1
			}
			if mode == "pct" {
				pc = NewPCT(seed+uint64(w), pts, k)
				ch = pc
			} else {
				ch = NewRandom(seed+uint64(w), float64(k)/float64(pts))
			}
			for i := int64(w); i < n; i += int64(workers) {
				if pc != nil {
					pc.Reset()
				}
				if opt.Stop != nil && opt.Stop.Load() {
					break
				}
				res := r.run(ch, ro)
				s.Runs++
				res.Run = i + 1
				for _, k := range res.Known {
					if s.Known == nil {
						s.Known = map[string]int64{}
					}
					s.Known[k.Known]++
				}
				if res.Failed() {
					s.Violations++
					mu.Lock()
					if opt.OnViolation != nil {
						opt.OnViolation(res)
					}
					if opt.StopAtFirst {
						stop = true
					}
					mu.Unlock()
					if s.First == nil {
						s.First = res
					}
				}
				if opt.StopAtFirst {
					mu.Lock()
					st := stop
					mu.Unlock()
					if st {
						break
					}
				}
			}
			mu.Lock()
			total.add(s)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	total.Complete = false
	return total, nil
}
