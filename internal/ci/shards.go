package ci

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Pin is what an unsharded std exploration of one variant must report: the
// exact schedule count and the sorted names of the known findings it hits.
type Pin struct {
	Schedules int64
	Known     []string
}

// Pins are the std pins of harness/std_test.go (stdPins), copied: a test
// parses that file (StdPins) and fails when the two differ.
var Pins = map[string]Pin{
	"latest": {124215, []string{"F1-bit0", "inflight-ret-addr", "recursion-transition", "reserve-reorder", "reserve-window"}},
	"v6.12":  {185922, []string{"F1-bit0", "inflight-ret-addr", "recursion-transition", "reserve-reorder", "reserve-window"}},
	"v6.11":  {193113, []string{"F1-bit0", "F3-torn-return", "F9-direct-off", "inflight-ret-addr", "recursion-transition", "reserve-reorder", "reserve-window"}},
	"seed":   {122700, []string{"F1-bit0", "F2-seed-torn-entry", "F3-torn-return", "F6-seed-reuse", "inflight-ret-addr", "recursion-transition", "seed-ret-addr-current", "seed-tail-call"}},
}

// Summary is the object `fgcheck explore --json` prints (docs/cli.md).
// Fields it does not know are ignored; the ones it needs must be present.
type Summary struct {
	Variant        *string    `json:"variant"`
	Mutant         *string    `json:"mutant"`
	Bound          *string    `json:"bound"`
	Schedules      *int64     `json:"schedules"`
	Violations     *int64     `json:"violations"`
	Known          []string   `json:"known"`
	Seconds        float64    `json:"seconds"`
	FirstViolation *Violation `json:"first_violation"`
	// Complete and Stopped are absent from the summaries of older
	// fgcheck versions; when present, Complete must be true.
	Complete *bool  `json:"complete"`
	Stopped  string `json:"stopped"`
	// Shard is "i/n" (absent from older summaries); when present it must
	// be the shard the file name says.
	Shard *string `json:"shard"`
}

// Violation is the first_violation object of a Summary.
type Violation struct {
	Oracle  string `json:"oracle"`
	Message string `json:"message"`
}

// Shard is one shard's summary and where it came from.
type Shard struct {
	Path    string
	Variant string // from the file name
	I, N    int    // shard i of n, from the file name
	Summary
}

// nameRE is the file name the CI workflow (.github/workflows/ci.yml) gives
// a shard's summary:
// explore-<variant>-<i>-of-<n>.json.
var nameRE = regexp.MustCompile(`^explore-(.+)-([0-9]+)-of-([0-9]+)\.json$`)

// FileName is the name of the summary file of shard i/n of variant.
func FileName(variant string, i, n int) string {
	return fmt.Sprintf("explore-%s-%d-of-%d.json", variant, i, n)
}

// ParseName reads the variant and shard i/n from a summary file's name.
func ParseName(path string) (variant string, i, n int, err error) {
	m := nameRE.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return "", 0, 0, fmt.Errorf("%s: not named explore-<variant>-<i>-of-<n>.json", path)
	}
	i, err1 := strconv.Atoi(m[2])
	n, err2 := strconv.Atoi(m[3])
	if err1 != nil || err2 != nil || n < 1 || i >= n {
		return "", 0, 0, fmt.Errorf("%s: shard %s of %s is not one of 0..n-1 with n >= 1", path, m[2], m[3])
	}
	return m[1], i, n, nil
}

