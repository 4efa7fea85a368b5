package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fgcheck/fgcheck/harness"
)

// kernelFlags select the kernel target for the commands that read a
// schedule file (replay, minimize): --kernel DIR and the C mutant.
type kernelFlags struct {
	dir, mutant string
}

func (k *kernelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.dir, "kernel", os.Getenv("FGCHECK_KERNEL"), "kernel source tree `DIR`: replay on its compiled kernel/trace/fgraph.c instead of the port (default $FGCHECK_KERNEL; docs/kernel-target.md)")
	fs.StringVar(&k.mutant, "mutant", "", "with --kernel: the C `mutant` applied to a copy of the tree's fgraph.c (ctarget.Mutants)")
}

// attach makes sc run on the kernel target when --kernel is given.
func (k *kernelFlags) attach(sc *harness.Scenario) error {
	if k.dir == "" {
		if k.mutant != "" {
			return fmt.Errorf("--mutant needs --kernel (the port's mutants are the file's mutant line)")
		}
		return nil
	}
	if sc.Mutant != 0 {
		return fmt.Errorf("--kernel: the file switches on the port mutant %s; the kernel target takes C mutants (--mutant)", sc.Mutant)
	}
	t, err := openKernel(k.dir, k.mutant, sc)
	if err != nil {
		return err
	}
	sc.Target = t
	return nil
}
