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

// Name says what runs.
func (k *Kernel) Name() string {
	return fmt.Sprintf("kernel tree %s, fgraph.c sha256 %s", k.Tree.Dir, k.Obj.Sha256)
}

// Attach makes the compiled code the core of m.
func (k *Kernel) Attach(m *fgraph.Machine) error { return k.In.Attach(m) }
