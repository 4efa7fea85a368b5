package harness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Picture is the shadow stacks at one point of a traced run, decoded and
// drawn the way the header comment of kernel/trace/fgraph.c draws a stack:
// highest index at the top, the task variables and SHADOW_STACK_MAX_OFFSET
// above, curr_ret_stack marked on the first free word, and each frame
// (struct ftrace_ret_stack and the BITMAP or RESERVED word and DATA words
// above it) bracketed by +----+ rules.
//
// Frames are found by walking the offsets down from curr_ret_stack as the
// unwinder does (get_ret_stack): the word below curr gives the frame start;
// the words between the frame's meta word and the top are its DATA words
// and their payloads. Words the walk does not reach (it stops where
// get_ret_stack would WARN) are drawn undecoded. Words at and above
// curr_ret_stack are not live; they are drawn as a short "stale" tail
// because an interrupt sees, and may overwrite, exactly those words: a push
// writes its offset word and frame above curr_ret_stack before raising it,
// fgraph_reserve_data writes its DATA word there first, and a returning
// interrupt leaves its frame there. The tail ends at the highest non-zero
// word, at most staleRows words up; a line counts the rest. In the text form
// a '*' before the index marks a word that changed since the previous
// picture of the same task.
type Picture struct {
	// Label says where the picture was taken: "before irq 1", "after
	// remote 3", "at the violation".
	Label string
	// Array lists the slots of fgraph_array that hold a user as
	// "INDEX=USER", in index order (the others hold NULL or fgraph_stub).
	Array []string
	// Stacks holds one picture per task shown.
	Stacks []StackPicture
}

// StackPicture is one task's shadow stack.
type StackPicture struct {
	Task int
	// RetStack, Curr, Depth and Overrun are t->ret_stack (0: NULL, no
	// stack), curr_ret_stack, curr_ret_depth and trace_overrun.
	RetStack             uint64
	Curr, Depth, Overrun int
	// StackWords is SHADOW_STACK_OFFSET and MaxOffset SHADOW_STACK_MAX_OFFSET.
	StackWords, MaxOffset int
	// TaskVarBase is the index of SHADOW_STACK_TASK_VARS[0] (-1: the variant
	// has none); TaskVars summarises their values ("all 0", "[2]=0x1").
	TaskVarBase int
	TaskVars    string
	// Rows are the words drawn, highest index first.
	Rows []PictureRow
	// StaleMore counts the non-zero stale words above the rows drawn, the
	// highest of them at StaleTop.
	StaleMore, StaleTop int
	// Frames is the number of frames the walk found; Walk says why it
	// stopped above word 0 ("" when it reached the bottom).
	Frames int
	Walk   string
}

// RowKind is what a word of a picture is.
type RowKind uint8

const (
	RowStale     RowKind = iota // at or above curr_ret_stack: not live
	RowRet                      // frame field ret
	RowFunc                     // frame field func
	RowCalltime                 // frame field calltime (v6.11..v6.13)
	RowRetp                     // frame field retp
	RowReserved                 // the frame's meta word, type RESERVED
	RowBitmap                   // the frame's meta word, type BITMAP
	RowData                     // a DATA word
	RowPayload                  // a word of a DATA word's payload
	RowUnreached                // below curr_ret_stack, but not decoded by the walk
)

var rowKindNames = [...]string{"stale", "ret", "func", "calltime", "retp", "RESERVED", "BITMAP", "DATA", "data", "?"}

func (k RowKind) String() string {
	if int(k) < len(rowKindNames) {
		return rowKindNames[k]
	}
	return "RowKind(" + strconv.Itoa(int(k)) + ")"
}

// Meta reports whether the row is a meta word (RESERVED, BITMAP, DATA).
func (k RowKind) Meta() bool { return k == RowReserved || k == RowBitmap || k == RowData }

// PictureRow is one word of a stack picture.
type PictureRow struct {
	Index int
	Word  uint64
	Kind  RowKind
	// Frame numbers the frame the word belongs to from the top, as the idx
	// of ftrace_graph_get_ret_stack does (0 = the newest); -1 outside frames.
	Frame int
	// Offset is the offset field of a meta word; Bits the BITMAP bits;
	// Owner the fgraph_array index owning a DATA word or payload word (-1
	// otherwise); Size the payload size in words of a DATA word.
	Offset int
	Bits   uint16
	Owner  int
	Size   int
	// Detail is the rest of the decoding ("f1+0x4", "bits={0,3} offset=3").
	Detail string
	// Note is the right-margin annotation: "<- curr_ret_stack", "<- frame 0: f1".
	Note string
	// Curr marks the word at curr_ret_stack.
	Curr bool
	// Changed marks a word that differs from the one in the previous
	// picture of the same task (never set in a task's first picture).
	Changed bool
	// RuleAbove and RuleBelow draw a +----+ rule: a frame boundary.
	RuleAbove, RuleBelow bool
}

