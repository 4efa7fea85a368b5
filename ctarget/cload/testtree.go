package cload

import (
	"os"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget"
)

// TestTree is the kernel tree of $FGCHECK_KERNEL built for stacks of words
// words, for tests: without a tree (or without cgo) the test is skipped,
// saying why, and fails instead when CI is set (CI installs the tree).
func TestTree(tb testing.TB, words int) *Kernel {
	tb.Helper()
	dir := os.Getenv("FGCHECK_KERNEL")
	if dir == "" || !Available {
		if os.Getenv("CI") != "" {
			tb.Fatal("CI: this test needs a kernel tree in FGCHECK_KERNEL (make kernel) and a build with cgo")
		}
		tb.Skip("no kernel tree: set FGCHECK_KERNEL (make kernel extracts Debian's linux-source-6.12) to run the kernel-target tests")
	}
	k, err := Open(dir, ctarget.Options{StackWords: words})
	if err != nil {
		tb.Fatal(err)
	}
	return k
}
