package harness

import (
	"fmt"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Pos is a symbolic position: the Occ-th yield point at Site inside one
// context (1-based). It survives unrelated code changes.
type Pos struct {
	Site fgraph.Site
	Occ  int
}

func (p Pos) String() string { return fmt.Sprintf("%s#%d", p.Site, p.Occ) }

// EventKind is what a schedule injects at a position.
type EventKind uint8

const (
	EvIRQ    EventKind = iota // an interrupt at nesting level 1 (runs Scenario.IRQ)
	EvNMI                     // an interrupt at level 2 or deeper (runs Scenario.NMI)
	EvRemote                  // a remote-CPU action
)

var eventNames = [...]string{"irq", "nmi", "remote"}

func (k EventKind) String() string { return eventNames[k] }

// Event is one injected interrupt or remote action.
type Event struct {
	// ID numbers events in firing order, from 1.
	ID   int
	Kind EventKind
	// In is the context the event fires in: "task0", "task1", ... or the
	// decimal ID of an interrupt event.
	In string
	At Pos
	// Remote is the index into Scenario.Remotes (EvRemote only).
	Remote int
	// Line is, on a compiled target, the fgraph.c line of the store the
	// event came right after (0 on the port, at a load or an op start; not
	// part of the file format: failing files say it in a comment).
	Line int
}

// Order is the commit order a run chose for one static region (named by the
// site of its first store in program order). Drop lists dead plain stores
// that the compiler eliminated.
type Order struct {
	Region fgraph.Site
	Sites  []fgraph.Site // commit order of the kept stores, by site
	Drop   []fgraph.Site
}

// Schedule is the non-default choices of one run.
type Schedule struct {
	Events []Event
	Orders []Order
}

// Len is the number of choices (events plus orders).
func (s Schedule) Len() int { return len(s.Events) + len(s.Orders) }

// Expect is the verdict a file expects on replay.
type Expect struct {
	Pass   bool
	Oracle string // the oracle that must fail, when !Pass
}

// File is a scenario plus a schedule, as stored on disk.
type File struct {
	// Comments are the '#' lines of the header (the story), without '#'.
	Comments []string
	Scenario *Scenario
	Schedule Schedule
	Expect   *Expect
	// Strict: the file replays with every known-finding allowance off
	// (written "options strict"; a finding found with --strict needs it).
	Strict bool
}
