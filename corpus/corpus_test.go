package corpus_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/corpus"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func load(t *testing.T) []*corpus.Entry {
	t.Helper()
	entries, err := corpus.Load(".")
	if err != nil {
		t.Fatalf("loading the corpus: %v", err)
	}
	if len(entries) == 0 {
		t.Fatal("no corpus files")
	}
	return entries
}

// Every corpus file replays to its verdict, and passes on every baseline.
func TestCorpus(t *testing.T) {
	for _, e := range load(t) {
		t.Run(e.Name, func(t *testing.T) {
			data, err := os.ReadFile(e.Path)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.File.Format(); !bytes.Equal(got, data) {
				t.Errorf("%s is not in canonical form (run fgcheck fmt -w %s)", e.Path, e.Path)
			}
			if e.File.Scenario.Name != e.Name {
				t.Errorf("%s: scenario %q, want the file's name %q", e.Path, e.File.Scenario.Name, e.Name)
			}
			err = corpus.Check(e)
			var broken *corpus.FixBrokenError
			switch {
			case errors.As(err, &broken):
				t.Skipf("expected failure: %v", err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// README.md indexes every file and names no other.
func TestCorpusIndex(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := corpus.CheckIndex(string(readme), load(t)); err != nil {
		t.Error(err)
	}
}

// Every non-control mutant of the catalogue has exactly one file, no
// control has one, and every known kernel finding has at least one.
func TestCorpusCoversCatalogue(t *testing.T) {
	byMutant := map[fgraph.Mutant][]string{}
	byFinding := map[string][]string{}
	for _, e := range load(t) {
		if e.Finding != "" {
			byFinding[e.Finding] = append(byFinding[e.Finding], e.Name)
		} else {
			byMutant[e.File.Scenario.Mutant] = append(byMutant[e.File.Scenario.Mutant], e.Name)
		}
	}
	for _, mi := range fgraph.Catalogue {
		got := byMutant[mi.Mutant]
		switch {
		case mi.Control && len(got) > 0:
			t.Errorf("control %s has corpus files %v; controls must survive", mi.Name, got)
		case !mi.Control && len(got) != 1:
			t.Errorf("mutant %s has %d corpus files %v, want exactly one (run fgcheck mutants --out DIR, then curate)", mi.Name, len(got), got)
		}
	}
	for _, k := range harness.KnownFindings {
		if len(byFinding[k.Name]) == 0 {
			t.Errorf("known finding %s has no corpus file (minimize one: fgcheck minimize --known %s FILE)", k.Name, k.Name)
		}
	}
}

const goodFile = `fgcheck v1
# A story.
scenario t
variant latest
layout frame=0 stack=64
mutant M-push-2
user u1 filter=* accept=* data=0
setup u1
task ops=(call 1)
irq ops=(call 10, ret)
bound K=1 D=1 R=0 E=0
expect violation model
irq id=1 in=task0 at=push.w2#1
`

// A malformed file is reported, with every other malformed file, by Load.
func TestLoadRejectsMalformed(t *testing.T) {
	dir := t.TempDir()
	bad := map[string]string{
		"parse.txt":      strings.Replace(goodFile, "call 1", "call x", 1),
		"no-expect.txt":  strings.Replace(goodFile, "expect violation model\n", "", 1),
		"pass.txt":       strings.Replace(goodFile, "expect violation model", "expect pass", 1),
		"no-story.txt":   strings.Replace(goodFile, "# A story.\n", "", 1),
		"neither.txt":    strings.Replace(goodFile, "mutant M-push-2\n", "", 1),
		"unknown.txt":    strings.Replace(strings.Replace(goodFile, "mutant M-push-2\n", "", 1), "# A story.", "# finding: no-such-finding", 1),
		"both.txt":       strings.Replace(goodFile, "# A story.", "# finding: F1-bit0", 1),
		"two-finds.txt":  strings.Replace(strings.Replace(goodFile, "mutant M-push-2\n", "", 1), "# A story.", "# finding: F1-bit0\n# finding: F1-bit0", 1),
		"unknown-op.txt": "not a schedule file\n",
	}
	for name, text := range bad {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "good.txt"), []byte(goodFile), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := corpus.Load(dir)
	var me *corpus.MalformedError
	if !errors.As(err, &me) {
		t.Fatalf("Load: %v, want a *MalformedError", err)
	}
	if len(me.Errs) != len(bad) {
		t.Errorf("%d malformed files reported, want %d:\n%v", len(me.Errs), len(bad), err)
	}
	if len(entries) != 1 || entries[0].Name != "good" {
		t.Errorf("loaded %d entries, want only good.txt", len(entries))
	}
	if err := corpus.Check(entries[0]); err != nil {
		t.Errorf("good.txt: %v", err)
	}
}

// A file whose bug no longer shows the way it says fails loudly.
func TestCheckDetectsStale(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"other oracle", "expect violation model", "expect violation unwinder", "want violation unwinder"},
		{"event never fires", "at=push.w2#1", "at=push.w2#9", "passes"},
		{"no mutant", "mutant M-push-2\n", "", "neither a mutant line"},
		{"other mutant", "mutant M-push-2", "mutant M-push-1", "want violation model"},
		{"event that never fires", "irq id=1 in=task0 at=push.w2#1\n", "irq id=1 in=task0 at=push.w2#1\nirq id=2 in=task0 at=ret.depth#5\n", "stale: 1 of the 2 events fired"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "stale.txt")
			if err := os.WriteFile(p, []byte(strings.Replace(goodFile, c.from, c.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			e, err := corpus.LoadFile(p)
			if err == nil {
				err = corpus.Check(e)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	f, err := harness.ParseFile("good", []byte(goodFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "good.txt")
	if err := corpus.WriteFile(p, f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil || string(data) != string(f.Format()) {
		t.Fatalf("read back %q, %v", data, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files, want 1 (no temporary left)", len(ents))
	}
	if err := corpus.WriteFile(filepath.Join(dir, "no", "x.txt"), f); err == nil {
		t.Error("no error writing into a missing directory")
	}
}
