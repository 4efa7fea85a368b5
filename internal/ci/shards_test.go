package ci

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// shardsOf returns the n summaries of a clean sharded run of variant that
// add up to its pin: the schedules split unevenly (shard 0 takes the
// remainder), the known findings spread over the shards.
func shardsOf(variant string, n int) []Shard {
	pin := Pins[variant]
	var out []Shard
	for i := 0; i < n; i++ {
		runs := pin.Schedules / int64(n)
		if i == 0 {
			runs += pin.Schedules % int64(n)
		}
		var known []string
		for j, k := range pin.Known {
			if j%n == i || j == 0 {
				known = append(known, k)
			}
		}
		out = append(out, Shard{
			Path: FileName(variant, i, n), Variant: variant, I: i, N: n,
			Summary: Summary{
				Variant: ptr(variant), Mutant: ptr(""), Bound: ptr("K=2 D=2 R=1 E=1 C=2"),
				Schedules: ptr(runs), Violations: ptr(int64(0)), Known: known, Seconds: 0.5,
			},
		})
	}
	return out
}

// clean is a passing CI run: every pinned variant in 4 shards.
func clean() []Shard {
	var all []Shard
	for _, v := range []string{"latest", "v6.12", "v6.11", "seed"} {
		all = append(all, shardsOf(v, 4)...)
	}
	return all
}

// edit returns clean() with f applied to the shard of variant and index i.
func edit(variant string, i int, f func(*Shard)) []Shard {
	all := clean()
	for k := range all {
		if all[k].Variant == variant && all[k].I == i {
			f(&all[k])
		}
	}
	return all
}

