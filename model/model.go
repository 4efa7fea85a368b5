package model

import (
	"fmt"
	"slices"
)

// Slots is the number of user slots (FGRAPH_ARRAY_SIZE).
const Slots = 16

// Config is the documented semantics of a kernel variant.
type Config struct {
	F             int  // frame words
	StackWords    int  // words per stack
	TaskVars      bool // a 16-word task-variable area at the top
	Bit0          bool // BIT(0) is set in every bitmap word (F1)
	GenCounter    bool // bitmap words carry 2-bit slot generations
	NoFilter      bool // users have no filter hash (seed)
	NoData        bool // no data reservation (seed)
	HasF4Calltime bool
}

// MaxOffset is SHADOW_STACK_MAX_OFFSET.
func (c Config) MaxOffset() int {
	if c.TaskVars {
		return c.StackWords - (c.F + 1 + Slots)
	}
	return c.StackWords - (c.F + 1)
}

// User is the declarative behaviour of one user (fgraph_ops).
type User struct {
	Name      string
	Filter    []int // nil: every function
	Accept    []int // nil: every function
	DataWords int   // 0: no reservation
	// RejectAfter: functions for which the user reserves, then rejects.
	RejectAfter []int
}

func in(set []int, fn int) bool { return len(set) == 0 || slices.Contains(set, fn) }

// Data is one user's payload on a frame.
type Data struct {
	Idx   int
	Words []uint64
}

// Acceptor is a user that accepted a frame.
type Acceptor struct {
	Idx, User, Gen int
}

// Frame is one shadow-stack frame.
type Frame struct {
	Ret, Func, Retp uint64
	Bits            uint16 // the bitmap as the kernel stores it
	Gens            uint32 // gen-counter bits (2 per slot), 0 without the fix
	Data            []Data // bottom first
	// Accepted is the ground truth: who accepted, in which registration.
	// Abstract cannot recover it; Visible drops it.
	Accepted []Acceptor
	// EntryDepth is trace.depth at entry (set by the harness from the
	// entry callbacks; Visible drops it).
	EntryDepth int
}

// Task is one task's shadow stack.
type Task struct {
	HasStack bool
	Frames   []Frame
	Depth    int // curr_ret_depth
	Overrun  int
}

// Words is the number of words the frames use.
func (t *Task) Words(c Config) int {
	n := 0
	for _, f := range t.Frames {
		n += c.F + 1
		for _, d := range f.Data {
			n += len(d.Words) + 1
		}
	}
	return n
}

// Slot is one entry of fgraph_array.
type Slot struct {
	User int // -1: the stub
	Gen  int
	// Ready: the user's filter is usable (ftrace_startup_subops ran).
	Ready bool
	// Leaving: unregister has begun but not returned; the kernel may or
	// may not still call the user.
	Leaving bool
}

// State is the whole model.
type State struct {
	Cfg   Config
	Users []User
	Slots [Slots]Slot
	Gen   int // registration counter
	// SlotGen counts registrations per slot (the gen-counter fix's counter).
	SlotGen [Slots]int
	Tasks   []Task
	// Started[u]: the ftrace call sites for user u's filter are live
	// (between the tail of its register and the tail of its unregister).
	// The arch calls the graph entry for a function iff a started user's
	// filter holds it; that can outlive the user's slot.
	Started []bool
}

// New returns the initial state: no user registered, tasks without stacks.
func New(c Config, users []User, tasks int) *State {
	s := &State{Cfg: c, Users: users, Tasks: make([]Task, tasks), Started: make([]bool, len(users))}
	for i := range s.Slots {
		s.Slots[i].User = -1
	}
	for i := range s.Tasks {
		s.Tasks[i].Depth = -1
	}
	return s
}

// Clone returns a deep copy.
func (s *State) Clone() *State {
	n := *s
	n.Started = slices.Clone(s.Started)
	n.Tasks = make([]Task, len(s.Tasks))
	for i, t := range s.Tasks {
		n.Tasks[i] = t
		n.Tasks[i].Frames = slices.Clone(t.Frames)
	}
	return &n
}

