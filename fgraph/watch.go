package fgraph

// ReadWatch records the words that code run with no hooks attached reads
// (an oracle's walk: the harness detaches its hooks so that the walk reads
// memory directly): a bit of Mask for each word of Lo..Lo+63, the words of
// Also by themselves, and Other for any other word. The harness's memo of
// its in-place readers keeps what a clean walk read, so that a commit
// that changes none of those words leaves the next check out.
type ReadWatch struct {
	Lo    Addr
	Mask  uint64
	Also  [2]Addr
	Other bool
}

// SetReadWatch makes the loads made with no hooks attached record their
// words in w (nil: no more).
func (m *Machine) SetReadWatch(w *ReadWatch) { m.watch = w }

func (w *ReadWatch) note(a Addr) {
	switch d := a - w.Lo; {
	case d >= 0 && d < 64:
		w.Mask |= 1 << d
	case a != w.Also[0] && a != w.Also[1]:
		w.Other = true
	}
}
