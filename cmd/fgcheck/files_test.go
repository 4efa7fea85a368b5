package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/harness"
)

func sameFiles(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d files, want %d", what, len(got), len(want))
	}
	for name, text := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: no %s", what, name)
		} else if g != text {
			t.Errorf("%s: %s differs:\n%s\nwant\n%s", what, name, g, text)
		}
	}
}

// TestFailingFilesAreAFunctionOfTheSchedule: the failing files of an
// exploration, names and contents, are the same whatever the worker
// count, the shards, and an interruption resumed from a checkpoint. That
// holds where every failing schedule is run (--exact): the state cache
// counts the failing schedules of a subtree it prunes without running
// them, so which of them it saves depends on which twin ran first; what
// it saves is a subset of the exact files, byte for byte.
func TestFailingFilesAreAFunctionOfTheSchedule(t *testing.T) {
	for _, mut := range [][]string{{"--mutant", "M-push-1", "-C", "1"}, {"--mutant", "M-push-2", "-C", "1"}} {
		args := append([]string{"explore", "--exact", "--keep-going", "--max-files", "1000", "--progress", "off"}, mut...)
		run := func(extra ...string) (string, jsonSummary) {
			out := t.TempDir()
			js := exploreJSON(t, exitViolation, append(append(append([]string(nil), args...), "--out", out), extra...)...)
			return out, js
		}
		one, js := run("--workers", "1")
		want := dirFiles(t, one)
		if len(want) != int(js.Violations) || len(want) < 3 {
			t.Fatalf("%v: %d files for %d violations", mut, len(want), js.Violations)
		}
		for _, text := range want {
			if strings.Contains(text, "--workers") || strings.Contains(text, "--out") || strings.Contains(text, "of this run") {
				t.Fatalf("a failing file names run-specific detail:\n%s", text)
			}
		}
		two, _ := run("--workers", "2")
		sameFiles(t, fmt.Sprint(mut, " with 2 workers"), want, dirFiles(t, two))

		cached := t.TempDir()
		cargs := append(append([]string{"explore", "--keep-going", "--max-files", "1000", "--progress", "off"}, mut...), "--out", cached)
		if js := exploreJSON(t, exitViolation, cargs...); js.Violations != int64(len(want)) {
			t.Errorf("%v cached: %d violations counted, %d with --exact", mut, js.Violations, len(want))
		}
		got := dirFiles(t, cached)
		if len(got) == 0 {
			t.Errorf("%v cached: no file saved", mut)
		}
		for name, text := range got {
			if w, ok := want[name]; !ok || w != text {
				t.Errorf("%v cached: %s is not the exact exploration's file of that name", mut, name)
			}
		}

		shards := t.TempDir()
		for i := 0; i < 3; i++ {
			runClean(t, append(append([]string(nil), args...), "--out", shards, "--shard", fmt.Sprintf("%d/3", i))...)
		}
		sameFiles(t, fmt.Sprint(mut, " in 3 shards"), want, dirFiles(t, shards))

		// Stopped after a few schedules, resumed with another worker
		// count: the earlier leg's files are found again under the same
		// names, no duplicates.
		resumed := t.TempDir()
		ck := filepath.Join(t.TempDir(), "run.ckpt")
		runClean(t, append(append([]string(nil), args...), "--out", resumed, "--checkpoint", ck, "--checkpoint-every", "5", "--max-runs", "30", "--workers", "2")...)
		exploreJSON(t, exitViolation, append(append([]string(nil), args...), "--out", resumed, "--checkpoint", ck, "--workers", "1")...)
		sameFiles(t, fmt.Sprint(mut, " resumed"), want, dirFiles(t, resumed))
	}
}