// CopyTo makes dst a deep copy of s as Clone does, reusing dst's storage
// (dst nil: a new State), and returns it. Nothing else may share dst's
// slices: the harness keeps one State per run and one per snapshot.
func (s *State) CopyTo(dst *State) *State {
	if dst == nil {
		return s.Clone()
	}
	started, tasks := dst.Started, dst.Tasks
	*dst = *s
	dst.Started = append(started[:0], s.Started...)
	if cap(tasks) < len(s.Tasks) {
		tasks = make([]Task, len(s.Tasks))
	}
	tasks = tasks[:len(s.Tasks)]
	for i, t := range s.Tasks {
		frames := tasks[i].Frames
		tasks[i] = t
		tasks[i].Frames = append(frames[:0], t.Frames...)
	}
	dst.Tasks = tasks
	return dst
}

// Active is the number of registered users.
func (s *State) Active() int {
	n := 0
	for _, sl := range s.Slots {
		if sl.User >= 0 {
			n++
		}
	}
	return n
}

// SlotOf returns the slot of user u, or -1.
func (s *State) SlotOf(u int) int {
	for i, sl := range s.Slots {
		if sl.User == u {
			return i
		}
	}
	return -1
}

// Register puts user u in slot idx (the index the kernel chose: the model
// checks it was free, it does not predict the allocator). The first user
// gives every live task a stack.
func (s *State) Register(u, idx int) error {
	if u < 0 || u >= len(s.Users) {
		return fmt.Errorf("register: no user %d", u)
	}
	if idx < 0 || idx >= Slots {
		return fmt.Errorf("register %s: index %d out of range", s.Users[u].Name, idx)
	}
	if s.Slots[idx].User >= 0 {
		return fmt.Errorf("register %s: index %d is held by %s", s.Users[u].Name, idx, s.Users[s.Slots[idx].User].Name)
	}
	if s.SlotOf(u) >= 0 {
		return fmt.Errorf("register %s: already registered", s.Users[u].Name)
	}
	first := s.Active() == 0
	s.Gen++
	s.SlotGen[idx]++
	s.Slots[idx] = Slot{User: u, Gen: s.Gen, Ready: true}
	if first {
		for i := range s.Tasks {
			if !s.Tasks[i].HasStack {
				s.Tasks[i] = Task{HasStack: true, Depth: -1}
			}
		}
	}
	return nil
}

// BeginUnregister marks user u as leaving: until Unregister, callbacks may
// or may not reach it.
func (s *State) BeginUnregister(u int) {
	if i := s.SlotOf(u); i >= 0 {
		s.Slots[i].Leaving = true
	}
}

// Unregister removes user u.
func (s *State) Unregister(u int) error {
	i := s.SlotOf(u)
	if i < 0 {
		return fmt.Errorf("unregister: user %d not registered", u)
	}
	s.Slots[i] = Slot{User: -1}
	return nil
}

// Start and Stop mark user u's call sites live or not (see Started).
func (s *State) Start(u int) { s.Started[u] = true }

// Stop: see Start.
func (s *State) Stop(u int) { s.Started[u] = false }

// Traced reports whether the arch calls the graph entry for fn: some
// started user's filter holds it.
func (s *State) Traced(fn int) bool {
	for u, on := range s.Started {
		if on && (s.Cfg.NoFilter || in(s.Users[u].Filter, fn)) {
			return true
		}
	}
	return false
}

// EntryCall is one entryfunc the kernel runs.
type EntryCall struct {
	Idx, User, Gen int
	Accepted       bool
	Data           []uint64
}

// CallResult is the outcome of a traced call.
type CallResult struct {
	Traced  bool // the arch called the graph entry
	Pushed  bool // a frame was kept and the return address hijacked
	Overrun bool // refused for lack of room
	Entries []EntryCall
}

// Payload is word i of the data user u writes in registration gen for fn
// with return-address slot retp. It must equal fgraph.Pattern.
func Payload(u, gen, fn int, retp uint64, i int) uint64 {
	return 0xda<<56 | uint64(u&0xf)<<52 | uint64(gen&0xfff)<<40 | uint64(fn&0xffff)<<24 |
		(retp&0xffff)<<8 | uint64(i&0xff)
}

