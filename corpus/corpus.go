package corpus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"github.com/fgcheck/fgcheck/mutants"
)

// Entry is one corpus file.
type Entry struct {
	// Name is the file name without ".txt": the interleaving, in litmus
	// style ("irq-before-w3-clobbers-ret").
	Name string
	Path string
	File *harness.File
	// Finding names the known kernel finding the file demonstrates (its
	// "# finding: NAME" comment); "" for a mutant's file.
	Finding string
}

// MalformedError lists every corpus file that could not be loaded.
type MalformedError struct {
	Errs []error
}

func (e *MalformedError) Error() string {
	s := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		s[i] = err.Error()
	}
	return fmt.Sprintf("%d malformed corpus files:\n\t%s", len(e.Errs), strings.Join(s, "\n\t"))
}

func (e *MalformedError) Unwrap() []error { return e.Errs }

// findingPrefix starts the comment that names a known finding.
const findingPrefix = "finding:"

// Load reads every *.txt file of dir, in name order. A file that does not
// parse, has no "expect violation" line, names an unknown finding, or is
// both a mutant's and a finding's file is malformed; Load returns the
// files that loaded and a *MalformedError listing all the others.
func Load(dir string) ([]*Entry, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var (
		out []*Entry
		bad []error
	)
	for _, p := range paths {
		e, err := LoadFile(p)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		out = append(out, e)
	}
	if len(bad) > 0 {
		return out, &MalformedError{Errs: bad}
	}
	return out, nil
}

// LoadFile reads one corpus file.
func LoadFile(path string) (*Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := harness.ParseFile(path, data)
	if err != nil {
		return nil, err
	}
	e := &Entry{Name: strings.TrimSuffix(filepath.Base(path), ".txt"), Path: path, File: f}
	for _, c := range f.Comments {
		if rest, ok := strings.CutPrefix(c, findingPrefix); ok {
			if e.Finding != "" {
				return nil, fmt.Errorf("%s: two %q comments", path, findingPrefix)
			}
			e.Finding = strings.TrimSpace(rest)
			if _, err := KnownFinding(e.Finding); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
		}
	}
	switch {
	case f.Expect == nil || f.Expect.Pass:
		return nil, fmt.Errorf("%s: a corpus file needs an \"expect violation ORACLE\" line", path)
	case e.Finding == "" && f.Scenario.Mutant == 0:
		return nil, fmt.Errorf("%s: neither a mutant line nor a %q comment: what does it demonstrate?", path, "# "+findingPrefix+" NAME")
	case e.Finding != "" && f.Scenario.Mutant != 0:
		return nil, fmt.Errorf("%s: both a mutant (%s) and a known finding (%s)", path, f.Scenario.Mutant, e.Finding)
	}
	if len(f.Comments) == 0 {
		return nil, fmt.Errorf("%s: no story: a corpus file opens with '#' comment lines", path)
	}
	return e, nil
}

// KnownFinding looks a known finding up by name.
func KnownFinding(name string) (harness.KnownFinding, error) {
	var names []string
	for _, k := range harness.KnownFindings {
		if k.Name == name {
			return k, nil
		}
		names = append(names, k.Name)
	}
	return harness.KnownFinding{}, fmt.Errorf("unknown known finding %q (known: %s)", name, strings.Join(names, ", "))
}

// Fixed is a finding file's scenario with the finding's fix applied: the
// first word of KnownFinding.Fix, a fix variant (harness.FixNames) or a
// kernel variant (latest, v6.11).
func Fixed(e *Entry) (*harness.Scenario, error) {
	k, err := KnownFinding(e.Finding)
	if err != nil {
		return nil, err
	}
	sc := *e.File.Scenario
	word, _, _ := strings.Cut(k.Fix, " ")
	if !sc.Fixes.Set(word) {
		v, err := fgraph.ParseVariant(word)
		if err != nil {
			return nil, fmt.Errorf("finding %s: fix %q is neither a fix variant nor a kernel variant", k.Name, k.Fix)
		}
		sc.Variant = v
	}
	return &sc, nil
}