// Load reads one shard summary file.
func Load(path string) (Shard, error) {
	v, i, n, err := ParseName(path)
	if err != nil {
		return Shard{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Shard{}, err
	}
	s := Shard{Path: path, Variant: v, I: i, N: n}
	if err := json.Unmarshal(b, &s.Summary); err != nil {
		return Shard{}, fmt.Errorf("%s: %v", path, err)
	}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"variant", s.Summary.Variant != nil}, {"mutant", s.Mutant != nil}, {"bound", s.Bound != nil},
		{"schedules", s.Schedules != nil}, {"violations", s.Violations != nil},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return Shard{}, fmt.Errorf("%s: not an fgcheck explore --json summary (no %s)", path, strings.Join(missing, ", "))
	}
	if s.Summary.Shard != nil && *s.Summary.Shard != fmt.Sprintf("%d/%d", i, n) {
		return Shard{}, fmt.Errorf("%s: named for shard %d/%d, but the summary is of shard %q", path, i, n, *s.Summary.Shard)
	}
	return s, nil
}

// LoadAll loads every file named, and every explore-*.json file of every
// directory named.
func LoadAll(args []string) ([]Shard, error) {
	var paths []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			paths = append(paths, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "explore-*.json"))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no shard summaries (explore-<variant>-<i>-of-<n>.json) in %s", strings.Join(args, ", "))
	}
	var out []Shard
	for _, p := range paths {
		s, err := Load(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// VariantReport is the merged view of one variant's shards.
type VariantReport struct {
	Variant    string
	N          int   // shard count (0 when the shards disagree)
	Shards     int   // summaries found
	Schedules  int64 // their sum
	Want       int64 // the pinned total (-1: none)
	Violations int64 // their sum
	Known      []string
	Seconds    float64 // sum of the shards' wall-clock seconds
	MaxSeconds float64 // the slowest shard
	Complete   bool    // every shard 0..N-1 exactly once
}

// Report is the result of Check: one entry per variant seen or pinned, and
// every problem found, each a sentence. The check passes when Problems is
// empty.
type Report struct {
	Variants []VariantReport
	Problems []string
}

// Check merges the shards and checks them against pins: every pinned
// variant present; for each variant, one n (equal to wantN when wantN > 0),
// shards 0..n-1 each exactly once, one bound, no mutant, no violation; and,
// every shard finished (its summary's complete is not false), and, when the
// shard set is complete, the schedule counts summing to the pinned total and
// the known findings' union equal to the pinned list.
func Check(shards []Shard, pins map[string]Pin, wantN int) Report {
	var r Report
	bad := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	byVariant := map[string][]Shard{}
	for _, s := range shards {
		if *s.Summary.Variant != s.Variant {
			bad("%s: named for variant %s but holds a summary of variant %s", s.Path, s.Variant, *s.Summary.Variant)
		}
		if *s.Mutant != "" {
			bad("%s: explored with mutant %s; the std pins are for the baseline", s.Path, *s.Mutant)
		}
		byVariant[s.Variant] = append(byVariant[s.Variant], s)
	}
	var names []string
	for v := range byVariant {
		names = append(names, v)
	}
	for v := range pins {
		if _, ok := byVariant[v]; !ok {
			names = append(names, v)
		}
	}
	sort.Strings(names)
	for _, v := range names {
		group := byVariant[v]
		sort.Slice(group, func(a, b int) bool { return group[a].I < group[b].I })
		vr := VariantReport{Variant: v, Shards: len(group), Want: -1}
		pin, pinned := pins[v]
		if pinned {
			vr.Want = pin.Schedules
		} else {
			bad("variant %s: no pinned std total (pinned: %s)", v, strings.Join(sortedKeys(pins), ", "))
		}
		if len(group) == 0 {
			bad("variant %s: no shard summaries", v)
			r.Variants = append(r.Variants, vr)
			continue
		}
		ns := map[int]bool{}
		bounds := map[string]bool{}
		seen := map[int][]string{}
		known := map[string]bool{}
		complete := true
		for _, s := range group {
			ns[s.N] = true
			bounds[*s.Bound] = true
			seen[s.I] = append(seen[s.I], s.Path)
			vr.Schedules += *s.Schedules
			vr.Violations += *s.Violations
			vr.Seconds += s.Seconds
			vr.MaxSeconds = max(vr.MaxSeconds, s.Seconds)
			for _, k := range s.Known {
				known[k] = true
			}
			if s.Complete != nil && !*s.Complete {
				bad("variant %s shard %d/%d did not explore its whole shard: %s (%s)", v, s.I, s.N, s.Stopped, s.Path)
				complete = false
			}
			if *s.Violations > 0 {
				first := ""
				if fv := s.FirstViolation; fv != nil {
					first = fmt.Sprintf("; first: %s: %s", fv.Oracle, fv.Message)
				}
				bad("variant %s shard %d/%d: %d violations%s (%s)", v, s.I, s.N, *s.Violations, first, s.Path)
			}
		}
		vr.Known = sortedKeys(known)
		if len(ns) != 1 {
			bad("variant %s: shards disagree on n: %v", v, sortedKeys(ns))
			complete = false
		} else {
			vr.N = group[0].N
			if wantN > 0 && vr.N != wantN {
				bad("variant %s: sharded %d ways, want %d", v, vr.N, wantN)
			}
			for i := 0; i < vr.N; i++ {
				switch paths := seen[i]; len(paths) {
				case 0:
					bad("variant %s: shard %d/%d missing", v, i, vr.N)
					complete = false
				case 1:
				default:
					bad("variant %s: shard %d/%d summarized %d times (%s)", v, i, vr.N, len(paths), strings.Join(paths, ", "))
					complete = false
				}
			}
		}
		if len(bounds) != 1 {
			bad("variant %s: shards explored different bounds: %q", v, sortedKeys(bounds))
			complete = false
		}
		vr.Complete = complete
		if complete && pinned {
			if vr.Schedules != pin.Schedules {
				bad("variant %s: the %d shards explored %d schedules in all, pinned %d (%+d)", v, vr.N, vr.Schedules, pin.Schedules, vr.Schedules-pin.Schedules)
			}
			if !slices.Equal(vr.Known, pin.Known) {
				bad("variant %s: the shards hit the known findings %q, pinned %q", v, vr.Known, pin.Known)
			}
		}
		r.Variants = append(r.Variants, vr)
	}
	return r
}

func sortedKeys[K interface{ ~int | ~string }, V any](m map[K]V) []K {
	var out []K
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Text renders the report as a table and the problem list.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %6s %10s %10s %10s %9s %9s  %s\n", "variant", "shards", "schedules", "pinned", "violations", "seconds", "slowest", "known")
	for _, v := range r.Variants {
		want := "-"
		if v.Want >= 0 {
			want = strconv.FormatInt(v.Want, 10)
		}
		shards := fmt.Sprintf("%d/%d", v.Shards, v.N)
		fmt.Fprintf(&b, "%-8s %6s %10d %10s %10d %9.3f %9.3f  %s\n", v.Variant, shards, v.Schedules, want, v.Violations, v.Seconds, v.MaxSeconds, strings.Join(v.Known, ", "))
	}
	if len(r.Problems) == 0 {
		b.WriteString("ok: every variant's shards add up to its pinned total, no violation\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "FAIL: %s\n", p)
	}
	return b.String()
}

// Markdown renders the report for a GitHub job summary.
func (r Report) Markdown() string {
	var b strings.Builder
	b.WriteString("### Sharded std exploration\n\n| variant | shards | schedules | pinned | violations | seconds (sum) | slowest shard | known findings |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, v := range r.Variants {
		want := "none"
		if v.Want >= 0 {
			want = strconv.FormatInt(v.Want, 10)
		}
		fmt.Fprintf(&b, "| %s | %d/%d | %d | %s | %d | %.3f | %.3f | %s |\n", v.Variant, v.Shards, v.N, v.Schedules, want, v.Violations, v.Seconds, v.MaxSeconds, strings.Join(v.Known, ", "))
	}
	b.WriteString("\n")
	if len(r.Problems) == 0 {
		b.WriteString("All checks passed.\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "- **FAIL** %s\n", p)
	}
	return b.String()
}