// staleRows is the most stale words drawn above curr_ret_stack.
const staleRows = 8

// picture takes a picture of the given tasks (all of them when none).
func (r *runner) picture(label string, tasks []int) *Picture {
	p := &Picture{Label: label}
	m := r.m
	for i := 0; i < fgraph.FgraphArraySize; i++ {
		h := m.Mem[fgraph.AddrArray+fgraph.Addr(i)]
		switch {
		case h == fgraph.HandleNull, h == fgraph.HandleStub:
		case int(h)-2 < len(r.sc.Users):
			p.Array = append(p.Array, fmt.Sprintf("%d=%s", i, r.sc.Users[h-2].Name))
		default:
			p.Array = append(p.Array, fmt.Sprintf("%d=%#x", i, h))
		}
	}
	if len(tasks) == 0 {
		for t := range r.sc.Tasks {
			tasks = append(tasks, t)
		}
	}
	for _, t := range tasks {
		sp := r.stackPicture(t)
		// Mark the words that changed since the task's previous picture.
		words := m.Mem[m.WordAddr(t, 0):m.WordAddr(t, r.cfg.StackWords)]
		if r.tr != nil {
			for len(r.tr.prev) <= t {
				r.tr.prev = append(r.tr.prev, nil)
			}
			if prev := r.tr.prev[t]; prev != nil {
				for i := range sp.Rows {
					x := &sp.Rows[i]
					x.Changed = prev[x.Index] != x.Word
				}
			}
			r.tr.prev[t] = append(r.tr.prev[t][:0], words...)
		}
		p.Stacks = append(p.Stacks, sp)
	}
	return p
}

func (r *runner) stackPicture(t int) StackPicture {
	m, cfg := r.m, r.cfg
	b := m.TaskBase(t)
	sp := StackPicture{
		Task:     t,
		RetStack: m.Mem[b+fgraph.TaskRetStack], Curr: int(int64(m.Mem[b+fgraph.TaskCurr])),
		Depth: int(int64(m.Mem[b+fgraph.TaskDepth])), Overrun: int(int64(m.Mem[b+fgraph.TaskOverrun])),
		StackWords: cfg.StackWords, MaxOffset: cfg.ShadowStackMaxOffset(), TaskVarBase: cfg.TaskVarBase(),
	}
	word := func(i int) fgraph.Word { return m.Mem[m.WordAddr(t, i)] }
	if vb := sp.TaskVarBase; vb >= 0 {
		var nz []string
		for i := 0; i < fgraph.FgraphArraySize; i++ {
			if w := word(vb + i); w != 0 {
				nz = append(nz, fmt.Sprintf("[%d]=%#x", i, w))
			}
		}
		sp.TaskVars = "all 0"
		if len(nz) > 0 {
			sp.TaskVars = strings.Join(nz, " ")
		}
	}
	if sp.RetStack == 0 {
		return sp
	}
	// Live words: [0, curr).
	curr := min(max(sp.Curr, 0), cfg.StackWords)
	rows := make([]PictureRow, curr)
	for i := range rows {
		rows[i] = PictureRow{Index: i, Word: word(i), Kind: RowUnreached, Frame: -1, Owner: -1}
	}
	r.walkPicture(&sp, rows, curr)
	// The stale tail: [curr, hi], ending at the highest non-zero word below
	// the task variables, at most staleRows words.
	end := cfg.StackWords
	if sp.TaskVarBase >= 0 {
		end = sp.TaskVarBase
	}
	hi := curr
	for i := curr; i < end; i++ {
		if word(i) != 0 {
			hi = i
		}
	}
	shown := min(hi, curr+staleRows-1)
	for i := shown + 1; i <= hi; i++ {
		if word(i) != 0 {
			sp.StaleMore++
			sp.StaleTop = i
		}
	}
	// A frame being pushed (or just popped) at curr: its meta word at
	// curr+F says so; name the fields it would have.
	F := cfg.FrameWords
	pending := curr+F < end && (fgraph.GetType(word(curr+F)) == fgraph.FgraphTypeReserved || fgraph.GetType(word(curr+F)) == fgraph.FgraphTypeBitmap) &&
		fgraph.GetFrameOffset(word(curr+F)) == F && word(curr+F) < 1<<32
	var out []PictureRow
	for i := shown; i >= curr && i < cfg.StackWords; i-- {
		w := word(i)
		row := PictureRow{Index: i, Word: w, Kind: RowStale, Frame: -1, Owner: -1, Detail: r.guessWord(w)}
		if pending && i < curr+F {
			var x PictureRow
			x.Word = w
			r.frameField(&x, i-curr)
			row.Detail = x.Kind.String() + "? " + x.Detail
		}
		if i == sp.Curr {
			row.Curr, row.Note = true, "<- curr_ret_stack"
		}
		out = append(out, row)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		out = append(out, rows[i])
	}
	// Rules at frame boundaries: above every live group (a frame, the
	// undecoded words) and below the lowest.
	group := func(x PictureRow) int {
		switch {
		case x.Frame >= 0:
			return x.Frame
		case x.Kind == RowStale:
			return -1
		}
		return -2
	}
	for i := range out {
		live := out[i].Kind != RowStale
		if live && (i == 0 || group(out[i-1]) != group(out[i])) {
			out[i].RuleAbove = true
		}
		if live && i == len(out)-1 {
			out[i].RuleBelow = true
		}
	}
	sp.Rows = out
	return sp
}

