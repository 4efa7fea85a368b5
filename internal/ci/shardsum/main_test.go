package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/internal/ci"
)

func ptr[T any](v T) *T { return &v }

// clean is a passing CI run: every pinned variant in 4 shards, the
// schedules split unevenly, the known findings all in shard 0.
func clean() []ci.Shard {
	var all []ci.Shard
	for _, v := range []string{"latest", "v6.12", "v6.11", "seed"} {
		pin := ci.Pins[v]
		for i := 0; i < 4; i++ {
			runs := pin.Schedules / 4
			var known []string
			if i == 0 {
				runs += pin.Schedules % 4
				known = pin.Known
			}
			all = append(all, ci.Shard{
				Path: ci.FileName(v, i, 4), Variant: v, I: i, N: 4,
				Summary: ci.Summary{
					Variant: ptr(v), Mutant: ptr(""), Bound: ptr("K=2 D=2 R=1 E=1 C=2"),
					Schedules: ptr(runs), Violations: ptr(int64(0)), Known: known, Seconds: 0.5,
				},
			})
		}
	}
	return all
}

// write writes the summary files of shards (as fgcheck prints them) to dir.
func write(t *testing.T, dir string, shards []ci.Shard) {
	t.Helper()
	for _, s := range shards {
		known := `"` + strings.Join(s.Known, `","`) + `"`
		if len(s.Known) == 0 {
			known = ""
		}
		body := fmt.Sprintf(`{"variant":%q,"mutant":%q,"bound":%q,"schedules":%d,"violations":%d,"known":[%s],"seconds":%g,"first_violation":null}`+"\n",
			*s.Summary.Variant, *s.Mutant, *s.Bound, *s.Schedules, *s.Violations, known, s.Seconds)
		if err := os.WriteFile(filepath.Join(dir, s.Path), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, clean())
	md := filepath.Join(t.TempDir(), "summary.md")
	var out, errb bytes.Buffer
	if rc := run([]string{"-n", "4", "-summary", md, dir}, &out, &errb); rc != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", rc, &out, &errb)
	}
	for _, want := range []string{"latest      4/4     124215     124215", "v6.11       4/4     193113     193113", "seed        4/4     122700     122700", "ok: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, &out)
		}
	}
	b, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), "| latest | 4/4 | 124215 | 124215 | 0 |") || !strings.Contains(string(b), "All checks passed.") {
		t.Errorf("-summary wrote (err %v):\n%s", err, b)
	}

	// A failing check exits 1 and names the problem.
	if err := os.Remove(filepath.Join(dir, ci.FileName("seed", 2, 4))); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if rc := run([]string{"-n", "4", dir}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "FAIL: variant seed: shard 2/4 missing") {
		t.Errorf("with seed 2/4 removed: exit %d, want 1 naming the shard\n%s", rc, &out)
	}
}

func TestRunMisuse(t *testing.T) {
	good := t.TempDir()
	write(t, good, clean())
	tests := []struct {
		name   string
		files  map[string]string // written to a fresh directory, which is the argument
		args   []string          // instead, when files is nil
		want   string
		reason string
	}{
		{name: "no arguments", args: []string{}, want: "usage: shardsum", reason: "nothing to check is misuse, not a pass"},
		{name: "empty directory", files: map[string]string{}, want: "no shard summaries", reason: "an empty download must not pass as zero problems"},
		{name: "misnamed file", files: map[string]string{"explore-latest-4-of-4.json": "{}"}, want: "is not one of 0..n-1", reason: "shard 4 of 4 does not exist"},
		{name: "not JSON", files: map[string]string{"explore-latest-0-of-1.json": "schedules: 56766\n"}, want: "invalid character", reason: "a text summary (explore without --json) must be rejected"},
		{name: "missing keys", files: map[string]string{"explore-latest-0-of-1.json": `{"variant":"latest","bound":"K=2","mutant":""}`}, want: "no schedules, violations", reason: "a summary without its counts cannot be summed"},
		{name: "missing path", args: []string{filepath.Join(good, "nope")}, want: "no such file", reason: "a wrong download path is misuse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.files != nil {
				dir := t.TempDir()
				for name, body := range tt.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				args = []string{dir}
			}
			var out, errb bytes.Buffer
			if rc := run(args, &out, &errb); rc != 2 || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, want 2 with %q on stderr\nstderr:\n%s\nreason: %s", rc, tt.want, &errb, tt.reason)
			}
		})
	}
}
