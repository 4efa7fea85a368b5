package properties

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fgcheck/fgcheck/harness"
)

// TestTriage replays the counterexamples in testdata/triage/: violations
// of the baseline variants that the wide generators (-fgcheck.wide, and
// fuzz's wide shapes) find and that the harness has not triaged yet (a
// known finding, an allowance, or a harness fix). Each file says what it
// shows and whose it is. Every file must parse; by default the test only
// logs whether each still fails as its expect line says, and with
// FGCHECK_TRIAGE=1 it fails when one no longer does (it was fixed or
// excused: move it to corpus/ or delete it).
func TestTriage(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "triage", "*.txt"))
	strict := os.Getenv("FGCHECK_TRIAGE") != ""
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := harness.ParseFile(p, b)
			if err != nil {
				t.Fatal(err)
			}
			res, err := harness.Replay(f, harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.Failed() && f.Expect != nil && res.Violations[0].Oracle == f.Expect.Oracle:
				t.Logf("still fails: %s", res.Violations[0])
			case res.Failed():
				t.Logf("fails differently: %s", res.Violations[0])
			case len(res.Known) > 0:
				t.Logf("now excused as known finding %s", res.Known[0].Known)
			default:
				t.Logf("passes now")
			}
			if strict && !(res.Failed() && f.Expect != nil && res.Violations[0].Oracle == f.Expect.Oracle) {
				t.Errorf("no longer reproduces its expected violation: fixed or excused? move %s to corpus/ or delete it", p)
			}
		})
	}
}
