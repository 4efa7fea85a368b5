package ci

import (
	"os"
	"testing"
)

// TestMain runs the workflow checks on the port: an FGCHECK_KERNEL that
// make test exports for the kernel-target tests would otherwise be the
// default tree of every fgcheck these tests start.
func TestMain(m *testing.M) {
	os.Unsetenv("FGCHECK_KERNEL")
	os.Exit(m.Run())
}
