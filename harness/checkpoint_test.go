package harness

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fgcheck/fgcheck/fgraph"
)

// stdCheckpoint is the checkpoint of std on latest stopped after n
// schedules with the given workers.
func stdCheckpoint(t *testing.T, workers int, n int64) *Checkpoint {
	t.Helper()
	var last *Checkpoint
	_, err := Explore(Standard(fgraph.Latest), ExploreOptions{Workers: workers, MaxRuns: n, CheckpointEvery: 500,
		Checkpoint: func(c *Checkpoint) { last = c }})
	if err != nil || last == nil {
		t.Fatalf("explore: %v", err)
	}
	return last
}

func TestCheckpointFileRoundTrip(t *testing.T) {
	cp := stdCheckpoint(t, 2, 3000)
	in := &CheckpointFile{Tool: "t", Fingerprint: "ab", Scenario: "sc", Command: "fgcheck explore", Seconds: 1.5, Failing: 0, State: cp}
	data, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(CheckpointFormat+" sha256=")) {
		t.Errorf("header %q", data[:40])
	}
	out, err := ParseCheckpointFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
	if err := out.State.Validate(Standard(fgraph.Latest), ExploreOptions{}); err != nil {
		t.Errorf("a real checkpoint does not validate: %v", err)
	}
}

