package harness

import "sync/atomic"

// testHooks are the switches and counters through which a test reaches
// into one exploration: a part of the explorer turned off, to compare the
// explorer with it and without it (noTails, noOpSnaps, ...); a wrong rule
// the comparison must catch (evDrop, splitWrong, ...); a count of what a
// part did (irqStarts, opRestores, ...). They come with the options
// (RunOptions.hooks), so that the tests that set them run in parallel
// (parallel_test.go); a run without them reads noHooks, whose fields are
// all off and never set. The fields are grouped by the file that reads
// them. (knownTot's and the detection log's wrong rules, which no runner
// reaches, stay package variables: cache.go.)
type testHooks struct {
	// ran counts the runs and runners that took these hooks: a test sees
	// that its hooks reached the explorer.
	ran atomic.Int64

	// cache.go
	// Test hooks: noAlone looks every state up (alone never holds);
	// aloneProbe, if set, makes the lookups alone would leave out and counts
	// them and their hits; aloneWrong is a wrong rule: "remote", a remote
	// action's placement taken for one no other path shares, or "returned",
	// an interrupt's that returned before the last one.
	noAlone    bool
	aloneProbe *aloneCounts
	aloneWrong string

	// noTails, in tests, turns the tail lookups off.
	noTails bool

	// Test hooks: noBetweenOps turns the lookups between an interrupt's ops
	// off; betweenOpsNested makes them in nested interrupts too;
	// betweenOpsNoClock leaves the clock where it was (a wrong rule: a
	// detection in the op after the point then has the clock of the point,
	// and the point's subtree takes it for its prefix's); betweenOpsHits, if
	// set, counts their hits.
	noBetweenOps      bool
	betweenOpsNested  bool
	betweenOpsNoClock bool
	betweenOpsHits    *atomic.Int64

	// Test hooks: noAfterEvent turns the lookups after interrupts off;
	// afterEvNested turns on those back inside an interrupt;
	// afterEvUnmarked leaves the mark out of their states (a wrong state
	// definition: a state after an event then equals a choice point's at the
	// same yield); afterEvHits, if set, counts their hits.
	noAfterEvent    bool
	afterEvNested   bool
	afterEvUnmarked bool
	afterEvHits     *atomic.Int64

	// verifyHook, when set (tests), puts the cache in verify mode: no subtree
	// is skipped; each one whose state was seen before is explored again and
	// its totals compared with the stored ones; the hook gets both visits'
	// schedules so far when they differ (and whether the encodings were equal:
	// false is a hash collision; and whether the per-finding known totals
	// were).
	verifyHook func(first, again Schedule, want, got cacheEntry, sameEncoding, sameKnown bool)

	// evsnap.go
	// Test hooks: evDrop names a part of the data restoreEvSnap leaves as it
	// was ("memory": the words the interrupt wrote; "pending": the lazy
	// engine's pending regions); evRestores, if set, counts the interrupts
	// restored.
	evDrop     string
	evRestores *atomic.Int64

	// Test hooks: noOpSnaps turns the op snaps off; opSnapDrop names a part of
	// them restoreOpSnap leaves out ("data": all but the interrupt's context;
	// "context": the context, left as the interrupt created it; "count": the
	// context's op count and digest as the next op's exec left them, in a
	// snap taken after the lookup); opRestores, if set, counts the op snaps
	// put back; opSnapAlways takes every op snap (opSnapUse left out);
	// opTaken, if set, counts those taken; opSnapEarly takes op snaps before
	// the lookup between the ops, as without the cache; opSnapClockAfter
	// keeps the clock as the lookup left it in a snap taken after it (a wrong
	// rule); opSnapVerify also fills a snap before the lookup and requires
	// the one taken after it to be equal (an internal error if not; a snap
	// not taken because the run stopped at the lookup is not compared).
	opSnapAlways     bool
	opTaken          *atomic.Int64
	opSnapVerify     bool
	noOpSnaps        bool
	opSnapDrop       string
	opRestores       *atomic.Int64
	opSnapEarly      bool
	opSnapClockAfter bool

	// irqstart.go
	// noIRQStart turns the runs that start at an interrupt off (tests);
	// irqStartDrop names a part of the state a catch-up leaves as the replay
	// made it ("data": memory, the model, the verdicts, what saveData
	// saves), a wrong catch-up, or that a start and a catch-up both leave as
	// the run had it ("pending": the lazy engine's pending regions), or that
	// a start leaves as the pool's record holds it ("instance": the task's
	// pending instance, as the last run to use the record left it).
	// irqStarts and catchUps, if set, count the runs that started at an
	// interrupt's entry and those of them that caught up.
	noIRQStart          bool
	irqStartDrop        string
	irqStarts, catchUps *atomic.Int64

	// knownwalk.go
	// knownWalksOff turns the kept walks off; knownWalksVerify runs the walk
	// behind every hit and compares (tests), counting them in
	// knownWalksVerified; knownWalksDrop names a part of the digest to leave
	// out ("inputs": knownInputs), to show that the tests catch it.
	knownWalksOff      bool
	knownWalksVerify   bool
	knownWalksVerified *atomic.Int64
	knownWalksHits     *atomic.Int64
	knownWalksDrop     string

	// lazy.go
	// Test hooks: lzSimulateAll commits every option in its sandbox even where
	// every check is clean (lzClean); lzCleanNoSets leaves out lzCleanSets;
	// lzVerifyClean commits them after lzCleanKeys and compares
	// (lzVerifyCleanKeys), counting in lzCleanVerified. Wrong rules:
	// lzCleanWrong leaves out the check due at the anchor when it marks the
	// sets checked clean; lzCleanKeepsProbe leaves a set's stores in memory
	// after lzCleanSets looked at it.
	lzSimulateAll, lzVerifyClean, lzCleanNoSets bool
	lzCleanWrong, lzCleanKeepsProbe             bool
	lzCleanVerified                             atomic.Int64

	// readers.go
	// readerMemoOff turns the memo off, and readerSeen with it;
	// readerMemoDrop names a part of their inputs to leave out, to show that
	// the tests catch it ("curr": curr_ret_stack; "words": readerSeen's
	// values of the words; "slots": the real stack, taken for unchanged
	// whatever its version says); readerMemoSkips, when set, counts the
	// checks they left out (tests).
	readerMemoOff   bool
	readerMemoDrop  string
	readerMemoSkips *atomic.Int64

	// readseen.go
	// readerSeenHits, when set, counts the checks the kept digests left out
	// (tests). readerMemoOff turns them off with the memo (readers.go).
	readerSeenHits *atomic.Int64

	// remotes.go, writerstores.go
	// Test hooks: remWrongRule merges a writer's placements across loads of
	// global words, as a reader's (unsound: the load may see its stores);
	// remQuiet, if set, counts the violations a representative deferred;
	// remNarrow merges no writer across a load of a global word (the rule
	// before 7 Dec 2026); wsDrop, if not 0, leaves word wsDrop-1 out of
	// every dry run's stores (wrong: remFiredCheck must see it).
	remWrongRule bool
	remQuiet     *atomic.Int64
	remNarrow    bool
	wsDrop       int

	// resume.go
	// noEvSnaps, in tests, turns the event snaps off (evsnap.go).
	noEvSnaps bool

	// snapDrop, in tests, names a part of the state restoreSnap leaves out
	// (resume_test.go: the comparison must notice).
	snapDrop string

	// reuse.go
	// lzVerifyReuse, in tests, runs every sandbox whose record a run takes
	// over and compares the keys (lzSandbox); lzReuseChecked counts them.
	lzVerifyReuse  bool
	lzReuseChecked atomic.Int64

	// split.go
	// splitClosed, if set (tests), counts the tables that filled up.
	splitClosed *atomic.Int64

	// noSplit, in tests, turns the per-combo totals off (the lazy engine's
	// states with pending regions are then cached whole, by their full key).
	noSplit bool

	// splitWrong, in tests, breaks one rule (TestSplitWrongRulesCaught):
	// "by", each combo's known findings taken as the whole subtree's
	// (their oracles then a union over the combos); "partial", a lookup that
	// hits when its first combo is stored.
	splitWrong string

	// state.go
	// checkDeadLog, in tests, has each run mark the records its state's log
	// window leaves out and count, in deadLogReads, every later read of one,
	// which the window's rule says never happens (deadLogMarks counts the
	// records marked, so that a test sees the check had something to check);
	// logTooNarrow is a test's wrong rule that also leaves out the records
	// before logSeen that a context still owns (the check must notice).
	checkDeadLog, logTooNarrow bool
	deadLogReads, deadLogMarks atomic.Int64

	// idleAll, in tests, takes every task context for idle, also in the
	// middle of an op (cache_test.go: the comparison must notice).
	idleAll bool

	// lzStateDrop, in tests, leaves the lazy engine's "pending" regions or
	// its "instance" in flight out of the state (the soundness comparison must
	// notice).
	lzStateDrop string

	// oracles.go
	// detailsRendered, when set (tests), counts the details violateDetail
	// rendered.
	detailsRendered *atomic.Int64

	// checkHook, in tests, runs first in every in-place check (to make one
	// crash in a chosen state: lazy_test.go).
	checkHook func(r *runner)

	// digest.go
	// Test hooks: noDigestReplay keeps the digests on in every run;
	// digestNotPutBack leaves the digests of a replay as they are at the
	// changed choice point (a wrong rule the soundness tests must catch).
	noDigestReplay, digestNotPutBack bool

	// fastreplay.go
	// Test hooks: noFastReplay turns the fast path off; fastAvoidsLazy keeps
	// it out of pending instances altogether (as before 6 Dec 2026, evening);
	// fastIgnoresLazy takes it at an instance's last commit too (a wrong rule
	// the soundness test must catch).
	noFastReplay, fastAvoidsLazy, fastIgnoresLazy bool

	// unwindext.go
	// Test hooks: noUnwindExt turns the extension off; uxKeyMerge encodes an
	// opening extension as an open one (unsound: TestUnwindExtKeyCaught);
	// uxAlwaysClean evaluates no unwind (TestUnwindExtEvaluationCaught).
	noUnwindExt, uxKeyMerge, uxAlwaysClean bool

	// uxMemoVerify walks again at every answer of unwindEval's memo and
	// fails on another answer; uxMemoNoSlots leaves the real stacks'
	// version out of the memo's key (wrong: TestUnwindExtMemo).
	uxMemoVerify, uxMemoNoSlots bool

	// noUxReplay, in tests, evaluates the unwind again over a replayed
	// prefix; uxFlip takes the opposite of each recorded answer there (wrong:
	// TestUnwindExtReplayedAnswers).
	noUxReplay, uxFlip bool
}

// noHooks is the hooks of a run whose options carry none: read, never set.
var noHooks testHooks

// testHooks returns o's hooks, or noHooks, for a run or a runner that
// takes them, and counts the taking in their ran (run, shareRuns and the
// table of combos call it; what reads o.hooks before a run has taken
// them reads the field).
func (o *RunOptions) testHooks() *testHooks {
	if o.hooks != nil {
		o.hooks.ran.Add(1)
		return o.hooks
	}
	return &noHooks
}