// Slab hands out the small arrays of pushed frames (their acceptors, DATA
// entries and words) from larger chunks, so that a push allocates about
// once in a hundred. An array is written only while its frame is built
// (frames are values that every copy of a State shares: CopyTo), and the
// slab only moves on, so an array is never handed out twice. A slab is
// its owner's (a harness runner's): it is not safe for concurrent use.
type Slab struct {
	acc   []Acceptor
	data  []Data
	words []uint64
}

// slabChunk is the length of a slab's chunks, in elements.
const slabChunk = 256

// The arrays of a frame: from the slab's chunks, or from the heap when
// there is no slab. Acceptors and DATA entries are appended (length 0),
// words are written in place (length n).
func (s *Slab) acceptors(n int) []Acceptor {
	if s == nil {
		return make([]Acceptor, 0, n)
	}
	return cut(&s.acc, n)
}

func (s *Slab) dataOf(n int) []Data {
	if s == nil {
		return make([]Data, 0, n)
	}
	return cut(&s.data, n)
}

func (s *Slab) wordsOf(n int) []uint64 {
	if s == nil {
		return make([]uint64, n)
	}
	return cut(&s.words, n)[:n]
}

// cut returns an empty slice with room for n elements from the chunk
// *free, which it moves past them (a new chunk when *free is too short).
func cut[T any](free *[]T, n int) []T {
	if len(*free) < n {
		*free = make([]T, max(slabChunk, n))
	}
	out := (*free)[:0:n]
	*free = (*free)[n:]
	return out
}

// Call is a traced call of fn on task t with return address ret stored at
// retp. claimed is the number of words already taken on t's stack by entries
// still in flight in the contexts this call interrupts.
func (s *State) Call(t, fn int, ret, funcAddr, retp uint64, claimed int) CallResult {
	return s.CallWith(t, fn, ret, funcAddr, retp, claimed, &s.Slots)
}

// CallWith is Call evaluated against the given user table instead of the
// model's own: the harness passes the table the kernel actually used when
// users came or went during the call.
func (s *State) CallWith(t, fn int, ret, funcAddr, retp uint64, claimed int, slots *[Slots]Slot) CallResult {
	return s.CallWithBuf(nil, nil, t, fn, ret, funcAddr, retp, claimed, slots)
}

// CallWithBuf is CallWith with the result's Entries built in buf's storage
// (the harness passes the last result's, so that a call allocates no
// list): the result is valid until buf's storage is used again. A pushed
// frame's arrays come from slab when it is not nil.
func (s *State) CallWithBuf(buf []EntryCall, slab *Slab, t, fn int, ret, funcAddr, retp uint64, claimed int, slots *[Slots]Slot) CallResult {
	r := CallResult{Entries: buf[:0]}
	if !s.Traced(fn) {
		return r
	}
	r.Traced = true
	tk := &s.Tasks[t]
	if !tk.HasStack {
		return r
	}
	c := s.Cfg
	curr := tk.Words(c) + claimed
	if curr+c.F+1 >= c.MaxOffset() {
		tk.Overrun++
		r.Overrun = true
		return r
	}
	curr += c.F + 1
	f := Frame{Ret: ret, Func: funcAddr, Retp: retp}
	na, nd, nw := 0, 0, 0 // acceptors, users with DATA, DATA words
	for i, sl := range slots {
		if sl.User < 0 {
			continue
		}
		u := s.Users[sl.User]
		if !c.NoFilter && !in(u.Filter, fn) {
			continue
		}
		e := EntryCall{Idx: i, User: sl.User, Gen: sl.Gen}
		ok := in(u.Accept, fn)
		if len(u.RejectAfter) > 0 && slices.Contains(u.RejectAfter, fn) {
			ok = false // reserves, writes, then returns 0: the kernel discards it
		}
		if ok && u.DataWords > 0 && !c.NoData {
			if curr+u.DataWords+1 >= c.MaxOffset() {
				ok = false
			} else {
				curr += u.DataWords + 1
				nd++
				nw += u.DataWords
			}
		}
		if ok {
			e.Accepted = true
			f.Bits |= 1 << i
			na++
			if c.GenCounter {
				f.Gens |= uint32(s.SlotGen[i]&3) << (2 * i)
			}
		}
		r.Entries = append(r.Entries, e)
	}
	// The frame's acceptors and DATA, filled in now that their numbers
	// are known: three arrays a push at most, instead of a few per user
	// (the model made 43 % of peer-spin's allocations), cut from the
	// slab's chunks when there is one (41 % of them still).
	if na > 0 {
		f.Accepted = slab.acceptors(na)
	}
	var words []uint64
	if nd > 0 {
		f.Data, words = slab.dataOf(nd), slab.wordsOf(nw)
	}
	for j := range r.Entries {
		e := &r.Entries[j]
		if !e.Accepted {
			continue
		}
		f.Accepted = append(f.Accepted, Acceptor{Idx: e.Idx, User: e.User, Gen: e.Gen})
		if n := s.Users[e.User].DataWords; n > 0 && !c.NoData {
			ws := words[:n:n]
			words = words[n:]
			for w := range ws {
				ws[w] = Payload(e.User, e.Gen, fn, retp, w)
			}
			f.Data = append(f.Data, Data{Idx: e.Idx, Words: ws})
			e.Data = ws
		}
	}
	if f.Bits == 0 {
		return r
	}
	if c.Bit0 {
		f.Bits |= 1
	}
	tk.Frames = append(tk.Frames, f)
	tk.Depth++
	r.Pushed = true
	return r
}

