package fgraph

// Ops is one user of the function-graph tracer (struct fgraph_ops). Its entry
// and return behaviour is declarative, and it records what it saw in
// Machine.Log so oracles can check it.
type Ops struct {
	Name string
	// Filter is the ftrace filter hash: the functions this user traces.
	// Empty means every function.
	Filter []int
	// Accept is the set of functions entryfunc returns non-zero for.
	// Empty means every function that passed the filter.
	Accept []int
	// DataBytes is the size entryfunc reserves with fgraph_reserve_data
	// (0: none). A failed reservation makes entryfunc return 0. It fills
	// the payload with Pattern words and retfunc checks them.
	DataBytes int
	// CallInEntry, if non-zero, is a traced function entryfunc calls (F14).
	CallInEntry int
	// Notrace is set_graph_notrace: on entry to one of these functions the
	// user sets TRACE_GRAPH_NOTRACE in its task variable and accepts (so
	// that its retfunc clears it); while the flag is set it accepts
	// nothing. As trace_graph_entry()/trace_graph_return() do since
	// b84214890a9b (with the c8c9b1d2d5b4 mask fix). Not in the seed (no
	// task variables). The harness's scenarios do not use it.
	Notrace []int
	// ParentDepth, if non-zero, makes the user read the shadow stack the
	// way the function profiler does. On latest (a312a0f7834e, v6.13+)
	// retfunc reads its data of the frame ParentDepth levels up with
	// fgraph_retrieve_parent_data(), as profile_graph_return() does with
	// depth 1; Record.Parent holds what it found. Before that commit
	// (v6.12, v6.11, seed) profile_graph_entry() reads
	// ftrace_graph_get_ret_stack(current, 0) and profile_graph_return()
	// reads ftrace_graph_get_ret_stack(current, ParentDepth) and (current,
	// 0); Record.Prof holds the funcs of the frames found.
	ParentDepth int
	// CallInReturn, if non-zero, is a traced function retfunc calls (the
	// recursion loop of 0db0934e7f9b). The harness's scenarios do not use
	// it; the port's tests do.
	CallInReturn int
	// RejectAfter lists functions for which entryfunc reserves its data
	// and then returns 0.
	RejectAfter []int

	k   int  // index in Machine.ops
	gen int  // registration generation of the current registration
	reg bool // between register and unregister
	in  [8]int
}

// Gen is the registration generation of the user's current (or last)
// registration: the value of a machine-wide counter bumped by each register.
func (o *Ops) Gen() int { return o.gen }

// Index is the ops handle index in the machine.
func (o *Ops) Index() int { return o.k }

func (o *Ops) reset() { o.gen, o.reg, o.in = 0, false, [8]int{} }

// Traces reports whether fn is in the filter.
func (o *Ops) Traces(fn int) bool { return contains(o.Filter, fn) }

// Accepts reports whether entryfunc accepts fn.
func (o *Ops) Accepts(fn int) bool { return contains(o.Accept, fn) }

func contains(set []int, fn int) bool {
	if len(set) == 0 {
		return true
	}
	for _, f := range set {
		if f == fn {
			return true
		}
	}
	return false
}

// AddOps adds a user to the machine (not registered yet) and returns it.
func (m *Machine) AddOps(o *Ops) *Ops {
	if len(m.ops) >= MaxOps {
		m.warn(SiteRegister, "AddOps: more than %d users", MaxOps)
		return nil
	}
	o.k = len(m.ops)
	o.reset()
	m.ops = append(m.ops, o)
	m.Mem[m.opsAddr(o.k, OpsIdx)] = intWord(-1)
	return o
}

// Ops returns the machine's users in the order they were added.
func (m *Machine) Ops() []*Ops { return m.ops }

func (m *Machine) opsAddr(k, field int) Addr { return AddrOps + Addr(k*OpsWords+field) }

// opsOf maps a pointer value to an ops, nil for the stub or NULL.
func (m *Machine) opsOf(h Word) *Ops {
	if h < 2 || int(h-2) >= len(m.ops) {
		return nil
	}
	return m.ops[h-2]
}

