package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// This file holds only FuzzCheckpointFile and what it needs: the
// ClusterFuzzLite build (.clusterfuzzlite/build.sh) renames it into the
// package, without the other test files.

// ckptScenario is the checkpoint fuzz target's exploration: small enough
// that resuming it runs in a millisecond (one IRQ in a two-call task, two
// users, one reordered region, a remote unregister).
func ckptScenario() *Scenario {
	return &Scenario{
		Name: "ckpt", Variant: fgraph.Latest, StackWords: 64,
		Users:   []User{{Name: "u0"}, {Name: "u1", DataBytes: 8}},
		Setup:   []int{0, 1},
		Tasks:   [][]Op{{{OpCall, 1}, {OpCall, 2}, {OpRet, 0}, {OpRet, 0}}},
		IRQ:     []Op{{OpCall, 10}, {OpRet, 0}},
		Remotes: []Remote{{Kind: RemoteUnregister, User: 1}},
		Bound:   Bound{K: 1, D: 1, R: 1, E: 1, C: 2},
	}
}

// ckptSeeds are real checkpoint files of ckptScenario's exploration, cut at
// a few points, for one and two workers and for shard 1 of 2.
func ckptSeeds(tb interface{ Fatal(...any) }) [][]byte {
	var out [][]byte
	for _, c := range []struct {
		workers, shard, shards int
		maxRuns                int64
	}{{1, 0, 0, 7}, {1, 0, 0, 0}, {2, 0, 0, 40}, {1, 1, 2, 5}} {
		var last *Checkpoint
		opt := ExploreOptions{Workers: c.workers, Shard: c.shard, Shards: c.shards, MaxRuns: c.maxRuns,
			CheckpointEvery: 3, Checkpoint: func(cp *Checkpoint) { last = cp }}
		if _, err := Explore(ckptScenario(), opt); err != nil {
			tb.Fatal(err)
		}
		data, err := (&CheckpointFile{Tool: "fuzz", Fingerprint: "f", Scenario: "ckpt", State: last}).Marshal()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// FuzzCheckpointFile: the checkpoint loader never panics; a file it
// accepts, and whose state Validate accepts for the exploration, resumes
// without error and counts at least the schedules it held. Each input is
// tried as a whole file, and as a body under a header with its right
// checksum (else the checksum would hide the body's checks from the
// fuzzer).
func FuzzCheckpointFile(f *testing.F) {
	for _, s := range ckptSeeds(f) {
		f.Add(s)
		_, body, _ := bytes.Cut(s, []byte("\n"))
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCheckpointInput(t, data)
		sum := sha256.Sum256(data)
		checkCheckpointInput(t, append([]byte(CheckpointFormat+" sha256="+hex.EncodeToString(sum[:])+"\n"), data...))
	})
}

func checkCheckpointInput(t *testing.T, data []byte) {
	cf, err := ParseCheckpointFile(data)
	if err != nil {
		return
	}
	cp := cf.State
	sc := ckptScenario()
	opt := ExploreOptions{Shard: cp.Shard, Shards: cp.Shards}
	if cp.Shards < 0 || cp.Shards > 4 || cp.Shard < 0 || cp.Shards > 0 && cp.Shard >= cp.Shards || cp.Shards == 0 && cp.Shard != 0 {
		opt.Shard, opt.Shards = 0, 0
	}
	if len(cp.Pieces) > 64 {
		return // each piece walks the all-default spine: too slow to resume here
	}
	if err := cp.Validate(sc, opt); err != nil {
		return
	}
	held := cp.Runs()
	opt.Resume = cp
	sum, err := Explore(sc, opt)
	if err != nil {
		t.Fatalf("a validated checkpoint does not resume: %v", err)
	}
	if sum.Runs < held {
		t.Fatalf("resumed to %d schedules from a checkpoint holding %d", sum.Runs, held)
	}
}