// TestCheckpointByteFlips flips one random byte of a real checkpoint file
// at a time: every flip is refused, or leaves a file that means the same.
func TestCheckpointByteFlips(t *testing.T) {
	cp := stdCheckpoint(t, 2, 3000)
	data, err := (&CheckpointFile{Tool: "t", Fingerprint: "ab", Scenario: "sc", State: cp}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	refused := 0
	const flips = 500
	for i := 0; i < flips; i++ {
		b := bytes.Clone(data)
		j := rng.IntN(len(b))
		b[j] ^= byte(1 + rng.IntN(255))
		f, err := ParseCheckpointFile(b)
		if err == nil {
			err = f.State.Validate(Standard(fgraph.Latest), ExploreOptions{})
		}
		if err != nil {
			refused++
			continue
		}
		if d := cmp.Diff(cp, f.State); d != "" {
			t.Errorf("flip of byte %d (%q) accepted with another state:\n%s", j, data[j], d)
		}
	}
	if refused < flips*9/10 {
		t.Errorf("only %d of %d flips refused", refused, flips)
	}
}

// TestCheckpointHandEdits: edits that keep the checksum right (recomputed,
// as a careful hand edit would) are refused by Validate when the state
// does not fit the exploration.
func TestCheckpointHandEdits(t *testing.T) {
	sc := Standard(fgraph.Latest)
	base := stdCheckpoint(t, 2, 3000)
	// A piece in progress with a path past its first choice of its own
	// (a step the DFS explores whole, lim >= 0), for the path edits. Which
	// pieces the two workers have started depends on their timing; a
	// piece stopped right at its own first choice has only steps of the
	// shared default path (lim -1), after which ten appended default steps
	// of two options can be a real path (each a point with two options
	// left), and an edited option count is refused by the lim check first.
	prog := -1
	for i, p := range base.Pieces {
		if !p.Started || p.Done || len(p.Path) <= 2 || p.Path[len(p.Path)-1][2] < 0 {
			continue
		}
		prog = i
		break
	}
	if prog < 0 {
		t.Fatal("no piece in progress")
	}
	tests := []struct {
		name, want string
		edit       func(c *Checkpoint)
	}{
		{"negative schedules", "-5 schedules", func(c *Checkpoint) { c.Pieces[prog].Runs = -5 }},
		{"huge schedules", "schedules", func(c *Checkpoint) { c.Pieces[prog].Runs = 1 << 60 }},
		{"violations above schedules", "violations in", func(c *Checkpoint) { c.Pieces[prog].Violations = c.Pieces[prog].Runs + 1 }},
		{"unknown finding", `unknown known finding "no-such-finding"`, func(c *Checkpoint) {
			c.Pieces[prog].Known = map[string]int64{"no-such-finding": 1}
		}},
		{"finding above schedules", "known finding F1-bit0 in", func(c *Checkpoint) {
			c.Pieces[prog].Known = map[string]int64{"F1-bit0": c.Pieces[prog].Runs + 1}
		}},
		{"kbuild schedules above all", "schedules of kbuild's model in", func(c *Checkpoint) { c.Pieces[prog].KbuildRuns = c.Pieces[prog].Runs + 1 }},
		{"kbuild violations above all", "violations under kbuild's model", func(c *Checkpoint) {
			c.Pieces[prog].KbuildViolations = c.Pieces[prog].Violations + 1
		}},
		{"kbuild finding above all", `known finding "F1-bit0" in`, func(c *Checkpoint) {
			c.Pieces[prog].KbuildKnown = map[string]int64{"F1-bit0": c.Pieces[prog].Known["F1-bit0"] + 1}
		}},
		{"pairs of a finding not counted", `known finding "reserve-window" reported by 1 oracles in 0 schedules`, func(c *Checkpoint) {
			delete(c.Pieces[prog].Known, "reserve-window")
			delete(c.Pieces[prog].KbuildKnown, "reserve-window")
			c.Pieces[prog].KnownBy = map[string][]string{"reserve-window": {OracleRetAddr}}
		}},
		{"pairs of an unknown oracle", `reported by unknown oracle "no-such-oracle"`, func(c *Checkpoint) {
			c.Pieces[prog].KnownBy = map[string][]string{"F1-bit0": {"no-such-oracle"}}
		}},
		{"early done", "done with a path", func(c *Checkpoint) { c.Pieces[prog].Done = true }},
		{"not started with schedules", "not started", func(c *Checkpoint) { c.Pieces[prog].Started = false }},
		{"impossible option", "choice 9 of", func(c *Checkpoint) { c.Pieces[prog].Path[1][0] = 9 }},
		// One option more than the run offers, with a choice any count
		// allows (the choice made there may be past a smaller count).
		{"option count", "the checkpoint says", func(c *Checkpoint) {
			p := c.Pieces[prog].Path
			n := p[len(p)-1][1] + 1
			p[len(p)-1] = [3]int{0, n, n}
		}},
		{"explored count", "options explored", func(c *Checkpoint) { c.Pieces[prog].Path[0][2] = 1 }},
		{"path too long", "a path of", func(c *Checkpoint) {
			c.Pieces[prog].Path = append(c.Pieces[prog].Path, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2}, [3]int{0, 2, 2})
		}},
		{"no pieces", "0 pieces", func(c *Checkpoint) { c.Pieces = nil }},
		{"pieces dropped", "3 pieces", func(c *Checkpoint) { c.Pieces = c.Pieces[:3] }},
		{"half the pieces dropped", "16 pieces", func(c *Checkpoint) { c.Pieces = c.Pieces[:16] }},
		{"other shard", "cannot resume shard", func(c *Checkpoint) { c.Shards = 4 }},
		{"negative coverage", "coverage", func(c *Checkpoint) { c.Pieces[prog].Coverage.Commits[3] = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base.clone()
			tt.edit(c)
			data, err := (&CheckpointFile{State: c}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseCheckpointFile(data)
			if err == nil {
				err = f.State.Validate(sc, ExploreOptions{})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			// Explore refuses it too, before any work or save.
			saved := false
			if _, err := Explore(sc, ExploreOptions{Resume: c, Checkpoint: func(*Checkpoint) { saved = true }}); err == nil || saved {
				t.Errorf("Explore resumed it (error %v, saved %v)", err, saved)
			}
		})
	}
}

func TestCheckpointFileRefusals(t *testing.T) {
	good, err := (&CheckpointFile{State: stdCheckpoint(t, 1, 100)}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := bytes.Cut(good, []byte("\n"))
	v1, _ := json.Marshal(map[string]any{"format": "fgcheck-checkpoint v1", "state": map[string]any{}})
	tests := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "no header line", nil},
		{"junk", "not a checkpoint file", []byte("hello\nworld")},
		{"v1", "fgcheck-checkpoint v1, written by an older fgcheck", append(v1, '\n')},
		{"v3", "fgcheck-checkpoint v3, written by an older fgcheck whose pieces were cut by a hash", append([]byte(strings.Replace(string(head), "v4", "v3", 1)+"\n"), body...)},
		{"other version", `format "fgcheck-checkpoint v9"`, append([]byte(strings.Replace(string(head), "v4", "v9", 1)+"\n"), body...)},
		{"bad checksum text", "bad checksum", append([]byte(CheckpointFormat+" sha256=xyz\n"), body...)},
		{"damaged body", "checksum mismatch", append(append(bytes.Clone(head), '\n'), bytes.Replace(body, []byte(`"Runs":`), []byte(`"Runs":1`), 1)...)},
		{"too large", "larger than any checkpoint", make([]byte, MaxCheckpointBytes+1)},
	}
	for _, tt := range tests {
		if _, err := ParseCheckpointFile(tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestCheckpointResumeMatches: a checkpoint through the file format
// resumes to the totals of one uninterrupted run, with 1 and 2 workers.
func TestCheckpointResumeMatches(t *testing.T) {
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 1
	whole, err := Explore(sc, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		var cp *Checkpoint
		if _, err := Explore(sc, ExploreOptions{Workers: workers, MaxRuns: whole.Runs / 3, Checkpoint: func(c *Checkpoint) { cp = c }}); err != nil {
			t.Fatal(err)
		}
		data, _ := (&CheckpointFile{State: cp}).Marshal()
		f, err := ParseCheckpointFile(data)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Explore(sc, ExploreOptions{Workers: workers, Resume: f.State})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Runs != whole.Runs || !sum.Complete || !cmp.Equal(sum.Known, whole.Known) || !cmp.Equal(sum.KnownBy, whole.KnownBy) {
			t.Errorf("workers %d: resumed to %d schedules %v %v, want %d %v %v", workers, sum.Runs, sum.Known, sum.KnownBy, whole.Runs, whole.Known, whole.KnownBy)
		}
	}
}