// Check replays the entry and judges it (see the package comment). The
// error says which replay disagreed and how.
func Check(e *Entry) error {
	f := e.File
	want := f.Expect.Oracle
	replay := func(sc *harness.Scenario, strict bool) (*harness.Result, error) {
		res, err := harness.Replay(&harness.File{Scenario: sc, Schedule: f.Schedule}, harness.RunOptions{Strict: strict})
		if err != nil {
			return nil, fmt.Errorf("%s: replay on %s: %v", e.Path, sc.Variant, err)
		}
		return res, nil
	}
	if e.Finding == "" {
		res, err := replay(f.Scenario, false)
		if err != nil {
			return err
		}
		if err := judge(e, res, want, "replay"); err != nil {
			return err
		}
	} else {
		loose, err := replay(f.Scenario, false)
		if err != nil {
			return err
		}
		if loose.Failed() {
			return fmt.Errorf("%s: non-strict replay fails: %v", e.Path, loose.Violations[0])
		}
		if !slices.ContainsFunc(loose.Known, func(v harness.Violation) bool { return v.Known == e.Finding }) {
			return fmt.Errorf("%s: non-strict replay does not show the known finding %s (it shows %v)", e.Path, e.Finding, knownNames(loose))
		}
		strict, err := replay(f.Scenario, true)
		if err != nil {
			return err
		}
		if err := judge(e, strict, want, "strict replay"); err != nil {
			return err
		}
		// The strict failure must be one of this schedule's known findings.
		got := strict.Violations[0]
		if !slices.ContainsFunc(loose.Known, func(v harness.Violation) bool { return v.Oracle == got.Oracle && v.Msg == got.Msg }) {
			return fmt.Errorf("%s: strict replay fails with %v, which is none of the known findings of the non-strict replay (%v)", e.Path, got, knownNames(loose))
		}
		fixed, err := Fixed(e)
		if err != nil {
			return fmt.Errorf("%s: %v", e.Path, err)
		}
		res, err := replay(fixed, false)
		if err != nil {
			return err
		}
		k, _ := KnownFinding(e.Finding)
		if res.Failed() {
			// Is the fix variant itself broken (its program-order run
			// fails)? Then the file is not to blame.
			plain, err := harness.Replay(&harness.File{Scenario: fixed}, harness.RunOptions{})
			if err == nil && plain.Failed() {
				return &FixBrokenError{Path: e.Path, Finding: e.Finding, Fix: k.Fix, Violation: plain.Violations[0]}
			}
			return fmt.Errorf("%s: with the fix (%s) the replay fails: %v", e.Path, k.Fix, res.Violations[0])
		}
		if slices.ContainsFunc(res.Known, func(v harness.Violation) bool { return v.Known == e.Finding }) {
			return fmt.Errorf("%s: with the fix (%s) the finding %s still shows", e.Path, k.Fix, e.Finding)
		}
	}
	if err := mutants.PassesBaselines(f); err != nil {
		return fmt.Errorf("%s: %v", e.Path, err)
	}
	return nil
}

// FixBrokenError reports that a finding's fix variant fails on the file's
// scenario even without the schedule (its program-order run): a problem of
// the fix variant, not of the corpus file.
type FixBrokenError struct {
	Path, Finding, Fix string
	Violation          harness.Violation
}

func (e *FixBrokenError) Error() string {
	return fmt.Sprintf("%s: the fix of %s (%s) fails on this scenario even with no injected event: %v", e.Path, e.Finding, e.Fix, e.Violation)
}

// judge checks a replay that must fail with oracle want, with every event
// of the file fired.
func judge(e *Entry, res *harness.Result, want, what string) error {
	if !res.Failed() {
		return fmt.Errorf("%s: %s passes, want violation %s (stale: the bug no longer shows this way)", e.Path, what, want)
	}
	if got := res.Violations[0]; got.Oracle != want {
		return fmt.Errorf("%s: %s fails with %v, want violation %s", e.Path, what, got, want)
	}
	if got, listed := len(res.Schedule.Events), len(e.File.Schedule.Events); got != listed {
		return fmt.Errorf("%s: stale: %d of the %d events fired on %s (fired: %q)", e.Path, got, listed, what,
			harness.FormatSchedule(e.File.Scenario, res.Schedule))
	}
	if got, listed := len(res.Schedule.Orders), len(e.File.Schedule.Orders); got != listed {
		return fmt.Errorf("%s: stale: %d of the %d region orders applied on %s", e.Path, got, listed, what)
	}
	return nil
}

func knownNames(res *harness.Result) []string {
	var out []string
	for _, v := range res.Known {
		out = append(out, v.Known)
	}
	return out
}

// ErrNotIndexed is wrapped by CheckIndex's errors.
var ErrNotIndexed = errors.New("corpus index out of date")

// CheckIndex checks that the README text mentions every entry's file name
// (as "NAME.txt") and names no .txt file that is not an entry.
func CheckIndex(readme string, entries []*Entry) error {
	var errs []error
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name+".txt"] = true
		if !strings.Contains(readme, e.Name+".txt") {
			errs = append(errs, fmt.Errorf("%w: README.md does not index %s.txt", ErrNotIndexed, e.Name))
		}
	}
	for _, w := range strings.FieldsFunc(readme, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		if strings.HasSuffix(w, ".txt") && !have[w] {
			errs = append(errs, fmt.Errorf("%w: README.md names %s, which is not a corpus file", ErrNotIndexed, w))
		}
	}
	return errors.Join(errs...)
}

// WriteFile writes f to path atomically: through a temporary file in the
// same directory and a rename.
func WriteFile(path string, f *harness.File) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(f.Format())
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
