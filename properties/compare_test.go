package properties

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// TestEngineComparison measures every engine against every non-control
// mutant of the catalogue on std (fgraph.Latest): harness runs, checks and
// seconds to the first kill, each engine with a fixed seed and budget. It
// prints a markdown table (docs/engines.md holds a copy) and asserts
// nothing about time. It takes minutes, so it runs only with
// FGCHECK_COMPARE=1:
//
//	FGCHECK_COMPARE=1 go test ./properties -run TestEngineComparison -v -timeout 60m
//
// FGCHECK_COMPARE_ENGINES=random,rapid (a comma-separated subset) and
// FGCHECK_COMPARE_MUTANTS=M-push-1,F3 restrict it.
func TestEngineComparison(t *testing.T) {
	if os.Getenv("FGCHECK_COMPARE") == "" {
		t.Skip("set FGCHECK_COMPARE=1 to run the engine comparison (minutes)")
	}
	keep := func(env, name string) bool {
		v := os.Getenv(env)
		if v == "" {
			return true
		}
		for _, x := range strings.Split(v, ",") {
			if x == name {
				return true
			}
		}
		return false
	}
	var es []engine
	for _, e := range engines() {
		if keep("FGCHECK_COMPARE_ENGINES", e.Name) {
			es = append(es, e)
		}
	}
	var b strings.Builder
	b.WriteString("| mutant |")
	for _, e := range es {
		fmt.Fprintf(&b, " %s |", e.Name)
	}
	b.WriteString("\n|---|")
	for range es {
		b.WriteString("---:|")
	}
	b.WriteString("\n| budget |")
	for _, e := range es {
		fmt.Fprintf(&b, " %s |", e.Budget)
	}
	b.WriteString("\n")
	killed := make([]int, len(es))
	n := 0
	for _, mi := range nonControl() {
		if !keep("FGCHECK_COMPARE_MUTANTS", mi.Name) {
			continue
		}
		n++
		sc := withMutant(harness.Standard(fgraph.Latest), mi.Mutant)
		fmt.Fprintf(&b, "| %s |", mi.Name)
		for i, e := range es {
			k := e.Run(sc)
			fmt.Fprintf(&b, " %s |", k.cell(e.Name))
			if k.Killed {
				killed[i]++
			}
			t.Logf("%-18s %-10s %s %s", mi.Name, e.Name, k.cell(e.Name), k.Msg)
		}
		b.WriteString("\n")
	}
	b.WriteString("| **killed** |")
	for i := range es {
		fmt.Fprintf(&b, " **%d/%d** |", killed[i], n)
	}
	b.WriteString("\n")
	t.Logf("engine comparison on std (latest), runs to first kill (checks for rapid/gopter) and seconds:\n%s", b.String())
}

// cell renders a kill for the table: runs (and checks where they differ)
// and seconds, or "—" with the budget spent.
func (k kill) cell(engine string) string {
	if !k.Killed {
		return fmt.Sprintf("— (%d runs, %.1fs)", k.Runs, k.Time.Seconds())
	}
	s := fmt.Sprintf("%d", k.Runs)
	if k.Checks != k.Runs {
		s = fmt.Sprintf("%d runs / %d checks", k.Runs, k.Checks)
	}
	return fmt.Sprintf("%s, %.3fs", s, k.Time.Seconds())
}
