package main

// The live progress line of explore and random: schedules done, of how
// many when known, rate and ETA, drawn on stderr with
// github.com/schollz/progressbar while the engine runs. It is on by
// default only when stderr is a terminal (--progress auto), so CI logs,
// pipes and --json consumers see nothing of it.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/fgcheck/fgcheck/harness"
)

// progressHelp documents --progress.
const progressHelp = "progress line on stderr: `auto` (only when stderr is a terminal), on or off"

// drawProgress decides --progress (checked by huntFlags.check): auto
// draws only on a terminal.
func (h *huntFlags) drawProgress(stderr io.Writer) bool {
	switch h.progress {
	case "on":
		return true
	case "auto":
		f, ok := stderr.(*os.File)
		return ok && term.IsTerminal(int(f.Fd()))
	}
	return false
}

// progressLine draws p on w every tick until stop is called.
type progressLine struct {
	p     *harness.Progress
	total int64 // schedules to run when known (random), else 0
	bar   *progressbar.ProgressBar
	w     io.Writer
	base  int64 // schedules counted before this leg (a resumed checkpoint)
	start time.Time
	done  chan struct{}
	wg    sync.WaitGroup
}

// startProgress starts the display; total is the number of schedules when
// known (random's --runs, explore's --max-runs), else 0: an exhaustive
// exploration's size is not known before it ends (and an estimate from the
// DFS path is far off: its option-0 subtree holds most schedules), so
// explore shows a spinner with the count and the rate, and no ETA.
func startProgress(w io.Writer, p *harness.Progress, total, base int64) *progressLine {
	l := &progressLine{p: p, total: total, base: base, w: w, start: time.Now(), done: make(chan struct{})}
	max := int64(-1)
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(0),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetRenderBlankState(true),
	}
	if total > 0 {
		max = base + total
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("schedules"))
	}
	l.bar = progressbar.NewOptions64(max, opts...)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.draw()
			case <-l.done:
				return
			}
		}
	}()
	return l
}

// draw updates the bar from the counters.
func (l *progressLine) draw() {
	runs, bad := l.p.Runs.Load(), l.p.Violations.Load()
	var parts []string
	if l.total <= 0 {
		rate := 0.0
		if s := time.Since(l.start).Seconds(); s > 0 {
			rate = float64(runs-l.base) / s
		}
		parts = append(parts, fmt.Sprintf("%d schedules, %.0f/s", runs, rate))
	}
	if bad > 0 {
		parts = append(parts, plural(int(bad), "violation"))
	}
	l.bar.Describe(strings.Join(parts, ", "))
	l.bar.Set64(runs)
}

// stop draws the final state and ends the line.
func (l *progressLine) stop() {
	if l == nil {
		return
	}
	close(l.done)
	l.wg.Wait()
	l.draw()
	l.bar.Exit()
	fmt.Fprintln(l.w)
}
