// Command shardsum merges the JSON summaries of a sharded exhaustive
// exploration and checks them against the pinned std totals. It is the last
// job of the CI workflow's explore matrix (.github/workflows/ci.yml; see
// docs/scale-out.md).
//
//	go run ./internal/ci/shardsum [-n N] [-summary FILE] DIR|FILE...
//
// Each file is the stdout of one `fgcheck explore --variant V --shard i/n
// --json`, named explore-<V>-<i>-of-<n>.json (fgcheck's JSON does not say
// which shard it is; the name does). A directory stands for every
// explore-*.json file in it. For every variant of the pins (latest, v6.11,
// seed: the std counts of harness/std_test.go) it checks that shards
// 0..n-1 are each present exactly once with one n (N, if -n is given), one
// bound and no mutant; that every shard finished (its "complete" is not
// false) and none found a violation; and that the shards'
// schedule counts add up to the pinned total and their known findings to the
// pinned list. It prints a table and every problem found; -summary appends
// the same as Markdown to FILE (for $GITHUB_STEP_SUMMARY).
//
// Exit codes: 0 every check passed; 1 a check failed; 2 misuse (bad
// arguments, a file that is misnamed, unreadable or not a summary).
//
// The checks are ci.Check (internal/ci), which tests them case by case.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fgcheck/fgcheck/internal/ci"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shardsum", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 0, "require every variant to be sharded `N` ways (0: any, but the same for all shards of a variant)")
	summary := fs.String("summary", "", "append the report as Markdown to `FILE` (e.g. $GITHUB_STEP_SUMMARY)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: shardsum [-n N] [-summary FILE] DIR|FILE...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 || *n < 0 {
		fs.Usage()
		return 2
	}
	shards, err := ci.LoadAll(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "shardsum: %v\n", err)
		return 2
	}
	r := ci.Check(shards, ci.Pins, *n)
	fmt.Fprint(stdout, r.Text())
	if *summary != "" {
		f, err := os.OpenFile(*summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = io.WriteString(f, r.Markdown())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "shardsum: %v\n", err)
			return 2
		}
	}
	if len(r.Problems) > 0 {
		return 1
	}
	return 0
}
