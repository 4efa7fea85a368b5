package harness

// Session runs schedules of one scenario one after another on one runner,
// the way Explore runs its own: a run resumes from the deepest snap of the
// quiescent points it shares with the run before (resume.go) and applies
// that run's checks over the rest of the shared prefix (reuse.go). It is
// for engines that visit the schedules in an order of their own (the
// mutants' near order) and so cannot use Explore's odometer; each result is
// the one Run would give.
type Session struct {
	r   *runner
	opt RunOptions
}

// NewSession prepares runs of sc with opt. Prefix sharing is on where
// Explore has it (the port or a StateTarget; no trace, no observer that is
// no SnapObserver); check reuse where the code under test is
// deterministic, as there.
func NewSession(sc *Scenario, opt RunOptions) (*Session, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	r, err := newRunner(sc)
	if err != nil {
		return nil, err
	}
	r.shareRuns(opt)
	return &Session{r: r, opt: opt}, nil
}

// Run runs one schedule, ch making its choices. shared is the index of the
// first choice point (Point.Index) at which ch may choose otherwise than
// the run before did; at every point below it ch must make that run's
// choice, and it is not asked at the points a resumed run skips (a chooser
// that matches its choices by Point.Index is right either way). The first
// run of a session shares nothing, whatever shared says: there is no run
// before it, no check record and no snap.
func (s *Session) Run(ch Chooser, shared int) *Result {
	s.r.startShared(shared)
	return s.r.run(ch, s.opt)
}
