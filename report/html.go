package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"
	"sync"

	"github.com/fgcheck/fgcheck/harness"
)

// Page is what a report shows.
type Page struct {
	// Title names the page (the file replayed).
	Title string
	// Scenario is the scenario's name; Facts are short lines about it
	// ("variant latest", "mutant M-push-2").
	Scenario string
	Facts    []string
	// Comments are the file's '#' lines (its story).
	Comments []string
	// File is the file's text, shown folded.
	File string
	// Verdict holds the verdict lines as replay prints them; Failed says
	// whether the run found a violation, Mismatch whether the verdict
	// contradicts the file's expect line.
	Verdict  []string
	Failed   bool
	Mismatch bool
	// Events is the structured trace (harness.Result.Events).
	Events []harness.TraceEvent
}

// DefaultMaxBytes is the default size cap of a page (4 MiB).
const DefaultMaxBytes = 4 << 20

//go:embed page.html.tmpl
var pageTemplate string

// pageTmpl is the page's template, parsed at the first page written: a
// parse at package init cost every fgcheck process, pictures or not,
// about a millisecond of its start-up (fgcheck version: 7.4-7.7 ms with
// it, 5.9-6.5 ms without, 7 Dec 2026).
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"hex":           hexWord,
		"rowclass":      rowClass,
		"parity":        func(n int) int { return n & 1 },
		"trimviolation": func(s string) string { return strings.TrimPrefix(s, "VIOLATION ") },
		"firstline": func(s string) string {
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				return strings.TrimRight(s[:i], ":") + " ..."
			}
			return s
		},
		"arrow": func(s string) string { return strings.Replace(s, "<- ", "\u2190 ", 1) },
	}).Parse(pageTemplate))
})

// rowClass is the CSS class suffix of a picture row's kind.
func rowClass(k harness.RowKind) string {
	switch k {
	case harness.RowStale:
		return "stale"
	case harness.RowRet:
		return "ret"
	case harness.RowFunc:
		return "func"
	case harness.RowCalltime:
		return "calltime"
	case harness.RowRetp:
		return "retp"
	case harness.RowReserved:
		return "reserved"
	case harness.RowBitmap:
		return "bitmap"
	case harness.RowData:
		return "data"
	case harness.RowPayload:
		return "payload"
	}
	return "unreached"
}

// TooSmallError says that even the smallest page, with every event before
// the violation left out, is over the cap.
type TooSmallError struct{ Min, Max int }

func (e *TooSmallError) Error() string {
	return fmt.Sprintf("report: the smallest page (every event before the violation left out) is %d bytes, over the cap of %d bytes", e.Min, e.Max)
}

// Render returns the page and the number of events it left out. If the
// whole page would be larger than maxBytes (0: DefaultMaxBytes), it keeps as
// many events as fit: a third from the head of the trace, the rest just
// before the first violation (or the end), and every event from the
// violation on; the page says what it left out. It fails with
// *TooSmallError when even the page without those events is over the cap.
func Render(p *Page, maxBytes int) (page []byte, elided int, err error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	full, err := render(p, cut{head: len(p.Events)})
	if err != nil || len(full) <= maxBytes {
		return full, 0, err
	}
	n := len(p.Events)
	vi := n
	for i := range p.Events {
		if p.Events[i].Kind == harness.TraceViolation {
			vi = i
			break
		}
	}
	// Keep k of the events before vi: the largest k whose page fits.
	try := func(k int) ([]byte, error) {
		h := k / 3
		return render(p, cut{head: h, tail: vi - (k - h), elided: true, full: len(full), max: maxBytes})
	}
	lo, hi := 0, vi // the page with k = lo fits (checked first), k = hi does not
	best, err := try(0)
	if err != nil {
		return nil, 0, err
	}
	if len(best) > maxBytes {
		return nil, 0, &TooSmallError{Min: len(best), Max: maxBytes}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		b, err := try(mid)
		if err != nil {
			return nil, 0, err
		}
		if len(b) <= maxBytes {
			lo, best = mid, b
		} else {
			hi = mid
		}
	}
	return best, vi - lo, nil
}

// cut says which events a page keeps: [0, head) and [tail, end).
type cut struct {
	head, tail int
	elided     bool
	full, max  int // bytes of the whole page, the cap
}

// view is the template's data.
type view struct {
	*Page
	Contexts []lane
	Root     *lane
	Elided   *elision
	// Violation is the text of the first violation, "" when none.
	Violation string
	Known     int
	Events    int
}

// lane is one context's block of the timeline; the root holds the lanes of
// the tasks and the setup notes.
type lane struct {
	Ctx, Kind, Label string
	Level            int
	// Continued: the lane was entered in the part of the trace left out.
	Continued bool
	Items     []item
}

// item is one entry of a lane: an event, a nested lane, or the elision.
type item struct {
	N      int // event number, 1-based
	Ev     *harness.TraceEvent
	Text   string // the event's text without its context's name
	ID     string // "violation" for the first violation
	Where  string // the context's name: "task0", "irq 1", "remote 3"
	Lane   *lane
	Elided *elision
}

// elision says what a capped page left out.
type elision struct {
	From, To, Count int // event numbers, inclusive
	Full, Max       int // bytes of the whole page, the cap
}

