package harness

// The checkpoint file (fgcheck explore --checkpoint): a versioned header
// line with a SHA-256 of the body, then a JSON body holding the explorer's
// state and what it belongs to. A file is trusted only after the checksum,
// a strict decode and Checkpoint.Validate against the exploration it
// would resume.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// CheckpointFormat is the format the header line names; a file of another
// (older) format is refused.
// v4 (6 Dec 2026): the pieces of two workers or more are cut along the
// default path (pieces.go), not by a hash; a v3 file's paths would name
// options of other pieces.
const CheckpointFormat = "fgcheck-checkpoint v4"

// MaxCheckpointBytes caps a checkpoint file: the state of 4,096 pieces with
// paths of 1,000 choice points is under 40 MB.
const MaxCheckpointBytes = 64 << 20

// Limits of a checkpoint's contents.
const (
	maxPieces    = 1 << 12
	maxPathSteps = 1 << 16
	maxCount     = 1 << 50 // schedules, points: far beyond any run
)

// CheckpointFile is the content of a --checkpoint file.
type CheckpointFile struct {
	Tool        string `json:"tool"`
	Fingerprint string `json:"fingerprint"`
	// Scenario is the exploration's scenario in the schedule format (no
	// schedule lines), for people and for the fingerprint.
	Scenario string `json:"scenario"`
	Strict   bool   `json:"strict"`
	Command  string `json:"command"`
	// Seconds is the exploring time of all legs so far.
	Seconds float64 `json:"seconds"`
	// Failing is the number of failing schedules recorded so far.
	Failing int64       `json:"failing"`
	State   *Checkpoint `json:"state"`
}

// Marshal encodes the file: the header line with the body's SHA-256, then
// the JSON body.
func (f *CheckpointFile) Marshal() ([]byte, error) {
	body, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	sum := sha256.Sum256(body)
	head := fmt.Sprintf("%s sha256=%s\n", CheckpointFormat, hex.EncodeToString(sum[:]))
	return append([]byte(head), body...), nil
}

// ParseCheckpointFile decodes and checks a file's format, checksum and
// structure (Validate checks the state against an exploration).
func ParseCheckpointFile(data []byte) (*CheckpointFile, error) {
	if len(data) > MaxCheckpointBytes {
		return nil, fmt.Errorf("%d bytes, larger than any checkpoint (at most %d)", len(data), MaxCheckpointBytes)
	}
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, errors.New("not a checkpoint file (no header line)")
	}
	if bytes.HasPrefix(head, []byte("{")) {
		if bytes.Contains(head, []byte(`"format":"fgcheck-checkpoint v1"`)) {
			return nil, fmt.Errorf("format fgcheck-checkpoint v1, written by an older fgcheck without checksums; want %s: remove the file to start again", CheckpointFormat)
		}
		return nil, errors.New("not a checkpoint file")
	}
	format, sumText, ok := bytes.Cut(head, []byte(" sha256="))
	if !ok || !bytes.HasPrefix(format, []byte("fgcheck-checkpoint ")) {
		return nil, fmt.Errorf("not a checkpoint file (header %q)", quoteShort(head))
	}
	if string(format) == "fgcheck-checkpoint v3" {
		return nil, fmt.Errorf("format fgcheck-checkpoint v3, written by an older fgcheck whose pieces were cut by a hash; want %s: remove the file to start again", CheckpointFormat)
	}
	if string(format) == "fgcheck-checkpoint v2" {
		return nil, fmt.Errorf("format fgcheck-checkpoint v2, written by an older fgcheck without the per-model counts; want %s: remove the file to start again", CheckpointFormat)
	}
	if string(format) != CheckpointFormat {
		return nil, fmt.Errorf("format %q, want %q", quoteShort(format), CheckpointFormat)
	}
	want, err := hex.DecodeString(string(sumText))
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("header: bad checksum %q", quoteShort(sumText))
	}
	if got := sha256.Sum256(body); !bytes.Equal(got[:], want) {
		return nil, errors.New("checksum mismatch: the file was changed or damaged after fgcheck wrote it")
	}
	var f CheckpointFile
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("body: data after the JSON object")
	}
	if f.State == nil {
		return nil, errors.New("no explorer state")
	}
	if f.Seconds < 0 || f.Seconds > 1e12 || f.Failing < 0 || f.Failing > maxCount {
		return nil, fmt.Errorf("bad totals: seconds %v, failing %d", f.Seconds, f.Failing)
	}
	return &f, nil
}

