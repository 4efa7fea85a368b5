package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget/cload"
)

// needKernel skips without a tree (and fails under CI).
func needKernel(t *testing.T) string {
	t.Helper()
	if kernelTree == "" || !cload.Available {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: the kernel-target test needs FGCHECK_KERNEL (make kernel) and cgo")
		}
		t.Skip("no kernel tree: set FGCHECK_KERNEL (make kernel) to run the kernel-target tests")
	}
	return kernelTree
}

// TestExploreKernel runs explore --kernel on a slice of std: the summary
// names the tree, its sha256 and the compiler model of the verdict.
func TestExploreKernel(t *testing.T) {
	dir := needKernel(t)
	var out, errb bytes.Buffer
	rc := run([]string{"explore", "--kernel", dir, "--max-runs", "300"}, &out, &errb)
	if rc != 0 {
		t.Fatalf("exit %d\n%s%s", rc, out.String(), errb.String())
	}
	for _, want := range []string{"variant v6.12", "target:      kernel tree " + dir, "fgraph.c sha256 ",
		"model:       compiled: the order GCC chose", "schedules:   300 (incomplete", "violations:  0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	// Misuse: the compiled target is one worker per process.
	out.Reset()
	errb.Reset()
	if rc := run([]string{"explore", "--kernel", dir, "--workers", "2"}, &out, &errb); rc != 2 {
		t.Errorf("--workers 2 with --kernel: exit %d, want 2 (%s)", rc, errb.String())
	}
	if rc := run([]string{"explore", "--kernel", t.TempDir()}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "kernel/trace/fgraph.c") {
		t.Errorf("--kernel of an empty dir: exit %d, %q", rc, errb.String())
	}
}
