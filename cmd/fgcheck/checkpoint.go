package main

// The --checkpoint file of explore: the explorer's state with what it
// belongs to (harness.CheckpointFile: a versioned, checksummed header line
// and a JSON body). A run that finds the file resumes from it; a file that
// is damaged, of another format, of another exploration (other scenario,
// bound, variant, mutant, fixes, --strict or shard), or whose state does
// not fit the scenario is refused as misuse and left as it is, so a stale
// or broken checkpoint never mixes into a run's totals.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fgcheck/fgcheck/harness"
)

type checkpointFile = harness.CheckpointFile

// fingerprint identifies an exploration: scenario text, --strict and shard.
func fingerprint(scenario string, strict bool, shard, shards int, lazy, merged bool) string {
	text := fmt.Sprintf("%s\nstrict=%v shard=%d/%d\n", scenario, strict, shard, shards)
	if lazy {
		// Another engine: its choice points are not the eager DFS's.
		text += "lazy-orders\n"
	}
	if merged {
		// Its yields offer fewer remote actions; since 5 Dec 2026 (sixth
		// session) fewer remote unwinds too (harness/unwindext.go), so a
		// checkpoint of the engine before is another exploration's.
		text += "merged-remotes\nunwind-across-commits\n"
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// scenarioText is sc in the schedule format, without schedule lines.
func scenarioText(sc *harness.Scenario) string {
	f := &harness.File{Scenario: sc}
	return string(f.Format())
}

// loadCheckpoint reads path: nil when it does not exist, misuse errors
// when it is unreadable, too large, damaged, malformed or of another
// exploration. (The state is checked against the scenario by the caller,
// harness.Checkpoint.Validate.)
func loadCheckpoint(path string, want *checkpointFile) (*checkpointFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--checkpoint: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("--checkpoint %s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, harness.MaxCheckpointBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--checkpoint: %v", err)
	}
	cf, err := harness.ParseCheckpointFile(data)
	if err != nil {
		return nil, fmt.Errorf("--checkpoint %s: %v (the file is left as it is)", path, err)
	}
	if cf.Fingerprint != want.Fingerprint {
		return nil, fmt.Errorf("--checkpoint %s: it belongs to another exploration (%s); this one differs in its scenario, bound, --strict, --shard, --orders or --remotes, or in the engine of the fgcheck that wrote it: remove the file or give another name",
			path, cf.Command)
	}
	return cf, nil
}

// saveCheckpoint writes the file atomically.
func saveCheckpoint(cf *checkpointFile, path string) error {
	data, err := cf.Marshal()
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o644)
}