// Validate checks that c can resume the exploration of sc with opt: its
// shard, its counts (non-negative, consistent, known findings from the
// table), and each piece's DFS path against the choice points a run of sc
// really offers (the option count at every step, a choice the DFS can
// make there, the shard's ownership rule).
func (c *Checkpoint) Validate(sc *Scenario, opt ExploreOptions) error {
	if c.Shard != opt.Shard || c.Shards != opt.Shards {
		return fmt.Errorf("a checkpoint of shard %d/%d cannot resume shard %d/%d", c.Shard, c.Shards, opt.Shard, opt.Shards)
	}
	if n := len(c.Pieces); n == 0 || n > maxPieces || n > 1 && (n%subShards != 0 || n < 2*subShards) {
		return fmt.Errorf("%d pieces; Explore cuts a shard into 1 (one worker) or workers*%d (at most %d)", n, subShards, maxPieces)
	}
	shards := max(opt.Shards, 1)
	var pm *pieceMap // which piece owns which options (pieces.go)
	if shards*len(c.Pieces) > 1 {
		pm = newPieceMap(sc, opt, opt.Shard, shards, len(c.Pieces))
	}
	var r *runner
	for i := range c.Pieces {
		p := &c.Pieces[i]
		if err := p.checkCounts(); err != nil {
			return fmt.Errorf("piece %d: %v", i, err)
		}
		if len(p.Path) == 0 {
			continue
		}
		if r == nil {
			var err error
			if r, err = newRunner(sc); err != nil {
				return err
			}
			r.lazy = opt.LazyOrders       // its choice points are the lazy engine's
			r.mergeOpt = opt.MergeRemotes // and the merged placements'
		}
		if err := checkPath(r, opt.RunOptions, p.Path, pm, i); err != nil {
			return fmt.Errorf("piece %d: %v", i, err)
		}
	}
	return nil
}

// checkCounts checks a piece's counts and flags.
func (p *PieceState) checkCounts() error {
	switch {
	case p.Runs < 0 || p.Runs > maxCount:
		return fmt.Errorf("%d schedules", p.Runs)
	case p.Violations < 0 || p.Violations > p.Runs:
		return fmt.Errorf("%d violations in %d schedules", p.Violations, p.Runs)
	case p.Points < 0 || p.Points > maxCount:
		return fmt.Errorf("%d choice points", p.Points)
	case p.Done && (!p.Started || len(p.Path) > 0):
		return errors.New("done but not started, or done with a path to go on from")
	case !p.Started && (p.Runs != 0 || p.Points != 0 || len(p.Path) != 0 || len(p.Known) != 0):
		return errors.New("not started but has schedules or a path")
	case p.Started && !p.Done && len(p.Path) == 0 && p.Runs != 0:
		return errors.New("started and not done, with schedules but no path to go on from")
	case len(p.Path) > maxPathSteps:
		return fmt.Errorf("a path of %d choice points", len(p.Path))
	}
	names := make([]string, 0, len(p.Known))
	for name := range p.Known {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := p.Known[name]
		if !knownName(name) {
			return fmt.Errorf("unknown known finding %q", quoteShort([]byte(name)))
		}
		if n < 0 || n > p.Runs {
			return fmt.Errorf("known finding %s in %d of %d schedules", name, n, p.Runs)
		}
	}
	switch {
	case p.KbuildRuns < 0 || p.KbuildRuns > p.Runs:
		return fmt.Errorf("%d schedules of kbuild's model in %d", p.KbuildRuns, p.Runs)
	case p.KbuildViolations < 0 || p.KbuildViolations > p.KbuildRuns || p.KbuildViolations > p.Violations:
		return fmt.Errorf("%d violations under kbuild's model in %d of its schedules (%d in all)", p.KbuildViolations, p.KbuildRuns, p.Violations)
	}
	kn := make([]string, 0, len(p.KbuildKnown))
	for name := range p.KbuildKnown {
		kn = append(kn, name)
	}
	sort.Strings(kn) // the first bad one, whatever the map order
	for _, name := range kn {
		n := p.KbuildKnown[name]
		if !knownName(name) || n < 0 || n > p.KbuildRuns || n > p.Known[name] {
			return fmt.Errorf("known finding %q in %d of kbuild's %d schedules (%d in all)", quoteShort([]byte(name)), n, p.KbuildRuns, p.Known[name])
		}
	}
	kb := make([]string, 0, len(p.KnownBy))
	for name := range p.KnownBy {
		kb = append(kb, name)
	}
	sort.Strings(kb)
	for _, name := range kb {
		if p.Known[name] == 0 || len(p.KnownBy[name]) == 0 {
			return fmt.Errorf("known finding %q reported by %d oracles in %d schedules", quoteShort([]byte(name)), len(p.KnownBy[name]), p.Known[name])
		}
		for _, o := range p.KnownBy[name] {
			if _, ok := oracleIndex[o]; !ok {
				return fmt.Errorf("known finding %s reported by unknown oracle %q", name, quoteShort([]byte(o)))
			}
		}
	}
	for s := range p.Coverage.Hits {
		for _, n := range p.Coverage.Hits[s] {
			if n < 0 || n > 16*(p.Runs+1) { // at most K=16 per run
				return fmt.Errorf("coverage: %d interrupts in %d schedules", n, p.Runs)
			}
		}
		if p.Coverage.Commits[s] < 0 {
			return fmt.Errorf("coverage: %d commits", p.Coverage.Commits[s])
		}
	}
	return nil
}