// RetCall is one retfunc the kernel runs on a return.
type RetCall struct {
	Idx, User, Gen int
	// Data is what fgraph_retrieve_data(Idx) finds on the frame (nil: none).
	Data []uint64
}

// ReturnResult is the outcome of a return through return_to_handler.
type ReturnResult struct {
	Frame Frame
	Calls []RetCall
}

// Return pops task t's top frame and lists the retfuncs the kernel runs:
// every slot whose bit is set and that holds a user now (whoever it is, as
// the kernel does; the protocol oracle judges that separately).
func (s *State) Return(t int) (ReturnResult, error) { return s.ReturnWith(t, &s.Slots) }

// ReturnWith is Return evaluated against the given user table (see
// CallWith).
func (s *State) ReturnWith(t int, slots *[Slots]Slot) (ReturnResult, error) {
	return s.ReturnWithBuf(nil, t, slots)
}

// ReturnWithBuf is ReturnWith with the result's Calls built in buf's
// storage (as CallWithBuf).
func (s *State) ReturnWithBuf(buf []RetCall, t int, slots *[Slots]Slot) (ReturnResult, error) {
	tk := &s.Tasks[t]
	if len(tk.Frames) == 0 {
		return ReturnResult{}, fmt.Errorf("return on task %d with no frame", t)
	}
	f := tk.Frames[len(tk.Frames)-1]
	tk.Frames = tk.Frames[:len(tk.Frames)-1]
	tk.Depth--
	r := ReturnResult{Frame: f, Calls: buf[:0]}
	for i := 0; i < Slots; i++ {
		sl := slots[i]
		if f.Bits&(1<<i) == 0 || sl.User < 0 {
			continue
		}
		if s.Cfg.GenCounter && uint32(s.SlotGen[i]&3) != (f.Gens>>(2*i))&3 {
			continue
		}
		rc := RetCall{Idx: i, User: sl.User, Gen: sl.Gen}
		if s.Users[sl.User].DataWords > 0 && !s.Cfg.NoData {
			for _, d := range f.Data {
				if d.Idx == i {
					rc.Data = d.Words
				}
			}
		}
		r.Calls = append(r.Calls, rc)
	}
	return r, nil
}

// Accepted reports whether (idx, user, gen) accepted frame f.
func (f *Frame) AcceptedBy(idx, user, gen int) bool {
	for _, a := range f.Accepted {
		if a.Idx == idx && a.User == user && a.Gen == gen {
			return true
		}
	}
	return false
}
