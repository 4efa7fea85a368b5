package harness

import "github.com/fgcheck/fgcheck/fgraph"

// Target is code under test other than the port: a kernel tree's compiled
// fgraph.c (package ctarget/cload). The harness drives a Machine whose
// core is the target exactly as it drives the port; what differs is the
// compiler model (Model): the compiled code's accesses come in the order
// the compiler chose, so there is no store buffer and no region order to
// choose, and every store commits where the code makes it.
type Target interface {
	// Name says what runs, for reports ("kernel tree DIR, fgraph.c sha256 ...").
	Name() string
	// Attach makes the target the core of m.
	Attach(m *fgraph.Machine) error
}

// StateTarget is a Target the visited-state cache can explore: the core it
// attaches appends its own state (fgraph.StateCore: its statics, its entry
// points in flight) and hands the hooks a digest of every input of its code
// that they do not see (fgraph.Digester), so that a context's locals, on
// its C stack, are a function of its input digest as on the port
// (state.go).
type StateTarget interface {
	Target
	EncodesState() bool
}

// Models of what the compiler may do, for reports.
const (
	// ModelPort is the port under the store-buffer model with both
	// compiler models judged on every schedule (ModelKbuild, ModelNoAlias).
	ModelPort = "port: two compiler models judged on every schedule: kbuild (alias-aware, -fno-strict-aliasing) and no-alias"
	// ModelPortAlias is the port explored under kbuild's model alone
	// (Scenario.Alias, explore --alias).
	ModelPortAlias = "port: kbuild's model only (--alias: alias-aware, -fno-strict-aliasing)"
	// ModelCompiled is the compiled C: the order this compiler chose.
	ModelCompiled = "compiled: the order GCC chose for this tree"
)

// The compiler models a verdict is given under (Scenario.Models).
const (
	// ModelKbuild is kbuild's model: what GCC and Clang can do to the
	// kernel as it is built (-fno-strict-aliasing): a store through the
	// ret_stack pointer keeps its order against other such stores and
	// against stores to task fields.
	ModelKbuild = "kbuild"
	// ModelNoAlias is the no-alias model: what any compiler that could
	// prove the stores distinct may do (plain stores to different
	// addresses may swap). Its runs include kbuild's.
	ModelNoAlias = "no-alias"
	// ModelC is the compiled code's one model: the order its compiler chose.
	ModelC = "compiled"
)

// Verdict labels, per finding and per mutant.
const (
	// VerdictKbuild: some run of kbuild's model shows it.
	VerdictKbuild = "violates under kbuild"
	// VerdictNoAlias: only runs that need the no-alias model show it.
	VerdictNoAlias = "only if the compiler can prove no alias"
	// VerdictCompiled: the compiled code shows it.
	VerdictCompiled = "on the compiled code"
)

// Model says which compiler models an exploration of sc judges, for the
// summary line.
func (s *Scenario) Model() string {
	if s.Target != nil {
		return ModelCompiled
	}
	if s.Alias {
		return ModelPortAlias
	}
	return ModelPort
}

// Models lists the compiler models an exploration of sc gives a verdict
// under, in report order: kbuild then no-alias for the port, kbuild alone
// with Scenario.Alias, compiled alone for a compiled target.
func (s *Scenario) Models() []string {
	switch {
	case s.Target != nil:
		return []string{ModelC}
	case s.Alias:
		return []string{ModelKbuild}
	}
	return []string{ModelKbuild, ModelNoAlias}
}

// Model returns the exploration's counts under compiler model m (one of
// sc.Models() for the scenario explored): ModelKbuild's are Kbuild (the
// whole with Scenario.Alias), the others' the whole.
func (s *Summary) Model(m string) ModelSummary {
	if m == ModelKbuild {
		return s.Kbuild
	}
	return ModelSummary{Runs: s.Runs, Violations: s.Violations, First: s.First, Known: s.Known}
}

// Verdict labels a finding (or a violation) seen in n schedules of all and
// in k of kbuild's model: VerdictKbuild when k > 0, VerdictNoAlias when only
// the no-alias model's runs show it, "" when no run does. On a compiled
// target (compiled set) it is VerdictCompiled when n > 0.
func Verdict(compiled bool, n, k int64) string {
	switch {
	case n == 0:
		return ""
	case compiled:
		return VerdictCompiled
	case k > 0:
		return VerdictKbuild
	}
	return VerdictNoAlias
}

// Observer sees a run as it happens: every committed store (in commit
// order; ctx "remote" with level -1 for a remote CPU's and setup's), every
// fence, and every quiescent point (between task-level operations, with
// every region committed). It must not change the run: to call the code
// under test at a quiescent point, detach the hooks first.
type Observer interface {
	Store(ctx string, level int, s fgraph.Site, a fgraph.Addr, v fgraph.Word)
	Fence(ctx string, level int, s fgraph.Site, f fgraph.Fence)
	Quiescent(m *fgraph.Machine)
}

// SnapObserver is an Observer that prefix sharing (resume.go) can keep
// beside a run: Save returns a copy of what it has recorded so far, at a
// quiescent point after its Quiescent call; Restore puts such a copy back
// when a run resumes from that point (the run's prefix is not run again,
// so the observer would not see it). An Observer that is no SnapObserver
// turns prefix sharing off.
type SnapObserver interface {
	Observer
	Save() any
	Restore(saved any)
}

// Liner is a compiled target that names the source line of the access it
// is at (the line coverage of its stores).
type Liner interface {
	Line() int
}