// walkPicture decodes the live words rows[0:curr] by walking the offsets
// down from curr like get_ret_stack, then each frame's DATA words from its
// top down like fgraph_retrieve_parent_data.
func (r *runner) walkPicture(sp *StackPicture, rows []PictureRow, curr int) {
	F := r.cfg.FrameWords
	pos := curr
	n := 0
	for pos > 0 {
		top := pos - 1
		w := rows[top].Word
		offs := fgraph.GetFrameOffset(w)
		if offs <= 0 || offs > top {
			sp.Walk = fmt.Sprintf("get_ret_stack stops at word %d: offset %d is not in [1, %d] (WARN_ON_ONCE)", top, offs, top)
			rows[top].Note = "<- the walk stops here"
			break
		}
		start := top - offs
		if offs < F {
			// The word read as the top meta word lies inside the frame it
			// points to: get_ret_stack takes it anyway.
			rows[top].Note = fmt.Sprintf("<- read as the top meta word: offset %d < F = %d", offs, F)
		}
		// The frame: struct ftrace_ret_stack, then the meta words up to top.
		for i := start; i < start+F && i <= top; i++ {
			r.frameField(&rows[i], i-start)
			rows[i].Frame = n
		}
		fn := "?"
		if fi := start + fgraph.FieldFunc; fi <= top {
			fn = funcName(fgraph.FuncOf(rows[fi].Word), rows[fi].Word)
		}
		rows[start].Note = fmt.Sprintf("<- frame %d: %s", n, fn)
		meta := start + F
		i := top
		for i > meta {
			x := &rows[i]
			x.Frame = n
			if fgraph.GetType(x.Word) != fgraph.FgraphTypeData {
				x.Detail = "not a DATA word: " + r.guessWord(x.Word)
				i--
				continue
			}
			size := fgraph.GetDataSize(x.Word)
			r.metaRow(x)
			if i-size <= meta {
				x.Detail += " (payload would reach the meta word)"
				i--
				continue
			}
			for j := 1; j <= size; j++ {
				p := &rows[i-j]
				p.Kind, p.Frame, p.Owner, p.Size = RowPayload, n, x.Owner, size
				p.Detail = fmt.Sprintf("idx %d word %d/%d", x.Owner, size-j+1, size)
				if g := r.guessPayload(p.Word); g != "" {
					p.Detail += "  " + g
				}
			}
			i -= size + 1
		}
		if meta <= top {
			x := &rows[meta]
			x.Frame = n
			r.metaRow(x)
			switch x.Kind {
			case RowBitmap, RowReserved:
				if x.Offset != F {
					x.Detail += fmt.Sprintf(" (want offset %d)", F)
				}
			default:
				x.Detail += " (want BITMAP or RESERVED)"
			}
		}
		n++
		pos = start
	}
	sp.Frames = n
	for i := range rows {
		if rows[i].Kind == RowUnreached && rows[i].Detail == "" {
			rows[i].Detail = r.guessWord(rows[i].Word)
		}
	}
}

