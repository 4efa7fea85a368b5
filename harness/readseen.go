package harness

import (
	"math/bits"
	"slices"

	"github.com/fgcheck/fgcheck/fgraph"
)

// The inputs of the clean in-place checks, kept across runs.
//
// The reader memo (readers.go) keeps the inputs of the last clean check
// only: the next commit to a word the walk read forgets it, and the walk
// runs again, though the same shadow stack recurs in run after run (the
// same code, other interleavings). readerSeen keeps, for every clean
// check of a worker's exploration, a 128-bit digest of what the walk
// read: the task, its ret_stack and curr_ret_stack fields, its real stack
// of return addresses, and the words of its shadow stack the walk read
// (the memo's mask) with their values. The walk is a function of those
// (the memo's premise): a check whose inputs have a digest kept reads the
// same words, finds them the same, and is clean again. Since the words a
// walk reads depend on their values, a check looks for its digest under
// each mask kept for its shape (the task, the two fields and the real
// stack), at most readerSeenMasks of them.
//
// Bounded: at readerSeenMax digests it starts afresh. A digest is the
// xxh3-128 of the shape's 64-bit digest, the mask and the words' values,
// as the state cache's keys are xxh3-128: with s shapes and n digests
// kept, two different inputs share one with a chance of about
// s²/2⁶⁵ + n²/2¹²⁹.

// readerSeenMax is how many digests a worker keeps at most.
const readerSeenMax = 1 << 18

// readerSeenMasks is how many masks a shape keeps at most.
const readerSeenMasks = 4

type readerSeen struct {
	// The digests kept, open addressing ((0, 0): a free slot).
	tab []stateKey
	n   int
	// The masks of each shape's clean checks, and of its walks that found
	// known findings (knownwalk.go).
	masks, kmasks map[uint64][]uint64
	// The real stack last digested (task t's, slots), its digest, and the
	// last shape looked up with its masks.
	t      int
	slots  []fgraph.Word
	stack  uint64
	shape  uint64
	shapeM []uint64
	shapeK []uint64
	shapeV bool
	// The machine and its real stacks' version (fgraph.SlotsVersion)
	// when slots was last seen current.
	sm     *fgraph.Machine
	sver   uint64
	recent [256]recentShape // a few shapes' masks, in front of the map
	kbuf   [66]uint64       // a key's words: the shape, the mask, a word per bit
}

type recentShape struct {
	shape   uint64
	ms, kms []uint64
	ok      bool
}

// setShape digests task t's shape: its real stack (digested again only
// when it changed), ret_stack and curr_ret_stack.
func (p *readerSeen) setShape(r *runner, t int) {
	m := r.m
	n := m.SlotCount(t)
	same := p.t == t && len(p.slots) == 3*n && p.slots != nil
	// Compared word by word only if a real stack changed since slots
	// was current.
	if same && (p.sm != m || p.sver != m.SlotsVersion() && r.hk.readerMemoDrop != "slots") {
		for i := 0; same && i < n; i++ {
			retp, val, orig := m.SlotWords(t, i)
			same = p.slots[3*i] == retp && p.slots[3*i+1] == val && p.slots[3*i+2] == orig
		}
	}
	if !same {
		p.t, p.slots = t, p.slots[:0]
		h := mix(hashSeed, uint64(t)<<32|uint64(n))
		for i := 0; i < n; i++ {
			retp, val, orig := m.SlotWords(t, i)
			p.slots = append(p.slots, retp, val, orig)
			h = mix(mix(mix(h, uint64(retp)), uint64(val)), uint64(orig))
		}
		p.stack = h
	}
	p.sm, p.sver = m, m.SlotsVersion()
	b := m.TaskBase(t)
	sh := mix(mix(p.stack, uint64(m.Mem[b+fgraph.TaskRetStack])), uint64(m.Mem[b+fgraph.TaskCurr]))
	if !p.shapeV || sh != p.shape {
		e := &p.recent[sh%uint64(len(p.recent))]
		if !e.ok || e.shape != sh {
			*e = recentShape{sh, p.masks[sh], p.kmasks[sh], true}
		}
		p.shape, p.shapeM, p.shapeK, p.shapeV = sh, e.ms, e.kms, true
	}
}