func render(p *Page, c cut) ([]byte, error) {
	v := &view{Page: p, Events: len(p.Events)}
	for i := range p.Events {
		e := &p.Events[i]
		if e.Kind == harness.TraceViolation && v.Violation == "" {
			v.Violation = e.Text
		}
		if e.Kind == harness.TraceKnown {
			v.Known++
		}
	}
	b := &builder{root: &lane{Kind: "root", Level: -1}, seen: map[string]bool{}}
	b.stack = []*lane{b.root}
	if !c.elided {
		for i := range p.Events {
			b.add(i, &p.Events[i])
		}
	} else {
		for i := 0; i < c.head; i++ {
			b.add(i, &p.Events[i])
		}
		v.Elided = &elision{From: c.head + 1, To: c.tail, Count: c.tail - c.head, Full: c.full, Max: c.max}
		b.stack = b.stack[:1]
		b.root.Items = append(b.root.Items, item{Elided: v.Elided})
		// Re-open the contexts that were open at the cut: the task that
		// was running, and the interrupts and remote actions in it.
		for i := c.tail - 1; i >= 0; i-- {
			if e := &p.Events[i]; e.Level == 0 && e.Ctx != "" {
				b.open(0, e.Ctx, e.CtxKind, displayName(e.Ctx, e.CtxKind), true)
				break
			}
		}
		for _, e := range openAt(p.Events, c.tail) {
			b.open(e.Level, e.Ctx, e.CtxKind, e.Text, true)
		}
		for i := c.tail; i < len(p.Events); i++ {
			b.add(i, &p.Events[i])
		}
	}
	v.Root, v.Contexts = b.root, b.contexts
	var buf bytes.Buffer
	if err := pageTmpl().Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// openAt returns the enter events of the interrupts and remote actions open
// just before event i, outermost first.
func openAt(evs []harness.TraceEvent, i int) []*harness.TraceEvent {
	var st []*harness.TraceEvent
	for j := 0; j < i; j++ {
		e := &evs[j]
		switch e.Kind {
		case harness.TraceEnter:
			for len(st) > 0 && st[len(st)-1].Level >= e.Level {
				st = st[:len(st)-1]
			}
			st = append(st, e)
		case harness.TraceExit:
			for len(st) > 0 && st[len(st)-1].Level >= e.Level {
				st = st[:len(st)-1]
			}
		}
	}
	return st
}

// builder nests the flat event list into lanes by level and context.
type builder struct {
	root     *lane
	stack    []*lane // stack[0] is the root; stack[k] is at level k-1
	contexts []lane  // every context, in order of appearance
	seen     map[string]bool
	violated bool
}

// open starts a lane for ctx at level, under the lane of level-1.
func (b *builder) open(level int, ctx, kind, label string, continued bool) *lane {
	b.popTo(level) // keep levels < level
	for len(b.stack) < level+1 {
		// A level with no lane (a malformed or cut trace): an anonymous one.
		b.push(&lane{Ctx: "?", Kind: "unknown", Label: "?", Level: len(b.stack) - 1, Continued: true})
	}
	l := &lane{Ctx: ctx, Kind: kind, Label: label, Level: level, Continued: continued}
	b.push(l)
	if !b.seen[ctx+"\x00"+kind] {
		b.seen[ctx+"\x00"+kind] = true
		b.contexts = append(b.contexts, lane{Ctx: ctx, Kind: kind, Label: displayName(ctx, kind)})
	}
	return l
}

func (b *builder) push(l *lane) {
	top := b.stack[len(b.stack)-1]
	top.Items = append(top.Items, item{Lane: l})
	b.stack = append(b.stack, l)
}

// popTo closes the lanes at level and deeper.
func (b *builder) popTo(level int) {
	if len(b.stack) > level+1 {
		b.stack = b.stack[:max(level+1, 1)]
	}
}

func displayName(ctx, kind string) string {
	switch kind {
	case harness.CtxIRQ, harness.CtxNMI:
		return kind + " " + ctx
	}
	return ctx
}

func (b *builder) add(i int, e *harness.TraceEvent) {
	it := item{N: i + 1, Ev: e, Text: e.Text, Where: displayName(e.Ctx, e.CtxKind)}
	if e.Kind != harness.TraceExit {
		it.Text = strings.TrimPrefix(e.Text, e.Ctx+" ")
	}
	if e.Kind == harness.TraceViolation && !b.violated {
		b.violated, it.ID = true, "violation"
	}
	var l *lane
	switch {
	case e.Kind == harness.TraceEnter:
		l = b.open(e.Level, e.Ctx, e.CtxKind, e.Text, false)
		it.Text = e.Text
	case e.Ctx == "" && e.Kind != harness.TracePicture:
		b.popTo(0)
		l = b.root
	case e.Kind == harness.TracePicture:
		// A picture has no context: it goes to the lane at its level.
		if len(b.stack) < e.Level+2 {
			l = b.open(e.Level, "?", "unknown", "?", true)
		} else {
			b.popTo(e.Level + 1)
			l = b.stack[e.Level+1]
		}
	default:
		if len(b.stack) >= e.Level+2 && b.stack[e.Level+1].Ctx == e.Ctx {
			b.popTo(e.Level + 1)
			l = b.stack[e.Level+1]
		} else {
			kind := e.CtxKind
			label := displayName(e.Ctx, kind)
			l = b.open(e.Level, e.Ctx, kind, label, e.Level > 0)
		}
	}
	l.Items = append(l.Items, it)
	if e.Kind == harness.TraceExit {
		b.popTo(e.Level)
	}
}

// hexDigits is a word in hex split into its leading zeros and the rest, so
// the page can dim the zeros.
type hexDigits struct{ Zeros, Digits string }

func hexWord(w uint64) hexDigits {
	s := fmt.Sprintf("%016x", w)
	t := strings.TrimLeft(s, "0")
	if t == "" {
		t = "0"
	}
	return hexDigits{Zeros: s[:16-len(t)], Digits: t}
}