// Pattern is the payload word i that user k writes in registration
// generation gen for a frame of fn whose return address lives at retp (the
// user reads the stack pointer from fregs; retp identifies a live frame).
func Pattern(k, gen, fn int, retp Word, i int) Word {
	return 0xda<<56 | Word(k&0xf)<<52 | Word(gen&0xfff)<<40 | Word(fn&0xffff)<<24 |
		(retp&0xffff)<<8 | Word(i&0xff)
}

// RecordKind says which callback a Record is.
type RecordKind uint8

const (
	RecEntry  RecordKind = iota // entryfunc ran
	RecReturn                   // retfunc ran
)

// Record is what a user saw in one callback.
type Record struct {
	Kind  RecordKind
	Task  int
	Level int
	Ops   int // user index (Machine.Ops), -1 for a callback through the stub
	Gen   int // the user's registration generation when it ran
	Idx   int // gops->idx passed to the callback
	Func  Word
	Depth int
	// Accepted: entryfunc's return value.
	Accepted bool
	// Data: entry: the payload written; return: the payload retrieved
	// (nil when fgraph_retrieve_data returned NULL).
	Data []Word
	// Torn: the callback was reached through a re-read of fgraph_array[i]
	// whose value differed from the one the stub check saw.
	Torn bool
	// Reentered: the user's entryfunc was already running in this context.
	Reentered bool
	// Nest counts the traced calls made from inside entry callbacks that
	// this callback runs in (0: a call of the context's own program).
	Nest int
	// Parent: what fgraph_retrieve_parent_data(idx, ParentDepth) returned
	// to a retfunc (nil: NULL).
	Parent []Word
	// Prof: the func of each frame the profiler's
	// ftrace_graph_get_ret_stack() calls returned, in call order (0:
	// NULL): entry (current, 0); return (current, ParentDepth), (current,
	// 0). Ops.ParentDepth before v6.13.
	Prof []Word
	// Transition: the task held TRACE_CTX_TRANSITION when the callback ran
	// (a nested call in the same context got the recursion lock that way).
	Transition bool
	// Handler numbers, for a retfunc, the return_to_handler run it came
	// from (Machine.Handlers at that level).
	Handler int
	// Gops: the gops pointer passed (differs from the user's handle when a
	// static call and fgraph_direct_gops disagree).
	Gops Word
}

// Trace is struct ftrace_graph_ent / ftrace_graph_ret (the fields fgraph fills).
type Trace struct {
	Func     Word
	Depth    int
	Overrun  int
	Calltime Word
	// Retp is not a kernel field: it stands for what a user reads from
	// fregs (the stack pointer), to tag its payload with the frame.
	Retp Word
}

// entryfunc runs user o's entry callback for gops (the pointer passed).
func (m *Machine) entryfunc(o *Ops, gops Word, tr *Trace, torn bool) bool {
	idx := -1
	if g := m.opsOf(gops); g != nil {
		idx = wordInt(m.ld(SiteUserIdx, m.opsAddr(g.k, OpsIdx)))
	}
	lvl := m.Level & 7
	if m.NoLog {
		o.in[lvl]++
		ok := m.entryBody(o, idx, tr, nil)
		o.in[lvl]--
		return ok
	}
	rec := Record{Kind: RecEntry, Task: m.Current, Level: m.Level, Nest: m.nest[m.Level&7], Ops: o.k, Gen: o.gen, Idx: idx,
		Func: tr.Func, Depth: tr.Depth, Torn: torn, Gops: gops, Transition: m.RecursionTransition(m.Current)}
	if o.in[lvl] > 0 {
		rec.Reentered = true
	}
	o.in[lvl]++
	ok := m.entryBody(o, idx, tr, &rec)
	o.in[lvl]--
	m.Log = append(m.Log, rec)
	return ok
}

