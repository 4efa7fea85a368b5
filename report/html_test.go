package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/harness"
	"github.com/fgcheck/fgcheck/report"
)

// node is an element of a parsed page.
type node struct {
	name  string
	attr  map[string]string
	kids  []*node
	text  strings.Builder // all text below the element
	class []string
}

// parse reads the page as XML: the template writes well-formed markup
// (every element closed, void elements self-closed, attributes quoted, no
// raw '<' or '&' in the style and script), so a strict XML parse checks the
// nesting of every element. golang.org/x/net/html is not a dependency of
// the main module; the e2e module parses the page with it and a browser.
func parse(t *testing.T, page []byte) *node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	root := &node{name: "#document"}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			n := &node{name: x.Name.Local, attr: map[string]string{}}
			for _, a := range x.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			n.class = strings.Fields(n.attr["class"])
			top := stack[len(stack)-1]
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			for _, n := range stack {
				n.text.Write(x)
			}
		}
	}
	if len(stack) != 1 {
		t.Fatalf("%d elements left open", len(stack)-1)
	}
	if len(root.kids) != 1 || root.kids[0].name != "html" {
		t.Fatalf("the document element is not <html>")
	}
	return root
}

func (n *node) walk(f func(*node)) {
	f(n)
	for _, k := range n.kids {
		k.walk(f)
	}
}

func (n *node) all(pred func(*node) bool) []*node {
	var out []*node
	n.walk(func(x *node) {
		if pred(x) {
			out = append(out, x)
		}
	})
	return out
}

func (n *node) byID(id string) []*node {
	return n.all(func(x *node) bool { return x.attr["id"] == id })
}

func (n *node) byClass(c string) []*node {
	return n.all(func(x *node) bool {
		for _, y := range x.class {
			if y == c {
				return true
			}
		}
		return false
	})
}

