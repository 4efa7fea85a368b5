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

// Models of what the compiler may do, for reports.
const (
	// ModelPort is the port under the store-buffer model: any order the
	// compiler may legally choose within a region (docs/compiler-model.md).
	ModelPort = "port: any legal compiler order within a region"
	// ModelCompiled is the compiled C: the order this compiler chose.
	ModelCompiled = "compiled: the order GCC chose for this tree"
)

// Model says which compiler model a run of sc judges.
func (s *Scenario) Model() string {
	if s.Target != nil {
		return ModelCompiled
	}
	if s.Alias {
		return ModelPort + " (alias-aware)"
	}
	return ModelPort
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

// Liner is a compiled target that names the source line of the access it
// is at (the line coverage of its stores).
type Liner interface {
	Line() int
}