// entryBody is the declarative entryfunc: accept, call, reserve, write. rec
// is nil when the machine does not log.
func (m *Machine) entryBody(o *Ops, idx int, tr *Trace, rec *Record) bool {
	fn := FuncOf(tr.Func)
	if len(o.Notrace) > 0 {
		if tv := m.fgraphGetTaskVar(idx); tv >= 0 {
			// trace_graph_entry(): task_var = fgraph_get_task_var(gops).
			v := m.ld(SiteTaskVar, tv)
			if v&TraceGraphNotrace != 0 {
				return false
			}
			if slicesContains(o.Notrace, fn) {
				// "Need to return 1 to have the return called that will
				// clear the NOTRACE bit."
				// *task_var |= TRACE_GRAPH_NOTRACE: a second load in the source.
				m.st(SiteTaskVar, tv, m.reread(SiteTaskVarUse, tv, v, Plain)|TraceGraphNotrace)
				if rec != nil {
					rec.Accepted = true
				}
				return true
			}
		}
	}
	if !o.Accepts(fn) && !(len(o.RejectAfter) > 0 && contains(o.RejectAfter, fn)) {
		return false
	}
	if o.CallInEntry != 0 {
		// A traced call from inside the callback, in the same context: the
		// recursion lock lets the first one through on
		// TRACE_CTX_TRANSITION and refuses the next (trace_recursion.h).
		m.nest[m.Level&7]++
		if m.NestedCall != nil {
			m.NestedCall(o.CallInEntry)
		} else {
			m.Call(o.CallInEntry, false)
			m.Return()
		}
		m.nest[m.Level&7]--
	}
	if o.ParentDepth > 0 && m.cfg.Variant != Latest {
		// profile_graph_entry() before a312a0f7834e:
		// ret_stack = ftrace_graph_get_ret_stack(current, 0); if (ret_stack)
		// ret_stack->subtime = 0. (subtime is CONFIG_FUNCTION_PROFILER's
		// frame field, not in the port's layout: docs/fidelity.md.)
		f := m.profGetRetStack(0)
		if rec != nil {
			rec.Prof = append(rec.Prof, f)
		}
	}
	if o.DataBytes > 0 && m.cfg.Variant != Seed {
		// fgraph_reserve_data is exported and called out of line.
		m.fence(SiteReserveCall, CallIn)
		p := m.core.FgraphReserveData(idx, o.DataBytes)
		m.fence(SiteReserveCall, CallOut)
		if p < 0 {
			return false
		}
		n := (o.DataBytes + LongSize - 1) / LongSize
		if rec != nil {
			rec.Data = m.recordWords(n)
		}
		for i := 0; i < n; i++ {
			v := Pattern(o.k, o.gen, fn, tr.Retp, i)
			if rec != nil {
				rec.Data[i] = v
			}
			m.st(SiteUserPayload, m.word(p+i), v)
		}
	}
	if len(o.RejectAfter) > 0 && contains(o.RejectAfter, fn) {
		if rec != nil {
			rec.Data = nil
		}
		return false
	}
	if rec != nil {
		rec.Accepted = true
	}
	return true
}

