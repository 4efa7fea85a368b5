package differential

import (
	"fmt"

	"github.com/fgcheck/fgcheck/fgraph"
)

// store is one committed store.
type store struct {
	Site fgraph.Site
	Addr fgraph.Addr
	Val  fgraph.Word
	Line int // the C source line (0 on the port)
}

// region is the stores of one context between two fences.
type region struct {
	Ctx    string
	Level  int
	End    fgraph.Fence
	Site   fgraph.Site // the fence's site
	Stores []store
}

// snapshot is what the oracles and unwinders see at a quiescent point.
type snapshot struct {
	Tasks  []taskView
	LogLen int
	Log    []fgraph.Record
}

type taskView struct {
	Image   fgraph.Image
	RetAddr []fgraph.Word  // ftrace_graph_ret_addr() for each hijacked slot, top down, one idx cursor
	Frames  []fgraph.Frame // ftrace_graph_get_ret_stack(t, n) for n = 0.. until NULL
}

// liner is a target that knows the C line of its last store.
type liner interface{ LastLine() int }

// recorder is a harness.Observer that keeps one run.
type recorder struct {
	lines   liner
	open    map[string]*region // the region each context is in
	regions []region
	snaps   []snapshot
	logSeen int
}

func newRecorder(l liner) *recorder {
	return &recorder{lines: l, open: map[string]*region{}}
}

func (r *recorder) reset() {
	clear(r.open)
	r.regions = r.regions[:0]
	r.snaps = r.snaps[:0]
	r.logSeen = 0
}

// recorded is a copy of a recorder's record at a quiescent point (no
// region open), for prefix sharing (harness.SnapObserver).
type recorded struct {
	regions []region
	snaps   []snapshot
	logSeen int
}

// Save copies the record so far. The regions' stores and the snapshots'
// slices are not written again once recorded, so the copy shares them.
func (r *recorder) Save() any {
	if len(r.open) > 0 {
		panic("differential: a snap with a region open")
	}
	return &recorded{regions: append([]region(nil), r.regions...), snaps: append([]snapshot(nil), r.snaps...), logSeen: r.logSeen}
}

// Restore puts a record Save copied back: a run resumes from there.
func (r *recorder) Restore(saved any) {
	s := saved.(*recorded)
	clear(r.open)
	r.regions = append(r.regions[:0], s.regions...)
	r.snaps = append(r.snaps[:0], s.snaps...)
	r.logSeen = s.logSeen
}

func (r *recorder) Store(ctx string, level int, s fgraph.Site, a fgraph.Addr, v fgraph.Word) {
	if level < 0 {
		// A remote CPU's (or the setup's) stores: they run at one yield
		// point, atomically, on both targets; only their effect on the
		// state is observable, and the quiescent points compare that. (The
		// C also writes a new shadow stack before publishing it, where no
		// reader can see; the port writes those words through the task.)
		return
	}
	g := r.open[ctx]
	if g == nil {
		g = &region{Ctx: ctx, Level: level}
		r.open[ctx] = g
	}
	st := store{Site: s, Addr: a, Val: v}
	if r.lines != nil {
		st.Line = r.lines.LastLine()
	}
	g.Stores = append(g.Stores, st)
}

func (r *recorder) Fence(ctx string, level int, s fgraph.Site, f fgraph.Fence) {
	g := r.open[ctx]
	if g == nil || len(g.Stores) == 0 {
		return
	}
	g.End, g.Site = f, s
	r.regions = append(r.regions, *g)
	delete(r.open, ctx)
}

func (r *recorder) Quiescent(m *fgraph.Machine) {
	// Regions still open (a remote CPU's stores) close here.
	for ctx, g := range r.open {
		if len(g.Stores) > 0 {
			g.End, g.Site = fgraph.OpEnd, fgraph.SiteNone
			r.regions = append(r.regions, *g)
		}
		delete(r.open, ctx)
	}
	h := m.Hooks()
	m.SetHooks(nil) // the unwinders below must not be yield points
	defer m.SetHooks(h)
	cfg := m.Config()
	sn := snapshot{LogLen: len(m.Log)}
	sn.Log = append(sn.Log, m.Log[r.logSeen:]...)
	r.logSeen = len(m.Log)
	for t := 0; t < cfg.Tasks; t++ {
		tv := taskView{Image: m.Snapshot(t)}
		if !tv.Image.HasStack {
			// No shadow stack: no unwinder calls into fgraph for this task
			// (the oracles' rule too); the C would dereference NULL.
			sn.Tasks = append(sn.Tasks, tv)
			continue
		}
		idx := 0
		for i := m.SlotCount(t) - 1; i >= 0; i-- {
			sl := m.SlotAt(t, i)
			if sl.Val == fgraph.ReturnToHandler {
				tv.RetAddr = append(tv.RetAddr, m.FtraceGraphRetAddr(t, &idx, sl.Val, sl.Retp))
			}
		}
		for n := 0; n <= cfg.StackWords; n++ {
			f, ok := m.FtraceGraphGetRetStack(t, n)
			if !ok {
				break
			}
			tv.Frames = append(tv.Frames, f)
		}
		sn.Tasks = append(sn.Tasks, tv)
	}
	r.snaps = append(r.snaps, sn)
}

func (s store) String() string {
	w := fmt.Sprintf("%s [%d] = %#x", s.Site, s.Addr, s.Val)
	if s.Line > 0 {
		w += fmt.Sprintf(" (fgraph.c:%d)", s.Line)
	}
	return w
}
