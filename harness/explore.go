package harness

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// dfs is the exhaustive chooser: a depth-first odometer over the choice
// points of a stateless re-execution (each run replays a prefix of choices
// and extends it with option 0).
type dfs struct {
	path []step
	pos  int
	// pm, if set, says which options of the default path the piece this
	// DFS explores owns (pieces.go); nil: every option is its own.
	pm    *pieceMap
	piece int
	zero  bool
	// cache, if set, is the visited-state cache (cache.go); keys are the
	// recorded choice points of the path, deepest last.
	cache *cacheState
	keys  []keyed
}

// step is one choice point on the current path: the choice made, the
// options offered, and how many of them this shard explores (lim), or
// lim < 0 for a point where the shard takes only the options it owns.
type step struct{ c, n, lim int }

func (d *dfs) Choose(p *Point, opts []Option) int {
	n := len(opts)
	if d.cache != nil && d.cache.hit {
		return 0 // the rest of this run is a subtree the cache holds
	}
	if d.pos < len(d.path) {
		s := d.path[d.pos]
		if s.n != n {
			internalf("nondeterministic run: choice point %d offers %d options on replay of a prefix, %d before", d.pos, n, s.n)
		}
		d.pos++
		if s.c != 0 {
			d.zero = false
		}
		return s.c
	}
	// Sharding: the first non-default choice decides the shard. While every
	// choice so far is the default, a shard leaves the default only for
	// the options it owns.
	lim := n
	if d.pm != nil && d.zero {
		lim = -1
	}
	// Only a point whose whole subtree this piece explores is cached.
	if d.cache != nil && lim >= 0 && d.lookup() {
		return 0
	}
	d.path = append(d.path, step{0, n, lim})
	d.pos++
	return 0
}

// skip sets the DFS past the replayed choice points up to to, which the
// run does not reach: it restored what they led to (evsnap.go).
func (d *dfs) skip(to int) {
	if to > len(d.path) {
		internalf("dfs: skipping to choice point %d of a path of %d", to, len(d.path))
	}
	for i := d.pos; d.zero && i < to; i++ {
		if d.path[i].c != 0 {
			d.zero = false
		}
	}
	d.pos = max(d.pos, to)
}

// rewind sets the DFS to choice point to of its path: the point a run
// resumes at (its snap's), or one it replays again (irqstart.go's
// catch-up). Whether the choices before it are all the default is read
// up to the first that is not (reading the whole prefix at every run was
// 0.8 % of std C=3's CPU samples).
func (d *dfs) rewind(to int) {
	d.pos, d.zero = to, true
	for _, st := range d.path[:to] {
		if st.c != 0 {
			d.zero = false
			break
		}
	}
}

// following is the option after c that step i explores, or s.n if none.
func (d *dfs) following(i int) int {
	s := d.path[i]
	if s.lim >= 0 {
		if s.c+1 < s.lim {
			return s.c + 1
		}
		return s.n
	}
	for c := s.c + 1; c < s.n; c++ {
		if d.pm.owns(d.piece, i, c) {
			return c
		}
	}
	return s.n
}

// next advances to the next unexplored path; false when done.
func (d *dfs) next() bool {
	for len(d.path) > 0 {
		i := len(d.path) - 1
		if d.cache != nil {
			d.leaveBelow(i) // the subtrees of quiescent points after step i (quiet)
		}
		if c := d.following(i); c < d.path[i].n {
			d.path[i].c = c
			d.pos, d.zero = 0, true
			return true
		}
		if d.cache != nil {
			d.leave(i)
		}
		d.path = d.path[:i]
	}
	if d.cache != nil {
		d.leaveBelow(-1)
	}
	return false
}

