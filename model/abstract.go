package model

import (
	"fmt"
	"slices"
)

// Word-layout constants, restated from kernel-fgraph.md section 1.3 so the
// model does not depend on the port (a test in harness/ checks they agree).
const (
	offsetMask   = 0x3ff
	typeShift    = 10
	typeMask     = 3
	typeReserved = 0
	typeBitmap   = 1
	typeData     = 2
	indexShift   = 12
	indexMask    = 0xffff
	dataShift    = 12
	dataMask     = 0x1f
	dataIdxShift = 17
	dataIdxMask  = 0xf
	genShift     = 28
	genMask      = 0xffffffff
)

// Image is a task's memory-visible state.
type Image struct {
	HasStack bool
	Curr     int
	Depth    int
	Overrun  int
	Words    []uint64
}

// WordError says which word of an image is malformed and how.
type WordError struct {
	Index int
	Word  uint64
	Msg   string
}

func (e *WordError) Error() string {
	if e.Index < 0 {
		return e.Msg
	}
	return fmt.Sprintf("word %d (%#x): %s", e.Index, e.Word, e.Msg)
}

// Meta is the decoded top meta word of one frame, for AbstractFrames.
type Meta struct {
	Reserved bool // the meta word is still RESERVED (entry in progress)
}

// Abstract maps a quiescent image to the task it encodes. Every frame must
// end in a BITMAP word (possibly under DATA words); a RESERVED word is an
// error at a quiescent point. The error names the word and what is wrong.
func Abstract(c Config, im Image) (Task, error) {
	var s Scratch
	t, err := s.Abstract(c, im)
	return t.own(), err
}

// AbstractFrames is Abstract without the quiescence requirement: a RESERVED
// top meta word is allowed and reported in the metas (bottom first).
func AbstractFrames(c Config, im Image) (Task, []Meta, error) {
	var s Scratch
	t, metas, err := s.AbstractFrames(c, im)
	return t.own(), metas, err
}

// Scratch holds the storage of an abstraction, for callers that abstract
// at every step and compare at once (the harness's model oracle): the Task
// its methods return shares the Scratch's slices and the image's words,
// and is valid until the next call or until the words change.
type Scratch struct {
	frames []Frame
	metas  []Meta
	data   []Data
}

// Abstract is the package's Abstract into s's storage.
func (s *Scratch) Abstract(c Config, im Image) (Task, error) {
	t, metas, err := s.AbstractFrames(c, im)
	if err != nil {
		return t, err
	}
	for i, m := range metas {
		if m.Reserved {
			s := frameStart(c, t, i)
			return t, &WordError{Index: s + c.F, Word: im.Words[s+c.F], Msg: "RESERVED meta word at a quiescent point (entry never completed)"}
		}
	}
	return t, nil
}

func frameStart(c Config, t Task, i int) int {
	n := 0
	for _, f := range t.Frames[:i] {
		n += c.F + 1
		for _, d := range f.Data {
			n += len(d.Words) + 1
		}
	}
	return n
}

// own copies what t shares with a Scratch and an image.
func (t Task) own() Task {
	if t.Frames == nil {
		return t
	}
	t.Frames = slices.Clone(t.Frames)
	for i := range t.Frames {
		f := &t.Frames[i]
		if f.Data == nil {
			continue
		}
		f.Data = slices.Clone(f.Data)
		for j := range f.Data {
			f.Data[j].Words = slices.Clone(f.Data[j].Words)
		}
	}
	return t
}