// frameField decodes field f of struct ftrace_ret_stack.
func (r *runner) frameField(x *PictureRow, f int) {
	switch {
	case f == fgraph.FieldRet:
		x.Kind, x.Detail = RowRet, describeAddr(x.Word)
	case f == fgraph.FieldFunc:
		x.Kind, x.Detail = RowFunc, describeAddr(x.Word)
	case f == r.cfg.FieldRetp():
		x.Kind, x.Detail = RowRetp, describeRetp(x.Word)
	case f == r.cfg.FieldCalltime():
		x.Kind, x.Detail = RowCalltime, strconv.FormatUint(x.Word, 10)
		if x.Word >= 1<<32 {
			x.Detail = "? " + describeAddr(x.Word)
		}
	}
}

// metaRow decodes a meta word by its type field.
func (r *runner) metaRow(x *PictureRow) {
	w := x.Word
	x.Offset = fgraph.GetFrameOffset(w)
	switch fgraph.GetType(w) {
	case fgraph.FgraphTypeReserved:
		x.Kind, x.Detail = RowReserved, fmt.Sprintf("offset=%d", x.Offset)
		if w>>fgraph.FgraphTypeShift != 0 {
			x.Detail += fmt.Sprintf(" upper bits %#x", w>>fgraph.FgraphIndexShift)
		}
	case fgraph.FgraphTypeBitmap:
		x.Kind, x.Bits = RowBitmap, fgraph.GetBitmapBits(w)
		x.Detail = fmt.Sprintf("bits=%s offset=%d", bitSet(uint64(x.Bits)), x.Offset)
		if g := w >> fgraph.GenShift; g != 0 {
			if r.cfg.GenCounter {
				x.Detail += " gens=" + gens(x.Bits, w)
			} else {
				x.Detail += fmt.Sprintf(" upper bits %#x", g)
			}
		}
	case fgraph.FgraphTypeData:
		x.Kind, x.Owner, x.Size = RowData, fgraph.GetDataIndex(w), fgraph.GetDataSize(w)
		x.Detail = fmt.Sprintf("idx=%d size=%d offset=%d", x.Owner, x.Size, x.Offset)
		if w>>21 != 0 {
			x.Detail += fmt.Sprintf(" upper bits %#x", w>>21)
		}
	default:
		x.Kind, x.Detail = RowUnreached, fmt.Sprintf("type 3 offset=%d", x.Offset)
	}
}

// bitSet prints a bit set as {0,3}.
func bitSet(b uint64) string {
	var s []string
	for i := 0; b != 0; i++ {
		if b&1 != 0 {
			s = append(s, strconv.Itoa(i))
		}
		b >>= 1
	}
	return "{" + strings.Join(s, ",") + "}"
}

// gens prints the gen-counter fix's generations of the set bits: "0:1,3:0".
func gens(bits uint16, w fgraph.Word) string {
	var s []string
	for i := 0; i < fgraph.FgraphArraySize; i++ {
		if bits&(1<<i) != 0 {
			s = append(s, fmt.Sprintf("%d:%d", i, (w>>(fgraph.GenShift+2*i))&3))
		}
	}
	return strings.Join(s, ",")
}

// funcName names symbolic function f: f1, the task's entry point, an
// interrupt handler (fgraph.baseFunc).
func funcName(f int, w fgraph.Word) string {
	switch {
	case w < fgraph.FuncAddr(0) || w >= fgraph.FuncAddr(0x10000):
		return "?"
	case f == 0:
		return "task entry"
	case f > 0xfff0:
		return fmt.Sprintf("handler(level %d)", f-0xfff0)
	}
	return "f" + strconv.Itoa(f)
}

// describeAddr describes a text address: "f1", "f1+0x4", "return_to_handler".
func describeAddr(w fgraph.Word) string {
	switch {
	case w == 0:
		return "0"
	case w == fgraph.ReturnToHandler:
		return "return_to_handler"
	case w == fgraph.PanicAddr:
		return "panic"
	case w >= fgraph.FuncAddr(0) && w < fgraph.FuncAddr(0x10000):
		f := fgraph.FuncOf(w)
		s := funcName(f, w)
		if d := w - fgraph.FuncAddr(f); d != 0 {
			s += fmt.Sprintf("+%#x", d)
		}
		return s
	}
	return "?"
}

// retpBase is fgraph's retpBase(0, 0): where the simulated real stacks live.
const retpBase fgraph.Word = 0xffffc90000000000

// describeRetp describes the address of a real-stack return-address slot.
func describeRetp(w fgraph.Word) string {
	if w == 0 {
		return "NULL"
	}
	d := w - retpBase
	if w < retpBase || d >= 1<<24 || d%8 != 0 {
		return "?"
	}
	return fmt.Sprintf("slot %d of task%d level %d", (d&0xffff)/8, (d>>16)&0xf, d>>20)
}

