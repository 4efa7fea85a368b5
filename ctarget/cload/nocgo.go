//go:build !cgo

package cload

import (
	"errors"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
)

// Available reports whether this build can run a compiled kernel target.
const Available = false

// ErrNoCgo says why the kernel target is missing from this build.
var ErrNoCgo = errors.New("this fgcheck was built without cgo (CGO_ENABLED=0 or no C compiler): the kernel target needs both")

// Kernel is unavailable without cgo.
type Kernel struct {
	Tree   *ctarget.Tree
	Obj    *ctarget.Object
	Mutant string
}

// Open fails without cgo.
func Open(dir string, opt ctarget.Options) (*Kernel, error) { return nil, ErrNoCgo }

// OpenMutant fails without cgo.
func OpenMutant(dir string, mu ctarget.Mutant, opt ctarget.Options) (*Kernel, error) {
	return nil, ErrNoCgo
}

// Name says what runs.
func (k *Kernel) Name() string { return "" }

// Attach fails without cgo.
func (k *Kernel) Attach(m *fgraph.Machine) error { return ErrNoCgo }