// TestStaleTempsRemoved: the hidden temporary files of a killed run are
// removed by the next run that writes there; a live writer's are kept.
func TestStaleTempsRemoved(t *testing.T) {
	out := t.TempDir()
	dead := fmt.Sprintf(".latest-M-push-1-unwinder-00000000.txt.tmp-%d-123", deadPID(t))
	live := ".latest-M-push-1-unwinder-11111111.txt.tmp-1-456" // PID 1 runs
	legacy := ".latest-M-push-1-unwinder-22222222.txt.tmp-789"
	other := ".notes.swp"
	for _, n := range []string{dead, live, legacy, other} {
		if err := os.WriteFile(filepath.Join(out, n), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(out, legacy), old, old)
	exploreJSON(t, exitViolation, "explore", "--mutant", "M-push-1", "--out", out)
	for n, keep := range map[string]bool{dead: false, legacy: false, live: true, other: true} {
		_, err := os.Stat(filepath.Join(out, n))
		if exists := err == nil; exists != keep {
			t.Errorf("%s: exists %v, want %v", n, exists, keep)
		}
	}
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	stale := filepath.Join(filepath.Dir(ck), fmt.Sprintf(".run.ckpt.tmp-%d-9", deadPID(t)))
	os.WriteFile(stale, []byte("half"), 0o644)
	exploreJSON(t, exitClean, "explore", "-C", "1", "--checkpoint", ck, "--max-runs", "10")
	if _, err := os.Stat(stale); err == nil {
		t.Error("the checkpoint's stale temporary file is still there")
	}
}

// runClean runs a command that may or may not find a violation.
func runClean(t *testing.T, args ...string) {
	t.Helper()
	if code, _, stderr := fgcheck(t, args...); code != exitClean && code != exitViolation {
		t.Fatalf("fgcheck %q exited %d: %s", args, code, stderr)
	}
}

// deadPID is a PID no process has.
func deadPID(t *testing.T) int {
	for pid := 4_000_000; pid > 3_000_000; pid -= 7919 {
		if !alive(pid) {
			return pid
		}
	}
	t.Skip("no free PID found")
	return 0
}

// TestOutputPathsCheckedFirst: every output path is checked before any
// work, empty values are refused alike, and nothing is written.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := writeTemp(t, "f.txt", "x")
	good := "corpus/ret-addr-ignores-idx-cursor.txt"
	if _, err := os.Stat(good); err != nil {
		good = filepath.Join("..", "..", good)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"explore", "--out", ""}, "--out: empty directory name"},
		{[]string{"explore", "--out", filepath.Join(file, "sub")}, "is not a directory"},
		{[]string{"explore", "--out", file}, "not a directory"},
		{[]string{"random", "--out", ""}, "--out: empty directory name"},
		{[]string{"explore", "--checkpoint", ""}, "--checkpoint: empty file name"},
		{[]string{"explore", "--checkpoint", filepath.Join(dir, "missing", "c.ckpt")}, "does not exist"},
		{[]string{"explore", "--checkpoint", dir}, "is a directory"},
		{[]string{"replay", good, "--html", ""}, "--html: empty file name"},
		{[]string{"replay", good, "--html", dir}, "is a directory"},
		{[]string{"replay", good, "--html", filepath.Join(dir, "no", "p.html")}, "does not exist"},
		{[]string{"minimize", good, "-o", ""}, "-o: empty file name"},
		{[]string{"minimize", good, "-o", dir}, "is a directory"},
		{[]string{"mutants", "--out", file}, "not a directory"},
	}
	for _, tt := range tests {
		// Refused before any work: no summary, no page, no minimized file.
		code, stdout, stderr := fgcheck(t, tt.args...)
		if code != exitMisuse || !strings.Contains(stderr, tt.want) || stdout != "" || strings.Contains(stderr, "replay: wrote") || strings.Contains(stderr, "[minimize]") {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2, %q, nothing", tt.args, code, stderr, stdout, tt.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused commands left %d entries in %s", len(ents), dir)
	}
}

// TestSummaryNamesWriteFailure: a failing schedule that cannot be written
// is counted and the summary says why, not --max-files.
func TestSummaryNamesWriteFailure(t *testing.T) {
	out := t.TempDir()
	args := []string{"explore", "--mutant", "M-push-1", "--out", out}
	exploreJSON(t, exitViolation, args...)
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Fatalf("%d files", len(ents))
	}
	// A directory where the file goes: the rename fails.
	name := filepath.Join(out, ents[0].Name())
	os.Remove(name)
	os.Mkdir(name, 0o755)
	os.WriteFile(filepath.Join(name, "keep"), []byte("x"), 0o644)
	code, stdout, stderr := fgcheck(t, args...)
	if code != exitViolation || !strings.Contains(stdout, "saved 0 of 1 failing schedules (1 not written: rename") || strings.Contains(stdout, "--max-files") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCheckpointDamageRefused: a checkpoint with a flipped byte, or of the
// old format, is refused as misuse before any work and left as it is.
func TestCheckpointDamageRefused(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	args := []string{"explore", "-C", "1", "--checkpoint", ck}
	exploreJSON(t, exitClean, append(args, "--max-runs", "50")...)
	good, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"flipped", "checksum mismatch", func() []byte { b := bytes.Clone(good); b[len(b)/2] ^= 0x04; return b }()},
		{"v1", "fgcheck-checkpoint v1", []byte(`{"format":"fgcheck-checkpoint v1","state":{}}` + "\n")},
	} {
		os.WriteFile(ck, c.data, 0o644)
		code, stdout, stderr := fgcheck(t, args...)
		if code != exitMisuse || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "left as it is") || stdout != "" {
			t.Errorf("%s: exit %d, %q", c.name, code, stderr)
		}
		if after, _ := os.ReadFile(ck); !bytes.Equal(after, c.data) {
			t.Errorf("%s: the refused checkpoint was changed", c.name)
		}
	}
	if !strings.HasPrefix(string(good), harness.CheckpointFormat+" sha256=") {
		t.Errorf("checkpoint header %q", good[:40])
	}
}

// TestMinimizeTime: --time stops the search and writes the smallest file
// so far, saying it is not 1-minimal; a stopped search of a long file
// ends within its budget.
func TestMinimizeTime(t *testing.T) {
	out := t.TempDir()
	exploreJSON(t, exitViolation, "explore", "--mutant", "M-push-2", "--out", out)
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Fatalf("%d files", len(ents))
	}
	in := filepath.Join(out, ents[0].Name())
	small := filepath.Join(t.TempDir(), "small.txt")
	code, _, stderr := fgcheck(t, "minimize", in, "-o", small, "--time", "1ns")
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(small)
	if !strings.Contains(string(data), "1-minimal: no (--time 1ns reached)") {
		t.Errorf("the story does not say the search was cut:\n%s", data)
	}
	if code, _, _ := fgcheck(t, "minimize", in, "--time", "-1s"); code != exitMisuse {
		t.Errorf("--time -1s: exit %d", code)
	}
	code, _, stderr = fgcheck(t, "minimize", in, "-o", small)
	data, _ = os.ReadFile(small)
	if code != exitClean || !strings.Contains(string(data), "1-minimal: yes") {
		t.Errorf("without --time: exit %d %s\n%s", code, stderr, data)
	}
}