// replayPage replays a file with the trace on and makes its page.
func replayPage(t *testing.T, path string) *report.Page {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := harness.ParseFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Replay(f, harness.RunOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	p := &report.Page{Title: path, Scenario: f.Scenario.Name, Comments: f.Comments, File: string(f.Format()), Failed: res.Failed(), Events: res.Events}
	for _, v := range res.Violations {
		p.Verdict = append(p.Verdict, "violation "+v.String())
	}
	return p
}

func TestRenderCorpusFile(t *testing.T) {
	p := replayPage(t, "../corpus/irq-before-w3-clobbers-ret.txt")
	page, elided, err := report.Render(p, 0)
	if err != nil || elided != 0 {
		t.Fatalf("Render: %d left out, %v", elided, err)
	}
	doc := parse(t, page)
	v := doc.byID("violation")
	if len(v) != 1 || !strings.Contains(v[0].text.String(), "model: task0: words do not abstract to the model") {
		t.Fatalf("want one element with id=violation holding the model violation, got %d", len(v))
	}
	if !strings.Contains(string(page), `href="#violation"`) {
		t.Error("the top of the page does not link to the violation")
	}
	lanes := doc.byClass("lane")
	var names []string
	for _, l := range lanes {
		names = append(names, l.attr["data-ctx"])
	}
	if strings.Join(names, " ") != "task0 1" || len(doc.byClass("lane-irq")) != 1 {
		t.Errorf("lanes %q, want task0 and the IRQ 1 nested in it", names)
	}
	if ctxs := doc.byID("contexts"); len(ctxs) != 1 || len(ctxs[0].kids) != 2 {
		t.Errorf("the context legend does not list 2 contexts")
	}
	pics := doc.byClass("picture")
	if len(pics) != 3 {
		t.Fatalf("%d pictures, want 3 (before and after irq 1, at the violation)", len(pics))
	}
	if got := pics[2].text.String(); !strings.Contains(got, "at the violation") || !strings.Contains(got, "\u2190 curr_ret_stack") || !strings.Contains(got, "BITMAP") {
		t.Errorf("the violation's picture lacks its label, the curr_ret_stack mark or the BITMAP word:\n%s", got)
	}
	// The IRQ lane is inside the task lane; the before picture inside the IRQ.
	irq := doc.byClass("lane-irq")[0]
	if len(lanes[0].all(func(x *node) bool { return x == irq })) != 1 || len(irq.byClass("picture")) != 1 {
		t.Error("the IRQ lane is not nested in the task lane, or does not hold the picture before it")
	}
	if n := len(doc.byClass("ev-commit")); n < 20 {
		t.Errorf("%d commits on the page", n)
	}
	if len(doc.byClass("ev-barrier")) == 0 || len(doc.byClass("ev-exit")) != 1 {
		t.Error("no barrier or no interrupt exit on the page")
	}
	for _, tag := range []string{"link", "img", "iframe"} {
		if len(doc.all(func(x *node) bool { return x.name == tag })) > 0 {
			t.Errorf("the page has a <%s> element: it must be self-contained", tag)
		}
	}
	if doc.all(func(x *node) bool { return x.name == "script" && x.attr["src"] != "" }) != nil {
		t.Error("the page loads a script")
	}
	again, _, _ := report.Render(p, 0)
	if !bytes.Equal(page, again) {
		t.Error("two renders of one page differ")
	}
}

func TestRenderEscapes(t *testing.T) {
	const evil = `"><script>alert('x')</script><img src=x onerror=alert(1)> & </pre>`
	p := replayPage(t, "../corpus/rejecting-user-leaves-ghost-data.txt")
	p.Title = "corpus/" + evil + ".txt"
	p.Scenario = evil
	p.Comments = append(p.Comments, evil)
	p.File += "# " + evil + "\n"
	p.Facts = []string{evil}
	p.Events = append([]harness.TraceEvent{{Kind: harness.TraceNote, Text: evil}}, p.Events...)
	p.Events[1].Ctx = evil // a context name lands in data-ctx attributes
	page, _, err := report.Render(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<script>alert", "<img", "onerror=alert(1)>", "</pre>\""} {
		if bytes.Contains(page, []byte(raw)) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	doc := parse(t, page)
	if n := strings.Count(doc.text.String(), evil); n < 5 {
		t.Errorf("the hostile string appears %d times in the page's text, want it shown (escaped) at least 5 times", n)
	}
	if len(doc.all(func(x *node) bool { return x.name == "script" })) != 1 || len(doc.all(func(x *node) bool { return x.name == "img" })) != 0 {
		t.Error("a hostile string became an element")
	}
	if len(doc.all(func(x *node) bool { return x.attr["data-ctx"] == evil })) == 0 {
		t.Error("the hostile context name is not kept (escaped) in its data-ctx attribute")
	}
}

// bigPage is a page with n commits in an IRQ entered at the start, a
// picture every 50 events, and a violation inside the IRQ at the end.
func bigPage(t *testing.T, n int) *report.Page {
	base := replayPage(t, "../corpus/irq-before-w3-clobbers-ret.txt")
	var pic *harness.Picture
	for _, e := range base.Events {
		if e.Picture != nil {
			pic = e.Picture
		}
	}
	evs := []harness.TraceEvent{
		{Kind: harness.TraceOp, Ctx: "task0", CtxKind: harness.CtxTask, Text: "task0 call 1"},
		{Kind: harness.TraceEnter, Level: 1, Ctx: "1", CtxKind: harness.CtxIRQ, Text: "irq 1 in task0 at push.w2#1"},
	}
	for i := 0; i < n; i++ {
		if i%50 == 0 {
			evs = append(evs, harness.TraceEvent{Kind: harness.TracePicture, Level: 1, Text: "before irq 1", Picture: pic})
		}
		evs = append(evs, harness.TraceEvent{Kind: harness.TraceCommit, Level: 1, Ctx: "1", CtxKind: harness.CtxIRQ, Site: "push.w1",
			Addr: 0x5b, Where: "task0 ret_stack[3]", Value: uint64(i), Text: fmt.Sprintf("1 commit push.w1 [0x5b] = %#x", i)})
	}
	evs = append(evs,
		harness.TraceEvent{Kind: harness.TraceViolation, Level: 1, Ctx: "1", CtxKind: harness.CtxIRQ, Text: "VIOLATION unwinder: the last straw (at 1)"},
		harness.TraceEvent{Kind: harness.TracePicture, Level: 1, Text: "at the violation", Picture: pic})
	base.Events = evs
	base.Failed = true
	return base
}

func TestRenderCap(t *testing.T) {
	p := bigPage(t, 5000)
	full, _, err := report.Render(p, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	const max = 128 << 10
	if len(full) <= max {
		t.Fatalf("the uncapped page is %d bytes: not over the %d-byte cap, the test tests nothing", len(full), max)
	}
	page, elided, err := report.Render(p, max)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) > max || elided == 0 || elided >= len(p.Events) {
		t.Fatalf("capped page: %d bytes (cap %d), %d of %d events left out", len(page), max, elided, len(p.Events))
	}
	doc := parse(t, page)
	el := doc.byID("elided")
	if len(el) != 1 || !strings.Contains(el[0].text.String(), fmt.Sprintf("%d events left out", elided)) ||
		!strings.Contains(el[0].text.String(), fmt.Sprintf("the whole page would be %d bytes", len(full))) {
		t.Fatalf("no visible elision notice saying what was left out")
	}
	if !strings.Contains(string(page), "page cut: ") {
		t.Error("the header does not say the page was cut")
	}
	v := doc.byID("violation")
	if len(v) != 1 || !strings.Contains(v[0].text.String(), "the last straw") {
		t.Fatal("the violation was cut from the page")
	}
	text := doc.text.String()
	if !strings.Contains(text, "call 1") || !strings.Contains(text, fmt.Sprintf("= %#x", 4999)) {
		t.Error("the head of the trace or the events just before the violation are missing")
	}
	// The violation sits in the IRQ lane re-opened after the cut.
	lanes := doc.byClass("lane-irq")
	if len(lanes) != 2 || !strings.Contains(lanes[1].text.String(), "entered in the part left out") || len(lanes[1].byID("violation")) != 1 {
		t.Errorf("%d IRQ lanes; want the head's and a continued one holding the violation", len(lanes))
	}
	// A cap below the smallest page is an error.
	_, _, err = report.Render(p, 4000)
	var small *report.TooSmallError
	if !errors.As(err, &small) || small.Min <= 4000 {
		t.Errorf("Render with a 4000-byte cap: %v, want a TooSmallError", err)
	}
}

// A cut inside an IRQ re-opens the task's lane and the IRQ's lane, marked as
// entered in the part left out; no anonymous lane appears.
func TestRenderCapReopensLanes(t *testing.T) {
	p := bigPage(t, 3000)
	page, elided, err := report.Render(p, 96<<10)
	if err != nil || elided == 0 {
		t.Fatalf("Render: %d left out, %v", elided, err)
	}
	doc := parse(t, page)
	var got []string
	for _, l := range doc.byClass("lane") {
		got = append(got, l.attr["data-ctx"])
	}
	if strings.Join(got, " ") != "task0 1 task0 1" {
		t.Errorf("lanes %q, want task0 and irq 1 before the cut and again after it", got)
	}
	if n := len(doc.byClass("cont")); n != 2 {
		t.Errorf("%d lanes say they were entered in the part left out, want 2", n)
	}
}
