package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{name: "explore", short: "explore every schedule within the bound (exhaustive DFS)", run: runExplore})
}

const exploreUsage = `fgcheck explore [--variant latest|v6.11|seed] [--scenario std|peer-spin|FILE]
       [--mutant NAME] [--fix LIST] [--bound K=2,D=2,R=1,E=1,C=2] [-K N] [-D N] [-R N] [-E N] [-C N]
       [--alias] [--stores-only] [--strict] [--workers N] [--shard i/n] [--max-runs N]
       [--time DURATION] [--checkpoint FILE] [--keep-going] [--out DIR] [--max-files N]
       [--json] [--coverage] [--progress auto|on|off] [--cache|--exact] [--cache-entries N] [--cache-exact]
       [--orders auto|lazy|eager] [--remotes auto|merged|each] [--run-kinds]

Explores every schedule of the scenario within its bound and prints a
summary. Every schedule is judged under two compiler models, and the
summary gives both verdicts: kbuild's (alias-aware, as GCC and Clang build
the kernel with -fno-strict-aliasing: "violates under kbuild") and the
no-alias model's (any compiler that could prove the stores distinct: "only
if the compiler can prove no alias"); it stops at the first violation under
kbuild. --alias explores kbuild's model alone; a compiled tree (--kernel)
has one model, the order GCC chose. Exit 0: no violation (known findings allowed); 1: a violation
(every failing schedule run is saved under --out before anything else,
up to --max-files; the state cache counts those of a pruned subtree
without running them, and --exact runs and saves each; a Go
panic of the code under test or a run over its step budget is the panic
oracle's); 2: misuse, found before any work, including a damaged or foreign
--checkpoint and a std exploration that completed without interrupting
every required site; 3: an internal error of fgcheck. SIGINT or SIGTERM
stops at once (a schedule cut short is run again on resume), saves the
--checkpoint and prints the partial totals (exit 130 or 143; a second
signal quits at once). With --checkpoint, running the same command again
resumes where the last one stopped and ends with the same totals as one
uninterrupted run. --orders lazy chooses region orders lazily: a run stands
for every order its events and the oracles cannot tell apart (the same
counts and verdicts, far fewer schedules run where orders dominate);
auto, the default, does so when the bound has no cap on choices (C=0, as
peer-spin), where every order would multiply the whole interrupt space,
and with R=1 where every region of the default path has at most 64
orders, the most a pending region holds: std on latest, not v6.12, v6.11
nor the seed, whose push has a region of 120 (docs/lazy-orders.md).
--remotes merged runs one placement of a remote action for the
placements that leave the same state and verdicts (a pure reader between
two stores of the interrupted context, or anywhere in its op where it is
the last choice and reports nothing; a register at a barrier and the
load of a global after it; an unregister or a tracer switch across the
loads of global words it does not write), counted as that many
schedules; auto, the default, does so with the state cache on the port,
with either order engine (docs/merged-remotes.md).`