// AbstractFrames is the package's AbstractFrames into s's storage (the
// metas too are s's).
func (s *Scratch) AbstractFrames(c Config, im Image) (Task, []Meta, error) {
	t := Task{HasStack: im.HasStack, Depth: im.Depth, Overrun: im.Overrun}
	if !im.HasStack {
		return t, nil, nil
	}
	if im.Curr < 0 || im.Curr > c.MaxOffset() || im.Curr > len(im.Words) {
		return t, nil, &WordError{Index: -1, Msg: fmt.Sprintf("curr_ret_stack %d outside [0, %d]", im.Curr, c.MaxOffset())}
	}
	// Frames and each frame's DATA words are met top down; both are
	// reversed to bottom first.
	rev, metas, data := s.frames[:0], s.metas[:0], s.data[:0]
	defer func() { s.frames, s.metas, s.data = rev[:0], metas[:0], data[:0] }()
	pos := im.Curr
	for pos > 0 {
		top := pos - 1
		w := im.Words[top]
		var f Frame
		d0 := len(data)
		// DATA words, top down.
		for typ(w) == typeData {
			off := int(w & offsetMask)
			size := int((w>>dataShift)&dataMask) + 1
			if w>>(dataIdxShift+4) != 0 {
				return t, nil, &WordError{top, w, "DATA word has bits set above the index field"}
			}
			if off <= 0 || off > top {
				return t, nil, &WordError{top, w, fmt.Sprintf("DATA offset %d leads below word 0", off)}
			}
			if top-size < 0 {
				return t, nil, &WordError{top, w, fmt.Sprintf("DATA payload of %d words runs below word 0", size)}
			}
			data = append(data, Data{Idx: int((w >> dataIdxShift) & dataIdxMask), Words: im.Words[top-size : top : top]})
			next := top - size - 1
			if next < 0 {
				return t, nil, &WordError{top, w, "DATA chain has no BITMAP word below it"}
			}
			// The offset must lead to the same frame start as the word below.
			nw := im.Words[next]
			if want := off - size - 1; int(nw&offsetMask) != want {
				return t, nil, &WordError{top, w, fmt.Sprintf("DATA offset %d disagrees with word %d below it (offset %d, want %d)", off, next, nw&offsetMask, want)}
			}
			top, w = next, nw
		}
		if len(data) > d0 {
			slices.Reverse(data[d0:])
			f.Data = data[d0:len(data):len(data)]
		}
		off := int(w & offsetMask)
		var meta Meta
		switch typ(w) {
		case typeBitmap:
			f.Bits = uint16((w >> indexShift) & indexMask)
			if c.GenCounter {
				f.Gens = uint32((w >> genShift) & genMask)
				if w>>(genShift+32) != 0 {
					return t, nil, &WordError{top, w, "BITMAP word has bits set above the generation field"}
				}
			} else if w>>genShift != 0 {
				return t, nil, &WordError{top, w, "BITMAP word has bits set above the index field"}
			}
			if f.Bits == 0 {
				return t, nil, &WordError{top, w, "BITMAP word with no user bit"}
			}
		case typeReserved:
			if w>>typeShift != 0 {
				return t, nil, &WordError{top, w, "RESERVED word has upper bits set"}
			}
			meta.Reserved = true
		default:
			return t, nil, &WordError{top, w, fmt.Sprintf("top meta word has type %d", typ(w))}
		}
		if off != c.F {
			return t, nil, &WordError{top, w, fmt.Sprintf("frame meta word offset %d, want F = %d", off, c.F)}
		}
		start := top - c.F
		if start < 0 {
			return t, nil, &WordError{top, w, "frame starts below word 0"}
		}
		f.Ret = im.Words[start]
		f.Func = im.Words[start+1]
		f.Retp = im.Words[start+c.F-1]
		rev = append(rev, f)
		metas = append(metas, meta)
		pos = start
	}
	slices.Reverse(rev)
	slices.Reverse(metas)
	if len(rev) > 0 {
		t.Frames = rev
	}
	return t, metas, nil
}

func typ(w uint64) int { return int((w >> typeShift) & typeMask) }

// Visible strips what words cannot show (the ground-truth acceptors), for
// comparing a model task with an abstracted one.
func (t Task) Visible() Task {
	v := t
	v.Frames = make([]Frame, len(t.Frames))
	for i, f := range t.Frames {
		f.Accepted = nil
		f.EntryDepth = 0
		v.Frames[i] = f
	}
	if len(v.Frames) == 0 {
		v.Frames = nil
	}
	return v
}
