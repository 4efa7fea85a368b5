package main

import (
	"fmt"
	"io"
	"time"

	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{name: "explore", short: "explore every schedule within the bound (exhaustive DFS)", run: runExplore})
}

const exploreUsage = `fgcheck explore [--variant latest|v6.11|seed] [--scenario std|peer-spin|FILE]
       [--mutant NAME] [--fix LIST] [--bound K=2,D=2,R=1,E=1,C=2] [--alias] [--stores-only]
       [--strict] [--workers N] [--shard i/n] [--max-runs N] [--keep-going]
       [--out DIR] [--max-files N] [--json] [--coverage]

Explores every schedule of the scenario within its bound and prints a
summary. Exit 0: no violation (known findings allowed); 1: a violation
(every failing schedule is saved under --out); 2: misuse, including a std
exploration that completed without interrupting every required site.`

func runExplore(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explore", stderr, exploreUsage)
	var sf scenarioFlags
	var hf huntFlags
	sf.register(fs)
	hf.register(fs)
	shard := fs.String("shard", "", "explore only shard `i/n` of the space (0 <= i < n; the n shards partition it)")
	maxRuns := fs.Int64("max-runs", 0, "stop after `N` schedules (0: no limit)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return misuse(stderr, "explore", "unexpected argument %q", pos[0])
	}
	if err := hf.check(); err != nil {
		return misuse(stderr, "explore", "%v", err)
	}
	if *maxRuns < 0 {
		return misuse(stderr, "explore", "--max-runs %d: want 0 (no limit) or more", *maxRuns)
	}
	var si, sn int
	if *shard != "" {
		var err error
		if si, sn, err = parseShard(*shard); err != nil {
			return misuse(stderr, "explore", "%v", err)
		}
	}
	sc, err := sf.build(fs)
	if err != nil {
		return misuse(stderr, "explore", "%v", err)
	}

	workers := hf.nworkers()
	engine := "exhaustive DFS"
	if sn > 0 {
		engine += fmt.Sprintf(", shard %d/%d", si, sn)
	}
	h := &hunt{cmd: "explore", argv: append([]string{"explore"}, args...), engine: engine, sc: sc,
		strict: hf.strict, out: hf.out, maxFiles: hf.maxFiles, stderr: stderr, start: time.Now()}
	o := &outcome{cmd: "explore", sc: sc, h: h, workers: workers, engine: engine,
		std: sf.scenario == "std", sharded: sn > 1, coverage: hf.coverage}
	stop := h.watchInterrupt(func(failing int64, files []string) {
		fmt.Fprintf(stderr, "\nfgcheck explore: interrupted after %.2f s (schedule count unknown: harness.Explore reports only at the end)\n", time.Since(h.start).Seconds())
		fmt.Fprintf(stderr, "failing schedules so far: %d\n", failing)
		for _, p := range files {
			fmt.Fprintf(stderr, "  %s\n", p)
		}
	})
	defer stop()

	start := time.Now()
	sum, err := harness.Explore(sc, harness.ExploreOptions{
		RunOptions:  harness.RunOptions{Strict: hf.strict},
		Workers:     workers,
		Shard:       si,
		Shards:      sn,
		MaxRuns:     *maxRuns,
		StopAtFirst: !hf.keepGoing,
		OnViolation: h.onViolation,
	})
	o.seconds = time.Since(start).Seconds()
	if err != nil {
		return misuse(stderr, "explore", "%v", err)
	}
	o.sum = sum
	return o.report(stdout, stderr, hf.json)
}