func runExplore(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explore", stderr, exploreUsage)
	var sf scenarioFlags
	var hf huntFlags
	sf.register(fs)
	hf.register(fs)
	shard := fs.String("shard", "", "explore only shard `i/n` of the space (0 <= i < n; the n shards partition it)")
	maxRuns := fs.Int64("max-runs", 0, "stop after `N` schedules run in all (0: no limit; the state cache covers more than it runs)")
	ckpt := fs.String("checkpoint", "", "save the explorer's state to `FILE` (atomically) and resume from it when it exists")
	every := fs.Int64("checkpoint-every", 10000, "with --checkpoint, save every `N` schedules of a piece (and whenever the run stops)")
	cache := fs.Bool("cache", false, "prune the subtrees of visited states, the default where it applies (E <= 1, on the port and on a compiled tree; at E > 1 the plain DFS runs and the summary says why): the same schedule, violation and known-finding counts as --exact, far fewer schedules run")
	exact := fs.Bool("exact", false, "run every schedule (the plain DFS, no state cache): the pinned counts, coverage counts of every schedule, OnRun for each")
	cacheEntries := fs.Int("cache-entries", harness.DefaultCacheEntries, "at most `N` states of subtrees in the state cache, and as many of run tails in a second table, which the workers share (a state takes a 16-byte slot, with a table's free room about 21-43 bytes, and a 48-byte entry)")
	cacheExact := fs.Bool("cache-exact", false, "with --cache, store whole state encodings instead of their hashes (no collision risk, more memory)")
	orders := fs.String("orders", "auto", "how region orders are chosen: `lazy` (one run stands for every order its events and the oracles cannot tell apart, counted as that many schedules: the same counts and verdicts; a failing run is run again with one of its orders and saved as that schedule), eager (each order its own subtree), or auto: lazy on the port with the state cache where the bound has no cap on choices (C=0), or where R=1 and every region of the default path fits a pending region (64 orders), eager elsewhere")
	runKinds := fs.Bool("run-kinds", false, "after the summary, count the runs executed by the choice each changed from the run before (an interrupt, a remote action, a region's order, a pending region narrowed): how many, how many stopped at a state the cache held, and the shared accesses a run replayed before the changed choice and ran from it on")
	remotes := fs.String("remotes", "auto", "how remote actions are placed: `merged` (one run for the placements that leave the same state and verdicts, counted as that many schedules: the same counts and verdicts), each (every placement its own run), or auto: merged on the port with the state cache where the bound has a remote event, each elsewhere")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if err := hf.check(); err != nil {
		return misuse(stderr, "explore", "%v", err)
	}
	if *maxRuns < 0 {
		return misuse(stderr, "explore", "--max-runs %d: want 0 (no limit) or more", *maxRuns)
	}
	if *cache && *exact {
		return misuse(stderr, "explore", "--cache and --exact: choose one")
	}
	useCache := !*exact
	switch *orders {
	case "auto", "lazy", "eager":
	default:
		return misuse(stderr, "explore", "--orders %q: want auto, lazy or eager", *orders)
	}
	if *orders == "lazy" && *exact {
		return misuse(stderr, "explore", "--orders lazy and --exact: --exact runs every schedule, lazy orders one run for many")
	}
	switch *remotes {
	case "auto", "merged", "each":
	default:
		return misuse(stderr, "explore", "--remotes %q: want auto, merged or each", *remotes)
	}
	if *remotes == "merged" && *exact {
		return misuse(stderr, "explore", "--remotes merged and --exact: --exact runs every schedule, merged placements one run for several")
	}
	if *cacheEntries < 1 {
		return misuse(stderr, "explore", "--cache-entries %d: want 1 or more", *cacheEntries)
	}
	if *every < 1 {
		return misuse(stderr, "explore", "--checkpoint-every %d: want 1 or more", *every)
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
	if *orders == "lazy" && sc.Target != nil {
		return misuse(stderr, "explore", "--orders lazy: a compiled tree (--kernel) commits its stores in the order GCC chose; it has no region orders to choose")
	}
	lazy := *orders == "lazy" || *orders == "auto" && lazyAuto(sc, useCache)
	if *remotes == "merged" && sc.Target != nil {
		return misuse(stderr, "explore", "--remotes merged: a compiled tree (--kernel) runs each placement (a crash of its remote CPU cannot be deferred)")
	}
	merged := *remotes == "merged" || *remotes == "auto" && mergedAuto(sc, useCache)

	argv := append([]string{"explore"}, args...)
	var cf *checkpointFile
	if given(fs)["checkpoint"] {
		if err := checkOutFile("--checkpoint", *ckpt); err != nil {
			return misuse(stderr, "explore", "%v", err)
		}
		cleanStaleTemps(filepath.Dir(*ckpt), filepath.Base(*ckpt))
	}
	if *ckpt != "" {
		text := scenarioText(sc)
		want := &checkpointFile{Tool: version, Scenario: text, Strict: hf.strict,
			Command: commandLine(argv), Fingerprint: fingerprint(text, hf.strict, si, sn, lazy, merged)}
		old, err := loadCheckpoint(*ckpt, want)
		if err != nil {
			return misuse(stderr, "explore", "%v", err)
		}
		if old != nil {
			want.State, want.Seconds, want.Failing = old.State, old.Seconds, old.Failing
		}
		cf = want
	}

	workers := hf.nworkers()
	if sc.Target != nil && workers > 1 {
		fmt.Fprintln(stderr, "fgcheck explore: --kernel: the compiled target runs one worker per process (run shards in parallel: --shard i/n)")
		return 2
	}
	engine := "exhaustive DFS"
	if ok, _ := harness.Cacheable(sc); useCache && ok {
		engine += " with a visited-state cache"
	}
	if lazy {
		engine += " and lazy region orders"
	}
	if merged {
		engine += " and merged remote placements"
	}
	if sn > 0 {
		engine += fmt.Sprintf(", shard %d/%d", si, sn)
	}
	h := &hunt{cmd: "explore", found: storyCommand("explore", fs), engine: engine, kind: "exhaustive DFS", sc: sc,
		strict: hf.strict, out: hf.out, maxFiles: hf.maxFiles, stderr: stderr, start: time.Now()}
	o := &outcome{cmd: "explore", sc: sc, h: h, workers: workers, engine: engine, lazy: lazy, merged: merged,
		std: sf.scenario == "std", sharded: sn > 1, coverage: hf.coverage, runKinds: *runKinds, resumed: -1}
	if sn > 0 {
		o.shard = fmt.Sprintf("%d/%d", si, sn)
	}
	opt := harness.ExploreOptions{
		RunOptions:   harness.RunOptions{Strict: hf.strict, OnChoice: h.onChoice()},
		Workers:      workers,
		Shard:        si,
		Shards:       sn,
		MaxRuns:      *maxRuns,
		StopAtFirst:  !hf.keepGoing,
		OnViolation:  h.onViolation,
		Stop:         new(atomic.Bool),
		Progress:     new(harness.Progress),
		Cache:        useCache,
		CacheEntries: *cacheEntries,
		CacheExact:   *cacheExact,
		LazyOrders:   lazy,
		MergeRemotes: merged,
	}
	var saveErr error
	if cf != nil {
		if cf.State != nil {
			if err := cf.State.Validate(sc, opt); err != nil {
				return misuse(stderr, "explore", "--checkpoint %s: %v (the file is left as it is)", *ckpt, err)
			}
			opt.Resume = cf.State
			o.resumed, o.earlier = cf.State.Runs(), cf.Seconds
			h.failing, h.earlier = cf.Failing, cf.Failing
		}
		opt.CheckpointEvery = *every
		legStart := time.Now()
		earlier := cf.Seconds
		opt.Checkpoint = func(c *harness.Checkpoint) {
			// Failing schedules are counted on from those the state has
			// counted: a resumed run re-finds any found after it (and
			// writes them under the same names).
			cf.State, cf.Failing, cf.Seconds = c, c.Violations(), earlier+time.Since(legStart).Seconds()
			if err := saveCheckpoint(cf, *ckpt); err != nil && saveErr == nil {
				saveErr = err
				fmt.Fprintf(stderr, "fgcheck explore: cannot save the checkpoint: %v\n", err)
			}
		}
	}
	engineDone, release := h.watch(&hf, opt.Stop, opt.Progress, *maxRuns, max(o.resumed, 0))
	defer release()

	if useCache && !harness.TablesOffHeap && os.Getenv("GOGC") == "" {
		// The state tables are live for the whole run: main's GOGC=400
		// would let the heap grow to five times them. On Linux they live
		// apart from the heap, which holds about 2 MB (std C=3), and
		// GOGC=100 ran 190 collections there and was slower (11.40-12.96 s
		// against 10.34-12.87 s, five runs each, 5 Dec 2026).
		debug.SetGCPercent(100)
	}
	start := time.Now()
	sum, err := harness.Explore(sc, opt)
	o.seconds = time.Since(start).Seconds()
	engineDone()
	if err != nil {
		return engineFailed(stderr, "explore", err)
	}
	o.sum = sum
	o.stopped = o.stopReason(*maxRuns)
	code := o.report(stdout, stderr, hf.json)
	if saveErr != nil && code == exitClean {
		code = exitMisuse
	}
	if cf != nil && !sum.Complete && saveErr == nil {
		fmt.Fprintf(stderr, "fgcheck explore: state saved in %s after %d schedules: run the same command again to resume\n", *ckpt, sum.Runs)
	}
	return code
}

// lazyAuto is --orders auto: lazy region orders on the port with the state
// cache where the bound has no cap on choices, and on a capped bound with
// R=1 where the lazy engine can keep every region pending. Without a cap
// every order multiplies the whole interrupt space, and lazy orders
// explore it once for the orders no interrupt tells apart (peer-spin K=2:
// 6,998 schedules run instead of 43,426; std with no cap: 4.8 million
// instead of 19.6 million). With a cap an order spends a choice the
// interrupts would take, and the lazy engine pays where its pending
// regions are the regions met: on std on latest at C=2 it runs 21,007
// schedules where the eager engine runs 32,085, both with merged remote
// placements. On v6.11 and the seed, whose push.w4 region has 120 orders,
// more than a pending region holds (harness.LazyFits), it runs 1 % fewer
// and its bookkeeping costs more than that (docs/state-cache.md,
// twenty-seventh and twenty-eighth sessions).
func lazyAuto(sc *harness.Scenario, cache bool) bool {
	ok, _ := harness.Cacheable(sc)
	if !cache || !ok || sc.Target != nil || sc.Bound.R == 0 {
		return false
	}
	return sc.Bound.C == 0 || sc.Bound.R == 1 && harness.LazyFits(sc)
}

// mergedAuto is --remotes auto: merged remote placements on the port with
// the state cache, where a remote action can be placed (E > 0). Std at
// C=3: 9.6 % fewer schedules run with eager orders, 7 % less time
// (docs/merged-remotes.md); with lazy orders 588,755 schedules run
// instead of 826,267.
func mergedAuto(sc *harness.Scenario, cache bool) bool {
	ok, _ := harness.Cacheable(sc)
	return cache && ok && sc.Target == nil && sc.Bound.E > 0 && len(sc.Remotes) > 0
}
