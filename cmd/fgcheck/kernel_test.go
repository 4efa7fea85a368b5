package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget/cload"
)

// needKernel skips without a tree (and fails under CI).
func needKernel(t *testing.T) string {
	t.Helper()
	if kernelTree == "" || !cload.Available {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: the kernel-target test needs FGCHECK_KERNEL (make kernel) and cgo")
		}
		t.Skip("no kernel tree: set FGCHECK_KERNEL (make kernel) to run the kernel-target tests")
	}
	return kernelTree
}

// TestExploreKernel runs explore --kernel on a slice of std: the summary
// names the tree, its sha256 and the compiler model of the verdict.
func TestExploreKernel(t *testing.T) {
	dir := needKernel(t)
	var out, errb bytes.Buffer
	rc := run([]string{"explore", "--kernel", dir, "--max-runs", "300"}, &out, &errb)
	if rc != 0 {
		t.Fatalf("exit %d\n%s%s", rc, out.String(), errb.String())
	}
	for _, want := range []string{"variant v6.12", "target:      kernel tree " + dir, "fgraph.c sha256 ",
		"model:       compiled: the order GCC chose", "schedules:   300 (incomplete", "violations:  0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	// Misuse: the compiled target is one worker per process.
	out.Reset()
	errb.Reset()
	if rc := run([]string{"explore", "--kernel", dir, "--workers", "2"}, &out, &errb); rc != 2 {
		t.Errorf("--workers 2 with --kernel: exit %d, want 2 (%s)", rc, errb.String())
	}
	if rc := run([]string{"explore", "--kernel", t.TempDir()}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "kernel/trace/fgraph.c") {
		t.Errorf("--kernel of an empty dir: exit %d, %q", rc, errb.String())
	}
	// The compiled code has no region orders to choose lazily; auto, with
	// no cap, keeps the eager engine there.
	errb.Reset()
	if rc := run([]string{"explore", "--kernel", dir, "--orders", "lazy"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "no region orders to choose") {
		t.Errorf("--orders lazy with --kernel: exit %d, %q; want misuse", rc, errb.String())
	}
	out.Reset()
	if rc := run([]string{"explore", "--kernel", dir, "-C", "0", "--max-runs", "50", "--json"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), `"orders":"eager"`) || !strings.Contains(out.String(), `"remotes":"each"`) {
		t.Errorf("--kernel with no cap: exit %d, want orders eager and remotes each in %s", rc, out.String())
	}
	// Nor are its remote placements merged: a crash of its remote CPU
	// cannot be deferred to the end of a segment.
	errb.Reset()
	if rc := run([]string{"explore", "--kernel", dir, "--remotes", "merged"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "runs each placement") {
		t.Errorf("--remotes merged with --kernel: exit %d, %q; want misuse", rc, errb.String())
	}
}

// TestKernelCrashIsAViolation: a C mutant that makes the compiled code
// fault (a call through a corrupted function pointer). The process ends
// with exit 1 (a violation, not misuse), the message says what crashed,
// and the run's schedule file is on disk, expects the panic oracle, says
// how to replay it (the C mutant's flag included) and crashes again when
// replayed so.
func TestKernelCrashIsAViolation(t *testing.T) {
	tree := needKernel(t)
	dir := t.TempDir()
	cmd := child(t, dir, "explore", "--kernel", tree, "--mutant", "C-wild-call", "--out", "out")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if rc := exitCode(t, err); rc != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", rc, stdout, stderr.String())
	}
	msg := stderr.String()
	for _, want := range []string{"VIOLATION panic: the compiled fgraph.c crashed: SIGSEGV", "failing schedule saved: ", "no summary"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(string(stdout), "schedules:") {
		t.Errorf("a summary was printed for a run that did not finish:\n%s", stdout)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "out", "*-panic-*.txt"))
	if len(files) != 1 {
		t.Fatalf("saved files %v, want one panic schedule", files)
	}
	text, _ := os.ReadFile(files[0])
	if !strings.Contains(string(text), "expect violation panic") || !strings.Contains(string(text), "with C mutant C-wild-call") ||
		!strings.Contains(string(text), "# reproduce: fgcheck replay --kernel TREE --mutant C-wild-call THIS_FILE") {
		t.Errorf("saved file:\n%s", text)
	}
	again := child(t, dir, "replay", "--kernel", tree, "--mutant", "C-wild-call", files[0])
	var stderr2 bytes.Buffer
	again.Stderr = &stderr2
	_, err = again.Output()
	if rc := exitCode(t, err); rc != 1 || !strings.Contains(stderr2.String(), "VIOLATION panic: the compiled fgraph.c crashed: SIGSEGV") {
		t.Errorf("replaying the saved file: exit %d, want 1 and the same crash\n%s", rc, stderr2.String())
	}
}

// TestKernelBadAccessCaughtFirst: a C mutant that sends a reader far
// outside the shadow stack is a violation before the access faults: the
// run stops at it (exit 1, its file saved), and nothing crashes.
func TestKernelBadAccessCaughtFirst(t *testing.T) {
	tree := needKernel(t)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if rc := run([]string{"explore", "--kernel", tree, "--mutant", "C-crash", "--out", dir}, &out, &errb); rc != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", rc, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "curr_ret_stack 268435460 outside") {
		t.Errorf("summary:\n%s", out.String())
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.txt")); len(files) != 1 {
		t.Errorf("saved %v, want one file", files)
	}
}

// TestKernelMutantsKilled: the C forms of two ordering mutants are killed
// on the compiled code at std, and the failing file replays on the mutant
// and passes on the unpatched tree.
func TestKernelMutantsKilled(t *testing.T) {
	tree := needKernel(t)
	for _, tc := range []struct{ mutant, oracle string }{
		{"M-push-2", "ret-addr"}, // no rewrite after W3: an interrupt's frame stays
		{"M-ret-1", "ret-addr"},  // curr lowered before the retfuncs: the profiler's ftrace_graph_get_ret_stack(current, 0) in a retfunc gets the wrong frame
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		rc := run([]string{"explore", "--kernel", tree, "--mutant", tc.mutant, "--out", dir, "--json"}, &out, &errb)
		if rc != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s%s", tc.mutant, rc, out.String(), errb.String())
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		if len(files) != 1 || !strings.Contains(files[0], "-"+tc.oracle+"-") {
			t.Fatalf("%s: files %v, want one %s schedule", tc.mutant, files, tc.oracle)
		}
		out.Reset()
		if rc := run([]string{"replay", "--kernel", tree, "--mutant", tc.mutant, "--trace=false", files[0]}, &out, &errb); rc != 0 {
			t.Errorf("%s: replay on the mutant: exit %d\n%s", tc.mutant, rc, out.String())
		}
		out.Reset()
		if rc := run([]string{"replay", "--kernel", tree, "--trace=false", "--json", files[0]}, &out, &errb); rc != 1 || !strings.Contains(out.String(), `"pass"`) && !strings.Contains(out.String(), "pass") {
			t.Errorf("%s: replay on the unpatched tree: exit %d (want 1: the file expects a violation that the tree does not have)\n%s", tc.mutant, rc, out.String())
		}
	}
}

// TestKernelShardCheckpoint: on the compiled tree, a shard explored in two
// legs through a checkpoint ends with the totals of one uninterrupted run
// of that shard.
func TestKernelShardCheckpoint(t *testing.T) {
	tree := needKernel(t)
	dir := t.TempDir()
	type summary struct {
		Schedules      int64            `json:"schedules"`
		Complete       bool             `json:"complete"`
		KnownSchedules map[string]int64 `json:"known_schedules"`
		Target         string           `json:"target"`
	}
	explore := func(extra ...string) summary {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"explore", "--kernel", tree, "--bound", "C=1", "--shard", "1/2", "--json", "--out", filepath.Join(dir, "out")}, extra...)
		if rc := run(args, &out, &errb); rc != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, rc, out.String(), errb.String())
		}
		var s summary
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		return s
	}
	whole := explore()
	ck := filepath.Join(dir, "k.ckpt")
	first := explore("--max-runs", "50", "--checkpoint", ck)
	second := explore("--checkpoint", ck)
	if first.Complete || !second.Complete || !whole.Complete {
		t.Fatalf("complete: first leg %v, second %v, whole %v", first.Complete, second.Complete, whole.Complete)
	}
	if second.Schedules != whole.Schedules || !reflect.DeepEqual(second.KnownSchedules, whole.KnownSchedules) {
		t.Errorf("resumed: %d schedules, known %v; uninterrupted: %d, %v", second.Schedules, second.KnownSchedules, whole.Schedules, whole.KnownSchedules)
	}
	if !strings.Contains(whole.Target, "kernel tree "+tree) {
		t.Errorf("target %q", whole.Target)
	}
}