func without(all []Shard, drop func(Shard) bool) []Shard {
	return slices.DeleteFunc(all, drop)
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		shards []Shard
		wantN  int
		want   []string // a substring of each problem, in order; none: the check passes
		reason string
	}{
		{
			name: "clean", shards: clean(), wantN: 4,
			reason: "every variant's 4 shards add up to its pin with no violation and the pinned known findings",
		},
		{
			name: "uneven split", wantN: 4,
			shards: edit("latest", 1, func(s *Shard) { *s.Schedules += 100 }),
			want:   []string{"variant latest: the 4 shards explored 124315 schedules in all, pinned 124215 (+100)"},
			reason: "the sum is what is pinned: one shard counting 100 extra schedules breaks it",
		},
		{
			name: "total short by one", wantN: 4,
			shards: edit("v6.11", 3, func(s *Shard) { *s.Schedules-- }),
			want:   []string{"variant v6.11: the 4 shards explored 193112 schedules in all, pinned 193113 (-1)"},
			reason: "a single lost schedule (the shards not partitioning the space) must fail",
		},
		{
			name: "same total, other split", wantN: 4,
			shards: func() []Shard {
				all := edit("seed", 0, func(s *Shard) { *s.Schedules -= 7 })
				all[len(all)-1].Summary.Schedules = ptr(*all[len(all)-1].Schedules + 7)
				return all
			}(),
			reason: "how the schedules fall between the shards is not pinned, only their sum",
		},
		{
			name: "missing shard", wantN: 4,
			shards: without(clean(), func(s Shard) bool { return s.Variant == "latest" && s.I == 3 }),
			want:   []string{"variant latest: shard 3/4 missing"},
			reason: "a shard job that uploaded nothing (it crashed or was cancelled) must fail, and the total is then not compared",
		},
		{
			name: "duplicate shard", wantN: 4,
			shards: func() []Shard {
				all := clean()
				dup := all[1]
				dup.Path = "rerun/" + dup.Path
				return append(all, dup)
			}(),
			want:   []string{"variant latest: shard 1/4 summarized 2 times (explore-latest-1-of-4.json, rerun/explore-latest-1-of-4.json)"},
			reason: "a shard counted twice would inflate the total; it is named instead of summed",
		},
		{
			name: "violation", wantN: 4,
			shards: edit("seed", 2, func(s *Shard) {
				s.Violations = ptr(int64(3))
				s.FirstViolation = &Violation{Oracle: "unwinder", Message: "task0 at push.w3: word 3 (at task0)"}
			}),
			want:   []string{"variant seed shard 2/4: 3 violations; first: unwinder: task0 at push.w3: word 3 (at task0) (explore-seed-2-of-4.json)"},
			reason: "any violation in any shard fails the merge, naming the shard and the first violation",
		},
		{
			name: "shard stopped early", wantN: 4,
			shards: edit("latest", 2, func(s *Shard) {
				s.Complete, s.Stopped = ptr(false), "time budget 10m0s reached"
				*s.Schedules -= 1000
			}),
			want:   []string{"variant latest shard 2/4 did not explore its whole shard: time budget 10m0s reached (explore-latest-2-of-4.json)"},
			reason: "a shard cut short by --time, --max-runs or a signal exits 0 when clean, but its count is partial; the total is then not compared",
		},
		{
			name: "complete shards of a newer fgcheck", wantN: 4,
			shards: edit("seed", 1, func(s *Shard) { s.Complete = ptr(true) }),
			reason: "complete: true (or no complete key, from an older fgcheck) is a finished shard",
		},
		{
			name: "variant not run", wantN: 4,
			shards: without(clean(), func(s Shard) bool { return s.Variant == "v6.11" }),
			want:   []string{"variant v6.11: no shard summaries"},
			reason: "a pinned variant whose whole column of the matrix is gone must fail",
		},
		{
			name: "unpinned variant", wantN: 4,
			shards: append(clean(), Shard{Path: FileName("v7", 0, 1), Variant: "v7", I: 0, N: 1, Summary: shardsOf("latest", 1)[0].Summary}),
			want: []string{
				"explore-v7-0-of-1.json: named for variant v7 but holds a summary of variant latest",
				"variant v7: no pinned std total (pinned: latest, seed, v6.11, v6.12)",
				"variant v7: sharded 1 ways, want 4",
			},
			reason: "a summary the pins cannot check must not pass silently",
		},
		{
			name: "shards disagree on n", wantN: 0,
			shards: edit("latest", 1, func(s *Shard) { s.N = 2; s.Path = FileName("latest", 1, 2) }),
			want:   []string{"variant latest: shards disagree on n: [2 4]"},
			reason: "shards of different splits do not partition the space together",
		},
		{
			name: "wrong n", wantN: 4,
			shards: append(without(clean(), func(s Shard) bool { return s.Variant == "seed" }), shardsOf("seed", 2)...),
			want:   []string{"variant seed: sharded 2 ways, want 4"},
			reason: "-n pins the split the workflow's matrix uses",
		},
		{
			name: "mutant", wantN: 4,
			shards: edit("latest", 0, func(s *Shard) { s.Mutant = ptr("M-push-3") }),
			want:   []string{"explore-latest-0-of-4.json: explored with mutant M-push-3"},
			reason: "the pins are for the baseline; a mutant run's count means nothing against them",
		},
		{
			name: "bound differs", wantN: 4,
			shards: edit("v6.11", 2, func(s *Shard) { s.Bound = ptr("K=1 D=2 R=1 E=1 C=2") }),
			want:   []string{`variant v6.11: shards explored different bounds: ["K=1 D=2 R=1 E=1 C=2" "K=2 D=2 R=1 E=1 C=2"]`},
			reason: "shards of different bounds are pieces of different spaces",
		},
		{
			name: "known finding lost", wantN: 4,
			shards: func() []Shard {
				all := clean()
				for k := range all {
					if all[k].Variant == "latest" {
						all[k].Known = slices.DeleteFunc(slices.Clone(all[k].Known), func(s string) bool { return s == "reserve-reorder" })
					}
				}
				return all
			}(),
			want:   []string{`variant latest: the shards hit the known findings ["F1-bit0" "inflight-ret-addr" "recursion-transition" "reserve-window"], pinned ["F1-bit0" "inflight-ret-addr" "recursion-transition" "reserve-reorder" "reserve-window"]`},
			reason: "the union of the shards' known findings must be the unsharded run's",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == "" {
				t.Fatal("every case needs a reason")
			}
			r := Check(tt.shards, Pins, tt.wantN)
			ok := len(r.Problems) == len(tt.want)
			for i := 0; ok && i < len(tt.want); i++ {
				ok = strings.Contains(r.Problems[i], tt.want[i])
			}
			if !ok {
				t.Errorf("problems:\n  %s\nwant (substrings):\n  %s\nreason: %s", strings.Join(r.Problems, "\n  "), strings.Join(tt.want, "\n  "), tt.reason)
			}
		})
	}
}

// TestLoadShardKey: a summary's own shard key must agree with its file
// name (a renamed or misplaced file would otherwise count for another
// shard); summaries without the key (older fgcheck) still load.
func TestLoadShardKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, shard string) string {
		p := filepath.Join(dir, name)
		body := `{"variant":"latest","mutant":"","bound":"K=2 D=2 R=1 E=1 C=2","schedules":1,"violations":0,"known":[]` + shard + `}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, shard string
		ok          bool
		why         string
	}{
		{"explore-latest-1-of-4.json", `,"shard":"1/4"`, true, "name and key agree"},
		{"explore-latest-2-of-4.json", ``, true, "no key: an older summary"},
		{"explore-latest-3-of-4.json", `,"shard":"0/4"`, false, "a shard-0 summary saved under shard 3's name"},
		{"explore-latest-0-of-2.json", `,"shard":"0/4"`, false, "another shard count"},
	}
	for _, tc := range cases {
		_, err := Load(write(tc.name, tc.shard))
		if (err == nil) != tc.ok {
			t.Errorf("%s with %q: error %v, want ok=%v (%s)", tc.name, tc.shard, err, tc.ok, tc.why)
		}
	}
}
