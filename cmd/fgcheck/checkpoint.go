package main

// The --checkpoint file of explore: the explorer's state (harness.Checkpoint)
// with what it belongs to. A run that finds the file resumes from it; a
// file of another exploration (other scenario, bound, variant, mutant,
// fixes, --strict or shard) is refused as misuse, so a stale checkpoint
// never mixes two runs' totals.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fgcheck/fgcheck/harness"
)

// checkpointFormat names the file format; a file with another is refused.
const checkpointFormat = "fgcheck-checkpoint v1"

// checkpointFile is the JSON content of a --checkpoint file.
type checkpointFile struct {
	Format      string `json:"format"`
	Tool        string `json:"tool"`
	Fingerprint string `json:"fingerprint"`
	// Scenario is the exploration's scenario in the schedule format (no
	// schedule lines), for people and for the fingerprint.
	Scenario string `json:"scenario"`
	Strict   bool   `json:"strict"`
	Command  string `json:"command"`
	// Seconds is the exploring time of all legs so far.
	Seconds float64 `json:"seconds"`
	// Failing is the number of failing schedules recorded so far (file
	// names go on numbering from it).
	Failing int64               `json:"failing"`
	State   *harness.Checkpoint `json:"state"`
}

// fingerprint identifies an exploration: scenario text, --strict and shard.
func fingerprint(scenario string, strict bool, shard, shards int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\nstrict=%v shard=%d/%d\n", scenario, strict, shard, shards)))
	return hex.EncodeToString(sum[:8])
}

// scenarioText is sc in the schedule format, without schedule lines.
func scenarioText(sc *harness.Scenario) string {
	f := &harness.File{Scenario: sc}
	return string(f.Format())
}

// loadCheckpoint reads path: nil when it does not exist, misuse errors
// when it is unreadable, malformed or of another exploration.
func loadCheckpoint(path string, want *checkpointFile) (*checkpointFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--checkpoint: %v", err)
	}
	var cf checkpointFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return nil, fmt.Errorf("--checkpoint %s: not a checkpoint file: %v", path, err)
	}
	switch {
	case cf.Format != checkpointFormat:
		return nil, fmt.Errorf("--checkpoint %s: format %q, want %q", path, cf.Format, checkpointFormat)
	case cf.State == nil || len(cf.State.Pieces) == 0:
		return nil, fmt.Errorf("--checkpoint %s: no explorer state", path)
	case cf.Fingerprint != want.Fingerprint:
		return nil, fmt.Errorf("--checkpoint %s: it belongs to another exploration (%s); this one differs in its scenario, bound, --strict or --shard: remove the file or give another name",
			path, cf.Command)
	}
	return &cf, nil
}

// save writes the file atomically.
func (cf *checkpointFile) save(path string) error {
	data, err := json.Marshal(cf)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'), 0o644)
}
