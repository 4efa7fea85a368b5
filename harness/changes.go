package harness

// Runs by the choice they change (Summary.ByChange).
//
// The DFS runs each schedule from a prefix the run before it shared: the
// choices before one choice point are replayed, the choice there is the
// next option, and the rest is new. Where an exploration's time goes is
// then a matter of which choice the runs change, how much of each run
// replays the shared prefix and how much is new: the replay's length is
// what a snap closer to the changed choice would save, the rest is the
// new work that the state cache cuts where a state repeats. The counts
// are kept at every exploration (from the step counter every run keeps,
// and a comparison per choice point); `fgcheck explore --run-kinds`
// prints them.

// The kinds of change, indices into Summary.ByChange.
const (
	ChangeNone      = iota // a piece's first run: nothing before it to share
	ChangeInterrupt        // an IRQ or NMI taken where the run before went on
	ChangeRemote           // a remote action taken where the run before went on
	ChangeOrder            // another order for a region (the eager engine, or the lazy one's order point)
	ChangeNarrow           // another class of a pending region's orders, with or without an event (lazy.go)
	NumChanges
)

// ChangeNames names the kinds of change, by index.
var ChangeNames = [NumChanges]string{"first", "interrupt", "remote", "order", "narrowed"}

// ChangeCount counts the runs of one kind of change: how many, how many
// stopped at a state the cache held, and the shared accesses (the hooks
// the code under test called: loads, stores, atomics, fences) they
// executed before the changed choice point (the replay, from the snap the
// run resumed from on) and from it on (up to the cache's hit, if it hit:
// the code under test runs on to the end of its op, doing nothing).
type ChangeCount struct {
	Runs, Hits    int64
	Replayed, New int64
}

func (c *ChangeCount) add(o *ChangeCount) {
	c.Runs += o.Runs
	c.Hits += o.Hits
	c.Replayed += o.Replayed
	c.New += o.New
}

// executed is the number of shared accesses the run executed so far:
// steps less those that restored snaps stand for.
func (r *runner) executed() int64 { return r.steps - r.skipped }

// noteChange is called at choice point p, whose answer was i of opts: at
// the choice point the DFS changed for this run (r.chgAt), it records the
// kind of change and the accesses so far.
func (r *runner) noteChange(p *Point, opts []Option, i int) {
	if p.Index != r.chgAt || r.chg >= 0 {
		return
	}
	r.chg, r.chgExec = ChangeOrder, r.executed()
	if p.Kind == PointYield && i >= 0 && i < len(opts) {
		switch opts[i].Kind {
		case OptIRQ, OptNMI:
			r.chg = ChangeInterrupt
		case OptRemote:
			r.chg, r.chgRem = ChangeRemote, opts[i].Remote
		default:
			r.chg = ChangeNarrow // the lazy engine's narrowing at the last commit (choose corrects the others)
		}
	}
}

// countChange adds the run just ended to s's counts by change (hit: it
// stopped at a cached state). A run that did not reach the changed point
// (none does: the prefix is the run before's) would count as a first.
func (r *runner) countChange(s *Summary, hit bool) {
	k, replayed := r.chg, r.chgExec
	if k < 0 {
		k, replayed = ChangeNone, 0
	}
	end := r.executed()
	if r.hitExec >= 0 {
		end = r.hitExec // what the code under test ran on after the hit is no part of the run
	}
	c := ChangeCount{Runs: 1, Replayed: replayed, New: end - replayed}
	if hit {
		c.Hits = 1
	}
	s.ByChange[k].add(&c)
	if k == ChangeRemote {
		s.byRemote(r.chgRem, len(r.sc.Remotes)).add(&c)
	}
}

// byRemote is remote action i's count in s.ByRemote, of n actions.
func (s *Summary) byRemote(i, n int) *ChangeCount {
	if len(s.ByRemote) < n {
		s.ByRemote = append(s.ByRemote, make([]ChangeCount, n-len(s.ByRemote))...)
	}
	return &s.ByRemote[i]
}
