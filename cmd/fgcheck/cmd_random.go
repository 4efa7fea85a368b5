package main

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{name: "random", short: "sample random or PCT schedules (seeded)", run: runRandom})
}

const randomUsage = `fgcheck random [--mode random|pct] [--seed S] [--runs N]
       [--variant latest|v6.11|seed] [--scenario std|peer-spin|FILE] [--mutant NAME]
       [--fix LIST] [--bound K=2,D=2,R=1,E=1,C=2] [--alias] [--stores-only] [--strict]
       [-K N] [-D N] [-R N] [-E N] [-C N] [--workers N] [--time DURATION] [--keep-going]
       [--out DIR] [--max-files N] [--json] [--coverage] [--progress auto|on|off]

Runs N seeded random (or PCT) schedules of the scenario within its bound.
Worker w uses seed S+w, so a run is reproducible for a given --workers.
Exit 0: no violation (known findings allowed); 1: a violation (every
failing schedule is saved under --out); 2: misuse; 3: an internal error of
fgcheck. SIGINT or SIGTERM stops at once and prints the partial totals
(exit 130 or 143; a second signal quits at once).`

func runRandom(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("random", stderr, randomUsage)
	var sf scenarioFlags
	var hf huntFlags
	sf.register(fs)
	hf.register(fs)
	mode := fs.String("mode", "random", "`mode`: random (inject at each point with probability (K+E)/points) or pct (K+E change points per run)")
	seedText := fs.String("seed", "1", "random `seed` (decimal or 0x hex)")
	runs := fs.Int64("runs", 10000, "number of `N` schedules to run")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := hf.check(); err != nil {
		return misuse(stderr, "random", "%v", err)
	}
	if *mode != "random" && *mode != "pct" {
		return misuse(stderr, "random", "--mode %q: want random or pct", *mode)
	}
	seed, err := strconv.ParseUint(*seedText, 0, 64)
	if err != nil {
		return misuse(stderr, "random", "--seed %q: want an unsigned number (decimal or 0x hex)", *seedText)
	}
	if *runs < 1 {
		return misuse(stderr, "random", "--runs %d: want 1 or more", *runs)
	}
	sc, err := sf.build(fs)
	if err != nil {
		return misuse(stderr, "random", "%v", err)
	}

	workers := hf.nworkers()
	engine := fmt.Sprintf("%s, seed %#x", *mode, seed)
	if *mode == "pct" {
		engine = fmt.Sprintf("PCT, seed %#x", seed)
	}
	if workers > 1 {
		engine += fmt.Sprintf(" (worker w: seed+w, %d workers)", workers)
	}
	kind := "random"
	if *mode == "pct" {
		kind = "PCT"
	}
	h := &hunt{cmd: "random", found: storyCommand("random", fs), engine: engine, kind: kind, sc: sc,
		strict: hf.strict, out: hf.out, maxFiles: hf.maxFiles, stderr: stderr, start: time.Now()}
	o := &outcome{cmd: "random", sc: sc, h: h, workers: workers, engine: engine, coverage: hf.coverage, resumed: -1}
	halt := new(atomic.Bool)
	pr := new(harness.Progress)
	engineDone, release := h.watch(&hf, halt, pr, *runs, 0)
	defer release()

	start := time.Now()
	sum, err := harness.Sample(sc, seed, *runs, *mode, harness.ExploreOptions{
		RunOptions:  harness.RunOptions{Strict: hf.strict, OnChoice: h.onChoice()},
		Workers:     workers,
		StopAtFirst: !hf.keepGoing,
		OnViolation: h.onViolation,
		Stop:        halt,
		Progress:    pr,
	})
	o.seconds = time.Since(start).Seconds()
	engineDone()
	if err != nil {
		return engineFailed(stderr, "random", err)
	}
	o.sum = sum
	if sum.Runs < *runs {
		o.stopped = o.stopReason(0)
	}
	return o.report(stdout, stderr, hf.json)
}