// guessPayload recognises a payload word written by a user (fgraph.Pattern).
func (r *runner) guessPayload(w fgraph.Word) string {
	if w>>56 != 0xda {
		return ""
	}
	k := int(w>>52) & 0xf
	name := "ops " + strconv.Itoa(k)
	if k < len(r.sc.Users) {
		name = r.sc.Users[k].Name
	}
	return fmt.Sprintf("(%s's pattern for f%d, word %d)", name, int(w>>24)&0xffff, int(w&0xff))
}

// guessWord describes a word whose role is unknown (stale or undecoded).
func (r *runner) guessWord(w fgraph.Word) string {
	switch {
	case w == 0:
		return "0"
	case w < 1<<21:
		var x PictureRow
		x.Word = w
		r.metaRow(&x)
		return x.Kind.String() + " " + x.Detail
	case w == fgraph.ReturnToHandler || w == fgraph.PanicAddr || (w >= fgraph.FuncAddr(0) && w < fgraph.FuncAddr(0x10000)):
		return describeAddr(w)
	case w>>40 == retpBase>>40:
		return "retp " + describeRetp(w)
	case w>>56 == 0xda:
		return "payload " + r.guessPayload(w)
	}
	return ""
}

// decodeStore describes a value stored to a shadow-stack word at site s:
// by the field the site writes, else as guessWord does.
func (r *runner) decodeStore(s fgraph.Site, w fgraph.Word) string {
	switch s {
	case fgraph.SitePushW2, fgraph.SitePushW5Ret:
		return "ret " + describeAddr(w)
	case fgraph.SitePushW5Func:
		return "func " + describeAddr(w)
	case fgraph.SitePushW5Calltime:
		return "calltime " + strconv.FormatUint(w, 10)
	case fgraph.SitePushW5Retp, fgraph.SitePushW2Retp:
		return "retp " + describeRetp(w)
	case fgraph.SiteUserPayload:
		return "payload " + r.guessPayload(w)
	}
	return r.guessWord(w)
}

// Lines draws the picture as text.
func (p *Picture) Lines() []string {
	head := "----- shadow stack " + p.Label
	if len(p.Array) > 0 {
		head += " (fgraph_array: " + strings.Join(p.Array, " ") + ")"
	}
	out := []string{head + " -----"}
	for i := range p.Stacks {
		out = append(out, p.Stacks[i].Lines()...)
	}
	return out
}

// Header is the task line of a stack picture.
func (sp *StackPicture) Header() string {
	return fmt.Sprintf("task%d: ret_stack=%d curr_ret_stack=%d curr_ret_depth=%d trace_overrun=%d",
		sp.Task, sp.RetStack, sp.Curr, sp.Depth, sp.Overrun)
}

// Above is the text drawn above the words: the task variables and the
// push limit, as in the kernel comment.
func (sp *StackPicture) Above() []string {
	var out []string
	if sp.TaskVarBase >= 0 {
		out = append(out, fmt.Sprintf("ret_stack[%d..%d] SHADOW_STACK_TASK_VARS: %s", sp.TaskVarBase, sp.StackWords-1, sp.TaskVars))
	}
	out = append(out, fmt.Sprintf("ret_stack[%d] SHADOW_STACK_MAX_OFFSET", sp.MaxOffset))
	if sp.StaleMore > 0 {
		out = append(out, fmt.Sprintf("... %d more non-zero stale words, up to ret_stack[%d]", sp.StaleMore, sp.StaleTop))
	} else {
		out = append(out, "...")
	}
	return out
}

// Lines draws one stack as text.
func (sp *StackPicture) Lines() []string {
	out := []string{sp.Header()}
	if sp.RetStack == 0 {
		return append(out, "       (no shadow stack)")
	}
	for _, l := range sp.Above() {
		out = append(out, "       "+l)
	}
	width := 30
	for _, x := range sp.Rows {
		width = max(width, len(x.Detail))
	}
	rule := "       +" + strings.Repeat("-", 32+width) + "+"
	for _, x := range sp.Rows {
		if x.RuleAbove {
			out = append(out, rule)
		}
		mark := ' '
		if x.Changed {
			mark = '*'
		}
		l := fmt.Sprintf("%c %4d | 0x%016x  %-8s  %-*s |", mark, x.Index, x.Word, x.Kind, width, x.Detail)
		if x.Note != "" {
			l += " " + x.Note
		}
		out = append(out, l)
		if x.RuleBelow {
			out = append(out, rule)
		}
	}
	out = append(out, "       ret_stack[0]")
	if sp.Walk != "" {
		out = append(out, "       "+sp.Walk)
	}
	return out
}