func knownName(name string) bool {
	for _, k := range KnownFindings {
		if k.Name == name {
			return true
		}
	}
	return false
}

// checkPath checks a piece's path as the DFS of piece of pm (nil: one
// piece owns every option) would have built it, then replays it: every
// step must meet a choice point with the option count it records, and the
// run must reach its last step.
func checkPath(r *runner, ro RunOptions, path [][3]int, pm *pieceMap, piece int) error {
	zero := true
	for i, st := range path {
		c, n, lim := st[0], st[1], st[2]
		switch {
		case n < 2:
			return fmt.Errorf("step %d: %d options (a choice point has at least 2)", i, n)
		case c < 0 || c >= n:
			return fmt.Errorf("step %d: choice %d of %d options", i, c, n)
		case lim != n && lim != -1:
			return fmt.Errorf("step %d: %d options explored of %d (want all, or -1: the shard's own)", i, lim, n)
		case (lim == -1) != (pm != nil && zero):
			return fmt.Errorf("step %d: explored options %d where the DFS sets %d", i, lim, map[bool]int{true: -1, false: n}[pm != nil && zero])
		case lim == -1 && c != 0 && !pm.owns(piece, i, c):
			return fmt.Errorf("step %d: choice %d belongs to another shard", i, c)
		}
		zero = zero && c == 0
	}
	pc := &pathCheck{path: path}
	ro.Coverage, ro.Trace = nil, false
	r.run(pc, ro)
	if pc.err != nil {
		return pc.err
	}
	if pc.pos < len(path) {
		return fmt.Errorf("a path of %d choice points; the run it names offers %d", len(path), pc.pos)
	}
	return nil
}

// pathCheck replays a checkpoint path, checking the option counts.
type pathCheck struct {
	path [][3]int
	pos  int
	err  error
}

func (c *pathCheck) Choose(p *Point, opts []Option) int {
	if c.err != nil || c.pos >= len(c.path) {
		return 0
	}
	st := c.path[c.pos]
	if st[1] != len(opts) {
		c.err = fmt.Errorf("step %d: the checkpoint says %d options, the choice point (%s at %s) offers %d", c.pos, st[1], p.Ctx, p.Pos, len(opts))
		return 0
	}
	c.pos++
	return st[0]
}

// quoteShort is at most the first 40 bytes of b, for error messages.
func quoteShort(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