// ExploreOptions configure an exploration.
type ExploreOptions struct {
	RunOptions
	// Workers run pieces of the space in parallel (0 or 1: single-threaded).
	Workers int
	// Shard/Shards restrict the run to one shard of a sharded space (for CI
	// job matrices); Shards 0 means unsharded.
	Shard, Shards int
	// MaxRuns stops early after that many schedules run by this call, all
	// workers together (0: no limit).
	MaxRuns int64
	// StopAtFirst stops at the first failing run of kbuild's compiler
	// model (Result.Kbuild). A violation that needs the no-alias model
	// does not stop it: the exploration goes on until kbuild's verdict is
	// known too (a kbuild-legal violation, or the whole space).
	StopAtFirst bool
	// OnViolation is called synchronously for every failing run, before
	// anything else happens (write the schedule to disk there). Unless
	// OnRun is set, the run's reports of known findings come without
	// their detail (the model oracle's diff): Replay renders it.
	OnViolation func(*Result)
	// OnRun, if set, is called for every counted run, serialized, after
	// OnViolation (Explore only; tests use it to see every schedule),
	// every report with its detail.
	OnRun func(*Result)
	// Checkpoint, if set, is called every CheckpointEvery runs of a piece
	// (default 10000), whenever the exploration stops (Stop, MaxRuns, the
	// first violation) and at the end, with a copy of the explorer's state;
	// pass a saved state back as Resume to continue where it stopped. Calls
	// are serialized.
	Checkpoint      func(*Checkpoint)
	CheckpointEvery int64
	Resume          *Checkpoint
	// Stop, if set, ends the exploration between two runs once it is true
	// (a signal handler or a time budget sets it); the Summary is then
	// partial and the last Checkpoint resumes it.
	Stop *atomic.Bool
	// Progress, if set, is updated as the exploration goes (read it from
	// another goroutine to draw a progress display).
	Progress *Progress
	// Cache prunes the subtrees of visited states (cache.go, state.go):
	// the same schedule, violation and known-finding counts as without,
	// much less work. Ignored (the plain DFS runs, Summary.CacheOff says
	// why) where the state cannot be encoded: E > 1, a compiled target
	// that is no StateTarget.
	Cache bool
	// CacheEntries bounds the table of subtrees, which all workers share
	// (0: DefaultCacheEntries), and the tails' table as much;
	// CacheExact stores whole state encodings instead of 96 bits of their
	// XXH3-128 hash (no collision risk, more memory).
	CacheEntries int
	CacheExact   bool
	// LazyOrders chooses region orders lazily (lazy.go): a run stands for
	// every order its events cannot tell apart, and is counted as that
	// many schedules. The same schedule, violation and known-finding
	// counts and verdicts, fewer runs; not the same choice-point count nor
	// the same first violation.
	LazyOrders bool
	// MergeRemotes runs one placement of a remote action for each set of
	// placements that leave the same state and verdicts, and counts it
	// for all (remotes.go): the same totals, fewer runs. With LazyOrders
	// too (a run's weight is both multipliers'); not on a compiled target
	// (ignored there).
	MergeRemotes bool
	// cacheDrop, if non-zero, leaves state component cacheDrop-1 out
	// (tests only: an incomplete state must be caught by the soundness
	// comparison).
	cacheDrop int
}

// Progress is a live view of a running exploration, safe to read from
// other goroutines. (There is no share-explored estimate: DFS subtrees are
// far from alike in size, the option-0 subtree holding most schedules, so
// a path-position estimate read 0.3 % when 40 % was done on std.)
type Progress struct {
	// Runs counts the schedules run so far (resumed ones included).
	Runs atomic.Int64
	// Violations counts the failing schedules so far.
	Violations atomic.Int64
}

// subShards is how many pieces each worker's share is cut into; idle
// workers pull the next piece, which evens out lopsided subtrees.
const subShards = 16

// Checkpoint is the state of an interrupted exhaustive exploration: the
// job's shard, and for each piece it is cut into, the DFS path of the next
// schedule to run and the totals so far. It is plain data (JSON-encodable);
// the scenario is not part of it, so the caller must resume with the same
// scenario and options (fgcheck's --checkpoint file records and checks a
// fingerprint of both).
type Checkpoint struct {
	Shard, Shards int
	Pieces        []PieceState
}

