//go:build cgo

package cload

import (
	"fmt"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
)

// Kernel is a tree's fgraph.c built and loaded: a harness.Target.
type Kernel struct {
	Tree *ctarget.Tree
	Obj  *ctarget.Object
	In   *Instance
	// Mutant names the C mutant applied to a copy of the file, if any.
	Mutant string
}

// Open builds (or takes from the cache) and loads the tree at dir for
// stacks of stackWords words.
func Open(dir string, opt ctarget.Options) (*Kernel, error) {
	t, err := ctarget.OpenTree(dir)
	if err != nil {
		return nil, err
	}
	obj, err := ctarget.Build(t, opt)
	if err != nil {
		return nil, err
	}
	in, err := Load(obj)
	if err != nil {
		return nil, err
	}
	return &Kernel{Tree: t, Obj: obj, In: in}, nil
}

// OpenMutant is Open with mu applied to a copy of the tree's fgraph.c.
func OpenMutant(dir string, mu ctarget.Mutant, opt ctarget.Options) (*Kernel, error) {
	t, err := ctarget.OpenTree(dir)
	if err != nil {
		return nil, err
	}
	obj, err := ctarget.BuildMutant(t, mu, opt)
	if err != nil {
		return nil, err
	}
	in, err := Load(obj)
	if err != nil {
		return nil, err
	}
	return &Kernel{Tree: t, Obj: obj, In: in, Mutant: mu.Name}, nil
}

// Name says what runs.
func (k *Kernel) Name() string {
	if k.Mutant != "" {
		return fmt.Sprintf("kernel tree %s with C mutant %s (a patched copy, fgraph.c sha256 %s)", k.Tree.Dir, k.Mutant, k.Obj.Sha256)
	}
	return fmt.Sprintf("kernel tree %s, fgraph.c sha256 %s", k.Tree.Dir, k.Obj.Sha256)
}

// Attach makes the compiled code the core of m.
func (k *Kernel) Attach(m *fgraph.Machine) error { return k.In.Attach(m) }

// EncodesState: the compiled code's statics and inputs are encoded for
// the state cache (state.go; harness.StateTarget).
func (k *Kernel) EncodesState() bool { return true }

// SetCrashRecord is Instance.SetCrashRecord.
func (k *Kernel) SetCrashRecord(path string, text []byte) { k.In.SetCrashRecord(path, text) }

// LastLine is the fgraph.c line of the last store the compiled code
// reported (for the differential's messages).
func (k *Kernel) LastLine() int { return k.In.line(k.In.lastPC) }

// Line is the fgraph.c line of the store of the compiled code being
// committed (an interrupt delivered now comes right after it), 0 when the
// store being committed is not the C's (the arch glue's, a user's):
// harness.Liner.
func (k *Kernel) Line() int {
	if k.In.inStore == 0 {
		return 0
	}
	return k.In.line(k.In.lastPC)
}

// StoreLines are the lines of push, set_bitmap, reserve and pop whose
// stores ran so far.
func (k *Kernel) StoreLines() map[int]string { return k.In.StoreLines() }