// key is the digest of the shape (setShape) with the words of task t's
// shadow stack in mask.
func (p *readerSeen) key(r *runner, t int, mask uint64) stateKey {
	m := r.m
	lo := m.WordAddr(t, 0)
	buf := &p.kbuf
	buf[0], buf[1] = p.shape, mask
	if r.hk.readerMemoDrop == "words" {
		mask = 0 // (a test's wrong key: the words' values left out)
	}
	n := 0
	if len(m.Mem)-int(lo) >= 64 {
		// The 64 words a mask can name, as an array: no bounds check
		// per word (a tenth of the key's instructions).
		mem := (*[64]fgraph.Word)(m.Mem[lo:])
		for w := mask; w != 0; w &= w - 1 {
			buf[2+n&63] = uint64(mem[bits.TrailingZeros64(w)&63])
			n++
		}
	} else {
		for w := mask; w != 0; w &= w - 1 {
			buf[2+n&63] = uint64(m.Mem[lo+fgraph.Addr(bits.TrailingZeros64(w))])
			n++
		}
	}
	return hashState(buf[:2+n])
}

// find returns the slot of k in tab: k's, or the free one it would take.
func (p *readerSeen) find(k stateKey) int {
	mask := len(p.tab) - 1
	for i := int(k.a) & mask; ; i = (i + 1) & mask {
		if e := p.tab[i]; e == k || e == (stateKey{}) {
			return i
		}
	}
}

// hit reports whether a clean check of task t read what it would read
// now, and the mask of that check.
func (p *readerSeen) hit(r *runner, t int) (uint64, bool) {
	if p.n == 0 {
		return 0, false
	}
	p.setShape(r, t)
	return p.hitShape(r, t)
}

// hitShape is hit with task t's shape set already (setShape), and its
// real stack, ret_stack and curr_ret_stack as they were then.
//
// A mask that hits moves to the front of its shape's list: the next check
// of the shape most often reads what this one read (on peer-spin K=3, of
// 805,000 hits 120,000 were at the second mask and 10,000 at the third
// before this; a key is a gather and a hash of up to 66 words). At most
// one mask can hit a state, the one its walk reads (a walk that read the
// words of a kept mask with their kept values reads those words again),
// so the order decides only how many keys a lookup makes.
func (p *readerSeen) hitShape(r *runner, t int) (uint64, bool) {
	ms := p.shapeM
	for i, mask := range ms {
		k := p.key(r, t, mask)
		if p.tab[p.find(k)] == k {
			toFront(ms, i) // in place: the map's and recent's lists are this one
			return mask, true
		}
	}
	return 0, false
}

// toFront moves ms[i] to the front of ms, the others keeping their order.
func toFront(ms []uint64, i int) {
	if i > 0 {
		x := ms[i]
		copy(ms[1:i+1], ms[:i])
		ms[0] = x
	}
}

// add keeps the inputs of a clean check of task t that read the words of
// mask (the memo's: with the slot word cursorAtBottom reads).
func (p *readerSeen) add(r *runner, t int, mask uint64) {
	mask |= 1 << r.cfg.FieldRetp()
	if p.tab == nil || p.n >= readerSeenMax {
		p.tab, p.n = make([]stateKey, 1<<12), 0
		p.masks, p.kmasks, p.shapeV, p.recent = map[uint64][]uint64{}, map[uint64][]uint64{}, false, [256]recentShape{}
	}
	if 4*(p.n+1) > 3*len(p.tab) {
		old := p.tab
		p.tab = make([]stateKey, 2*len(old))
		for _, k := range old {
			if k != (stateKey{}) {
				p.tab[p.find(k)] = k
			}
		}
	}
	p.setShape(r, t)
	if !slices.Contains(p.shapeM, mask) {
		if len(p.shapeM) >= readerSeenMasks {
			return
		}
		p.shapeM = append(p.shapeM, mask)
		p.masks[p.shape] = p.shapeM
		p.recent[p.shape%uint64(len(p.recent))] = recentShape{p.shape, p.shapeM, p.shapeK, true}
	}
	k := p.key(r, t, mask)
	if i := p.find(k); p.tab[i] != k {
		p.tab[i] = k
		p.n++
	}
}

// addKnownMask adds mask to the masks of the current shape's walks that
// found known findings (setShape first); false if the shape has its
// readerSeenMasks already.
func (p *readerSeen) addKnownMask(mask uint64) bool {
	if slices.Contains(p.shapeK, mask) {
		return true
	}
	if len(p.shapeK) >= readerSeenMasks {
		return false
	}
	if p.kmasks == nil {
		p.kmasks = map[uint64][]uint64{}
	}
	p.shapeK = append(p.shapeK, mask)
	p.kmasks[p.shape] = p.shapeK
	p.recent[p.shape%uint64(len(p.recent))] = recentShape{p.shape, p.shapeM, p.shapeK, true}
	return true
}