// PieceState is one piece of a Checkpoint. A piece not started has an empty
// Path and Started false; a finished one has Done true.
type PieceState struct {
	Started, Done bool
	Path          [][3]int // per choice point: choice, options, options explored (-1: the options the shard owns)
	Runs          int64
	Violations    int64
	Points        int64
	Known         map[string]int64 `json:",omitempty"`
	// KnownBy is Summary.KnownBy, by oracle name.
	KnownBy  map[string][]string `json:",omitempty"`
	Coverage Coverage
	// The counts of the piece's runs of kbuild's model (Summary.Kbuild).
	KbuildRuns       int64
	KbuildViolations int64
	KbuildKnown      map[string]int64 `json:",omitempty"`
}

// Runs is the number of schedules the checkpoint has counted.
func (c *Checkpoint) Runs() int64 {
	var n int64
	for i := range c.Pieces {
		n += c.Pieces[i].Runs
	}
	return n
}

// Violations is the number of failing schedules the checkpoint has counted.
func (c *Checkpoint) Violations() int64 {
	var n int64
	for i := range c.Pieces {
		n += c.Pieces[i].Violations
	}
	return n
}

// Done reports whether every piece is finished.
func (c *Checkpoint) Done() bool {
	for i := range c.Pieces {
		if !c.Pieces[i].Done {
			return false
		}
	}
	return len(c.Pieces) > 0
}

func (c *Checkpoint) clone() *Checkpoint {
	out := &Checkpoint{Shard: c.Shard, Shards: c.Shards, Pieces: make([]PieceState, len(c.Pieces))}
	for i, p := range c.Pieces {
		p.Path = append([][3]int(nil), p.Path...)
		p.Known, p.KbuildKnown, p.KnownBy = maps.Clone(p.Known), maps.Clone(p.KbuildKnown), maps.Clone(p.KnownBy)
		out.Pieces[i] = p
	}
	return out
}

// Summary is the outcome of an exploration. Runs, Violations, First and
// Known are of the scenario's own compiler model: the no-alias model, or
// kbuild's with Scenario.Alias; Kbuild gives kbuild's verdict of the same
// exploration.
type Summary struct {
	Runs       int64
	Violations int64
	First      *Result // the first failing run, if any (its reports of known findings without their detail unless OnRun is set: RunOptions.knownBrief)
	Known      map[string]int64
	// KnownBy gives, per known finding, the oracles that reported it in
	// some schedule: the (oracle, known finding) verdicts.
	KnownBy map[string]OracleSet
	// Kbuild counts the runs of kbuild's compiler model among them
	// (Result.Kbuild): exactly what the exploration of the same scenario
	// with Alias set counts (for a scenario with Alias set, or a compiled
	// target, the same as the whole).
	Kbuild   ModelSummary
	Coverage Coverage
	Points   int64
	Complete bool // the whole bounded space was explored
	// Cache is what the state cache did (ExploreOptions.Cache); Executed
	// counts the runs actually executed (with the cache, pruned runs
	// included; without, Runs).
	Cache    *CacheStats
	CacheOff string // why the cache was not used, if asked for
	Executed int64
	// ByChange counts the runs executed by the choice each changed from
	// the run before it, with the accesses they replayed and ran anew
	// (changes.go; indexed by ChangeNone...).
	ByChange [NumChanges]ChangeCount
	// ByRemote splits ByChange[ChangeRemote] by the remote action the
	// runs took (indexed as Scenario.Remotes; nil when none ran).
	ByRemote []ChangeCount
}

// ModelSummary is an exploration's counts under one compiler model.
type ModelSummary struct {
	Runs       int64
	Violations int64
	First      *Result // the first failing run of the model, if any
	Known      map[string]int64
}

func (m *ModelSummary) add(o *ModelSummary) {
	m.Runs += o.Runs
	m.Violations += o.Violations
	if m.First == nil {
		m.First = o.First
	}
	addCounts(&m.Known, o.Known)
}

func addCounts(dst *map[string]int64, src map[string]int64) {
	for k, v := range src {
		inc(dst, k, v)
	}
}

// inc adds n to (*m)[k], making the map if needed.
func inc(m *map[string]int64, k string, n int64) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[k] += n
}

