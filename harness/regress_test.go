package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressions replays testdata/regress/: counterexamples the wide
// rapid and fuzz generators found on the baseline variants, each resolved
// either as a harness fix (the model follows the kernel where the kernel is
// allowed to do either) or as a named known finding (direct-switch-race,
// reserve-window). Each must now pass, with the known finding its comment
// names, if any, reported.
func TestRegressions(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "regress", "*.txt"))
	if len(paths) == 0 {
		t.Fatal("no regression files")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseFile(p, b)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Replay(f, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed() {
				t.Errorf("%s fails again: %v", p, res.Violations)
			}
			// The schedule must still fire: a file whose events no longer
			// happen tests nothing.
			if len(res.Schedule.Events)+len(res.Schedule.Orders) != f.Schedule.Len() {
				t.Errorf("%s: only %d of %d choices fired", p, len(res.Schedule.Events)+len(res.Schedule.Orders), f.Schedule.Len())
			}
		})
	}
}