// retfunc runs user o's return callback.
func (m *Machine) retfunc(o *Ops, gops Word, tr *Trace, torn bool) {
	idx := -1
	if g := m.opsOf(gops); g != nil {
		idx = wordInt(m.ld(SiteUserIdx, m.opsAddr(g.k, OpsIdx)))
	}
	rec := Record{Kind: RecReturn, Task: m.Current, Level: m.Level, Nest: m.nest[m.Level&7], Ops: o.k, Gen: o.gen, Idx: idx,
		Func: tr.Func, Depth: tr.Depth, Torn: torn, Gops: gops, Accepted: true, Handler: m.Handlers[m.Level&7]}
	if len(o.Notrace) > 0 {
		if tv := m.fgraphGetTaskVar(idx); tv >= 0 {
			// trace_graph_return(): clear the flag and return.
			if v := m.ld(SiteTaskVar, tv); v&TraceGraphNotrace != 0 {
				// *task_var &= ~TRACE_GRAPH_NOTRACE: a second load in the source.
				m.st(SiteTaskVar, tv, m.reread(SiteTaskVarUse, tv, v, Plain)&^TraceGraphNotrace)
				if !m.NoLog {
					m.Log = append(m.Log, rec)
				}
				return
			}
		}
	}
	if o.DataBytes > 0 && m.cfg.Variant != Seed {
		var p, size int
		m.fence(SiteRetrieveCall, CallIn)
		p, size = m.core.FgraphRetrieveData(idx)
		m.fence(SiteRetrieveCall, CallOut)
		if p >= 0 {
			n := size / LongSize
			if m.NoLog {
				for i := 0; i < n; i++ {
					m.ld(SiteUserPayloadLoad, m.word(p+i))
				}
			} else {
				rec.Data = m.recordWords(n)
				for i := 0; i < n; i++ {
					rec.Data[i] = m.ld(SiteUserPayloadLoad, m.word(p+i))
				}
			}
		}
	}
	if o.ParentDepth > 0 && m.cfg.Variant != Latest {
		// profile_graph_return() before a312a0f7834e (with graph-time off):
		// ret_stack = ftrace_graph_get_ret_stack(current, 1) for the
		// parent's subtime, then ftrace_graph_get_ret_stack(current, 0).
		p := m.profGetRetStack(o.ParentDepth)
		self := m.profGetRetStack(0)
		if !m.NoLog {
			rec.Prof = append(rec.Prof, p, self)
		}
	}
	if o.ParentDepth > 0 && m.cfg.Variant == Latest {
		// profile_graph_return(): parent = fgraph_retrieve_parent_data(
		// gops->idx, &size, 1). (The profiler then adds the call time to
		// the parent's subtime; that write is not ported: docs/fidelity.md.)
		m.fence(SiteRetrieveCall, CallIn)
		p, size := m.fgraphRetrieveParentData(idx, o.ParentDepth)
		m.fence(SiteRetrieveCall, CallOut)
		if p >= 0 {
			rec.Parent = m.recordWords(size / LongSize)
			for i := range rec.Parent {
				rec.Parent[i] = m.ld(SiteUserPayloadLoad, m.word(p+i))
			}
		}
	}
	if o.CallInReturn != 0 {
		m.Call(o.CallInReturn, false)
		m.Return()
	}
	if !m.NoLog {
		m.Log = append(m.Log, rec)
	}
}

// profGetRetStack is the profiler's ftrace_graph_get_ret_stack(current, n),
// called out of line; it returns the frame's func, or 0 for NULL.
func (m *Machine) profGetRetStack(n int) Word {
	m.fence(SiteGetRetStackCall, CallIn)
	f, ok := m.core.FtraceGraphGetRetStack(m.Current, n)
	m.fence(SiteGetRetStackCall, CallOut)
	if !ok {
		return 0
	}
	return f.Func
}

// stubCall records a callback through the stub reached after the stub check
// passed (a torn read of fgraph_array[i]).
func (m *Machine) stubCall(kind RecordKind, tr *Trace) {
	m.Log = append(m.Log, Record{Kind: kind, Task: m.Current, Level: m.Level, Nest: m.nest[m.Level&7], Ops: -1, Idx: -1,
		Func: tr.Func, Depth: tr.Depth, Torn: true, Gops: HandleStub})
}

// FuncOf maps a function address back to its symbolic number (0 if none).
func FuncOf(a Word) int {
	if a < funcBase {
		return 0
	}
	return int((a - funcBase) >> 8)
}

// slicesContains is membership in a set that, unlike contains, means
// nothing when empty.
func slicesContains(set []int, fn int) bool {
	for _, f := range set {
		if f == fn {
			return true
		}
	}
	return false
}

// recordWords returns n zeroed words for a callback record's payload
// (Record.Data, Record.Parent), cut from a chunk of recordChunk words: a
// record is written once, when it is made, and the chunk only moves on,
// so no two records share a word however the log is cut back and copied
// (a snap keeps records whose words later records must not overwrite).
// One allocation per 256 words instead of one per record: they were 2.5 M
// of std C=3's 5.5 M allocations. Never nil (the state encoding tells
// a record with no payload from one with an empty one).
func (m *Machine) recordWords(n int) []Word {
	if n == 0 {
		return []Word{}
	}
	if len(m.recFree) < n {
		m.recFree = make([]Word, max(recordChunk, n))
	}
	w := m.recFree[:n:n]
	m.recFree = m.recFree[n:]
	return w
}

// recordChunk is the length of recordWords' chunks.
const recordChunk = 256