// count adds one counted run: to the totals, and to kbuild's if it is a
// run of kbuild's compiler model.
func (s *Summary) count(res *Result) {
	s.Points += int64(res.Points)
	for _, k := range res.Known {
		s.addKnownBy(k.Known, 1<<oracleIndex[k.Oracle])
	}
	w, wk := res.weights()
	countRun(res, w, &s.Runs, &s.Violations, &s.First, &s.Known)
	if m := &s.Kbuild; wk > 0 {
		countRun(res, wk, &m.Runs, &m.Violations, &m.First, &m.Known)
	}
}

// weights are the schedules res stands for, all and kbuild's: 1 and 1 (0
// for a run only the no-alias model has), but for a lazy run (lazy.go).
func (res *Result) weights() (w, wk int64) { return res.weight, res.weightK }

// addKnownBy adds the oracles by to the verdicts of known finding name.
func (s *Summary) addKnownBy(name string, by OracleSet) {
	if by == 0 {
		return
	}
	if s.KnownBy == nil {
		s.KnownBy = map[string]OracleSet{}
	}
	s.KnownBy[name] |= by
}

// OracleSet is a set of oracles, a bit per index in Oracles.
type OracleSet uint8

// Names lists the set's oracles in Oracles' order.
func (o OracleSet) Names() []string {
	var out []string
	for i, name := range Oracles {
		if o&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// countRun adds res, which stands for w schedules, to one model's counts.
func countRun(res *Result, w int64, runs, viol *int64, first **Result, known *map[string]int64) {
	*runs += w
	for _, k := range res.Known {
		inc(known, k.Known, w)
	}
	if res.Failed() {
		*viol += w
		if *first == nil {
			*first = res
		}
	}
}

func (s *Summary) add(o *Summary) {
	s.Kbuild.add(&o.Kbuild)
	s.Runs += o.Runs
	s.Violations += o.Violations
	s.Points += o.Points
	s.Executed += o.Executed
	for i := range s.ByChange {
		s.ByChange[i].add(&o.ByChange[i])
	}
	for i := range o.ByRemote {
		s.byRemote(i, len(o.ByRemote)).add(&o.ByRemote[i])
	}
	if o.Cache != nil {
		if s.Cache == nil {
			s.Cache = &CacheStats{}
		}
		s.Cache.add(o.Cache)
	}
	if s.First == nil {
		s.First = o.First
	}
	for k, v := range o.Known {
		if s.Known == nil {
			s.Known = map[string]int64{}
		}
		s.Known[k] += v
	}
	for k, v := range o.KnownBy {
		s.addKnownBy(k, v)
	}
	s.Coverage.Merge(&o.Coverage)
	s.Complete = s.Complete && o.Complete
}

// explorer is the state one Explore call shares between its workers.
type explorer struct {
	sc     *Scenario
	opt    ExploreOptions
	shards int // the job's shard count (1: unsharded)
	pieces int // pieces of the job's shard
	// pm says which piece owns which options of the default path
	// (pieces.go); nil when one piece owns them all.
	pm *pieceMap

	mu sync.Mutex // guards cp and the OnViolation/Checkpoint calls
	cp *Checkpoint
	// stop: a violation with StopAtFirst, or a worker's error. Every run
	// of every worker reads it, without a lock.
	stop atomic.Bool
	// claimed counts the runs started that will be counted, for MaxRuns:
	// a worker claims one before it runs it, so that two workers never
	// both take the last.
	claimed atomic.Int64
}

// Explore runs the exhaustive DFS over sc within sc.Bound and reports the
// exact number of schedules visited.
func Explore(sc *Scenario, opt ExploreOptions) (*Summary, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	e := &explorer{sc: sc, opt: opt, shards: opt.Shards}
	if e.shards <= 0 {
		e.shards = 1
	}
	workers := opt.Workers
	if workers < 1 {
		workers = 1
	}
	// The job's shard is cut into workers*subShards pieces (one piece with
	// one worker) along the default path; worker 0 pulls them from the
	// front, the others from the back (pieces.go). A resumed run keeps the
	// pieces it was cut into.
	e.pieces = workers * subShards
	if workers == 1 {
		e.pieces = 1
	}
	if cp := opt.Resume; cp != nil {
		if err := cp.Validate(sc, opt); err != nil {
			return nil, fmt.Errorf("harness: bad checkpoint: %v", err)
		}
		e.pieces = len(cp.Pieces)
	}
	if opt.Checkpoint != nil {
		e.cp = &Checkpoint{Shard: opt.Shard, Shards: opt.Shards, Pieces: make([]PieceState, e.pieces)}
		if opt.Resume != nil {
			e.cp = opt.Resume.clone()
		}
	}
	if p := opt.Progress; p != nil {
		p.Runs.Store(0)
		p.Violations.Store(0)
		if opt.Resume != nil {
			p.Runs.Store(opt.Resume.Runs())
			p.Violations.Store(opt.Resume.Violations())
		}
	}
	if e.shards*e.pieces > 1 {
		e.pm = newPieceMap(sc, opt, opt.Shard, e.shards, e.pieces)
	}
	total := &Summary{Complete: true}
	// One cache for all workers, kept across the pieces: a subtree below a
	// point off the all-default prefix is whole in every piece.
	var wc *stateCache
	if opt.Cache {
		if ok, why := Cacheable(sc); !ok {
			total.CacheOff = why
		} else {
			wc = newStateCache(sc, opt.CacheEntries, opt.CacheExact, opt.cacheDrop-1, workers > 1)
			wc.prefault(prefaultFor(workers))
		}
	}
	q := newPieceQueue(e.pieces)
	// The stored combos of states with pending regions (split.go), shared
	// as wc is.
	var stbl *splitTable
	if wc != nil {
		stbl = newSplitTable(opt.CacheEntries, workers > 1)
		stbl.hk = opt.testHooks()
		stbl.mem.prefault = prefaultFor(workers)
	}
	var wg sync.WaitGroup
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// The worker's running totals per combo, with the table of
			// combos the workers share (split.go), kept across its pieces:
			// a subtree is whole in every piece, as for wc.
			sp := &splitter{splitTable: stbl}
			// The worker's clean checks' inputs, kept across its pieces
			// (readseen.go).
			seen := &readerSeen{}
			var wr *runner
			for {
				i, ok := q.take(w)
				if !ok {
					return
				}
				s, err := protect(func() (*Summary, error) { return e.piece(i, wc, sp, seen, &wr) })
				e.mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err != nil {
					e.stop.Store(true) // the other workers stop too
				}
				if s != nil {
					total.add(s)
				}
				e.mu.Unlock()
				st := e.stop.Load()
				if st || err != nil || opt.Stop != nil && opt.Stop.Load() || e.maxed() {
					// The pieces not pulled stay as they are in the
					// checkpoint: not started, or where the resumed run
					// left them (count what they hold).
					for {
						j, ok := q.take(w)
						if !ok {
							break
						}
						e.mu.Lock()
						total.add(e.resumed(j))
						e.mu.Unlock()
					}
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if wc != nil {
		stbl.release(wc)
		st := wc.statsAll()
		total.Cache = &st
		wc.release() // its arrays live apart from the heap (bigmem.go)
	}
	if e.cp != nil {
		opt.Checkpoint(e.cp.clone())
	}
	return total, firstErr
}

// maxed reports whether MaxRuns is reached.
func (e *explorer) maxed() bool {
	return e.opt.MaxRuns > 0 && e.claimed.Load() >= e.opt.MaxRuns
}

// claim takes one of MaxRuns' runs; false when none is left.
func (e *explorer) claim() bool {
	if e.opt.MaxRuns <= 0 {
		return true
	}
	if e.claimed.Add(1) > e.opt.MaxRuns {
		e.claimed.Add(-1)
		return false
	}
	return true
}

// resumed is the summary a piece holds in the Resume checkpoint (empty if
// none), with Complete set when that piece is done.
func (e *explorer) resumed(i int) *Summary {
	s := &Summary{Complete: false}
	if e.opt.Resume == nil {
		return s
	}
	p := e.opt.Resume.Pieces[i]
	s.Runs, s.Violations, s.Points, s.Coverage, s.Complete = p.Runs, p.Violations, p.Points, p.Coverage, p.Done
	s.Known = maps.Clone(p.Known)
	for name, by := range p.KnownBy {
		for _, o := range by {
			s.addKnownBy(name, 1<<oracleIndex[o])
		}
	}
	s.Kbuild = ModelSummary{Runs: p.KbuildRuns, Violations: p.KbuildViolations, Known: maps.Clone(p.KbuildKnown)}
	return s
}

// piece explores piece i of the job's shard (pieces.go) with the worker's
// seen (readseen.go) and runner *wr (made at its first piece), and
// returns its summary. The runner is the worker's across its pieces: a
// piece's first run shares nothing with the run before (startShared(-1)),
// and what the runner keeps from run to run (its records, snaps and
// buffers) is kept grown. A runner per piece made two workers grow them
// 32 times over: on peer-spin K=2, 204 ms of CPU and 3,559 page faults
// against 169 ms and 2,147 (6 Dec 2026).
func (e *explorer) piece(i int, wc *stateCache, sp *splitter, seen *readerSeen, wr **runner) (*Summary, error) {
	opt := e.opt
	r := *wr
	if r == nil {
		var err error
		if r, err = newRunner(e.sc); err != nil {
			return nil, err
		}
		r.rseen = seen
		r.lazy = opt.LazyOrders
		r.mergeOpt = opt.MergeRemotes
		r.shareRuns(opt.RunOptions)
		*wr = r
	}
	d := &dfs{pm: e.pm, piece: i, zero: true}
	r.skipper, r.fdfs = d, d
	if wc != nil {
		r.hashing = true
		d.cache = &cacheState{c: wc, r: r, verify: r.hk.verifyHook, sp: sp}
		r.tails = d
		defer d.cache.flush()
	}
	s := &Summary{Complete: true}
	if opt.Resume != nil {
		p := opt.Resume.Pieces[i]
		if p.Done {
			return e.resumed(i), nil
		}
		s = e.resumed(i)
		s.Complete = true
		for _, st := range p.Path {
			d.path = append(d.path, step{st[0], st[1], st[2]})
		}
	}
	save := func(done bool) {
		if e.cp == nil {
			return
		}
		p := PieceState{Started: true, Done: done, Runs: s.Runs, Violations: s.Violations, Points: s.Points, Coverage: s.Coverage,
			Known: maps.Clone(s.Known), KbuildRuns: s.Kbuild.Runs, KbuildViolations: s.Kbuild.Violations, KbuildKnown: maps.Clone(s.Kbuild.Known)}
		for name, by := range s.KnownBy {
			if p.KnownBy == nil {
				p.KnownBy = map[string][]string{}
			}
			p.KnownBy[name] = by.Names()
		}
		for _, st := range d.path {
			p.Path = append(p.Path, [3]int{st.c, st.n, st.lim})
		}
		if done {
			p.Path = nil
		}
		e.mu.Lock()
		e.cp.Pieces[i] = p
		if !done {
			opt.Checkpoint(e.cp.clone())
		}
		e.mu.Unlock()
	}
	every := opt.CheckpointEvery
	if every <= 0 {
		every = 10000
	}
	ro := opt.RunOptions
	ro.stop, ro.knownBrief = opt.Stop, opt.OnRun == nil
	lastSave := s.Runs // with the cache, Runs moves by whole subtrees
	var mat *runner    // lazy orders: the runner that materializes failing runs
	for {
		// The all-default run is the first of every piece; only piece 0
		// of shard 0 counts it (and its coverage), so that the pieces
		// partition the space exactly whatever their number.
		uncounted := e.pm != nil && (opt.Shard != 0 || i != 0) && len(d.path) == 0
		if opt.Stop != nil && opt.Stop.Load() || !uncounted && !e.claim() || uncounted && e.maxed() {
			s.Complete = false
			save(false)
			return s, nil
		}
		ro.Coverage = &s.Coverage
		if uncounted {
			ro.Coverage = nil
		}
		if d.cache != nil {
			d.cache.hit = false
		}
		// The choices before the last step of the path are the previous
		// run's (next() changed only the last one).
		until := len(d.path) - 1
		if s.Executed == 0 {
			until = -1 // no previous run in this piece
		}
		if p := r.startShared(until); p != nil {
			// The DFS replays the snap's choices no more.
			d.rewind(p.points)
		}
		r.chgAt = until
		res := r.run(d, ro)
		if r.halted {
			// Cut short by Stop: not counted (nor its coverage); the
			// path, with the choice points this run reached, still
			// names it.
			r.takeBackCov(&s.Coverage)
			s.Complete = false
			save(false)
			return s, nil
		}
		s.Executed++
		r.countChange(s, d.cache != nil && d.cache.hit)
		counted := !uncounted
		if cs := d.cache; cs != nil && cs.hit {
			// The run stopped where a cached subtree begins: count the
			// subtree (this run is one of its schedules) instead.
			t := d.countHit(res, s)
			s.Runs += t.runs
			s.Points += t.points
			s.Violations += t.viol
			s.Kbuild.Runs += t.runsK
			s.Kbuild.Violations += t.violK
			e.count(t.runs, t.viol)
			counted = false
		} else if counted && d.cache != nil {
			d.countRun(res)
		}
		if cs := d.cache; cs != nil {
			cs.storeTails(cs.hit || counted) // the run or its stored tail was counted
		}
		if counted {
			s.count(res)
			w, _ := res.weights()
			e.count(w, 0)
			if res.Failed() {
				e.count(0, w)
				res.Run = s.Runs
				if r.lazy {
					// The run as a schedule of the eager engine, whose
					// file replays it (lazy.go).
					if mat == nil {
						var err error
						if mat, err = newRunner(e.sc); err != nil {
							return nil, err
						}
					}
					lr := res
					res = r.lzMaterialize(lr, mat, ro)
					if s.First == lr {
						s.First = res
					}
					if s.Kbuild.First == lr {
						s.Kbuild.First = res
					}
				}
				e.mu.Lock()
				if opt.OnViolation != nil {
					opt.OnViolation(res)
				}
				if opt.StopAtFirst && res.Kbuild() {
					e.stop.Store(true)
				}
				e.mu.Unlock()
			}
			if opt.OnRun != nil {
				e.mu.Lock()
				opt.OnRun(res)
				e.mu.Unlock()
			}
		}
		if opt.OnRun == nil {
			r.recycle(res) // unless it is kept (recycle.go)
		}
		more := d.next()
		if !more {
			save(true)
			return s, nil
		}
		if opt.StopAtFirst && e.stop.Load() {
			s.Complete = false
			save(false) // the path names the next schedule to run
			return s, nil
		}
		if d.cache == nil && s.Runs%every == 0 || d.cache != nil && s.Runs-lastSave >= every {
			lastSave = s.Runs
			save(false) // the path now names the next schedule to run
		}
	}
}

// count adds to the live view, if any.
func (e *explorer) count(runs, violations int64) {
	if p := e.opt.Progress; p != nil {
		p.Runs.Add(runs)
		if violations != 0 {
			p.Violations.Add(violations)
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
	if opt.Progress != nil {
		opt.Progress.Runs.Store(0)
		opt.Progress.Violations.Store(0)
	}
	total := &Summary{Complete: true}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var stop atomic.Bool // read at every run, without mu
	var firstErr error
	// sample is worker w's share.
	sample := func(w int) {
		r, err := newRunner(sc)
		if err != nil {
			internalf("a scenario that validated has no runner: %v", err)
		}
		s := &Summary{}
		ro := opt.RunOptions
		ro.Coverage = &s.Coverage
		ro.stop, ro.knownBrief = opt.Stop, opt.OnRun == nil
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
			if r.halted {
				break // cut short by Stop: not counted
			}
			res.Run = i + 1
			s.count(res)
			if pr := opt.Progress; pr != nil {
				pr.Runs.Add(1)
				if res.Failed() {
					pr.Violations.Add(1)
				}
			}
			if res.Failed() {
				mu.Lock()
				if opt.OnViolation != nil {
					opt.OnViolation(res)
				}
				if opt.StopAtFirst && res.Kbuild() {
					stop.Store(true)
				}
				mu.Unlock()
			}
			r.recycle(res) // unless it is kept (recycle.go)
			if opt.StopAtFirst && stop.Load() {
				break
			}
		}
		mu.Lock()
		total.add(s)
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			_, err := protect(func() (*Summary, error) { sample(w); return nil, nil })
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				stop.Store(true)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	total.Complete = false
	return total, firstErr
}
