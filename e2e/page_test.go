package e2e_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	pagePath     = flag.String("page", "out/page.html", "the page written by fgcheck replay --html")
	outDir       = flag.String("out", "out", "directory for the screenshots")
	wantLanes    = flag.Int("lanes", 0, "expected number of lanes in the timeline (0: at least 2)")
	wantContexts = flag.Int("contexts", 0, "expected number of contexts in the legend (0: as many as distinct lane contexts)")
	chromium     = flag.String("chromium", "/usr/bin/chromium", "the browser")
)

// facts is what the page script reports about the rendered page.
type facts struct {
	Lanes, Contexts, Pictures, OpenPictures, CurrRows, ViolationPictures int
	LaneCtx                                                              []string
	ViolationTop, ViolationBottom, ViewportHeight, HeaderBottom          float64
	ViolationOnTop                                                       bool
	ViolationBorder, ViolationText, WordFont                             string
	Barriers, Commits                                                    int
}

const factsJS = `(() => {
  const v = document.getElementById("violation");
  const r = v.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + 30, r.top + 12);
  const lanes = Array.from(document.querySelectorAll("#timeline .lane"));
  return {
    Lanes: lanes.length,
    LaneCtx: lanes.map(l => l.dataset.ctx),
    Contexts: document.querySelectorAll("#contexts li").length,
    Pictures: document.querySelectorAll("details.picture").length,
    OpenPictures: document.querySelectorAll("details.picture[open] table.words").length,
    CurrRows: document.querySelectorAll("details.picture table.words tr.curr").length,
    ViolationPictures: document.querySelectorAll("details.picture.vpic tr.curr").length,
    ViolationTop: r.top, ViolationBottom: r.bottom, ViewportHeight: window.innerHeight,
    HeaderBottom: document.getElementById("top").getBoundingClientRect().bottom,
    ViolationOnTop: hit !== null && hit.closest("#violation") === v,
    ViolationBorder: getComputedStyle(v).borderTopColor,
    ViolationText: v.innerText,
    WordFont: getComputedStyle(document.querySelector("table.words td.hex")).fontFamily,
    Barriers: document.querySelectorAll(".ev-barrier").length,
    Commits: document.querySelectorAll(".ev-commit").length,
  };
})()`

func TestPage(t *testing.T) {
	if _, err := os.Stat(*chromium); err != nil {
		msg := fmt.Sprintf("no browser at %s (install it with apt-get install -y chromium, or pass -chromium PATH): %v", *chromium, err)
		if os.Getenv("FGCHECK_E2E_REQUIRE") != "" {
			t.Fatal(msg) // CI: a missing browser is a failure, not a skip
		}
		t.Skip("skipped: " + msg)
	}
	abs, err := filepath.Abs(*pagePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("no page to check (make e2e writes it with fgcheck replay --html): %v", err)
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: abs}).String()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(*chromium),
		chromedp.Headless, // --headless --hide-scrollbars --mute-audio
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	// Start the browser and open the tab, then listen to it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", *chromium, err)
	}
	var mu sync.Mutex
	var problems, requests []string
	err = chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, fmt.Sprintf("console %s", e.Type))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("browser: %s: %v", what, err)
		}
	}
	step("open the page", chromedp.Do(ctx,
		chromedp.EmulateViewport(1400, 1000),
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(chromedp.ID("violation")),
		chromedp.WaitVisible(chromedp.CSS("details.picture table.words")),
	))
	f, err := chromedp.Run(ctx, chromedp.Evaluate[facts](factsJS))
	step("read the page", err)
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	step("screenshot", err)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`))
	step("scroll to the top", err)
	top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	step("screenshot of the top", err)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#timeline .lane .lane").scrollIntoView({block: "start"}); window.scrollBy(0, -120); true`))
	step("scroll to the first nested lane", err)
	nested, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	step("screenshot of the first nested lane", err)
	shots := map[string][]byte{"screenshot.png": shot, "top.png": top, "nested.png": nested}
	cut, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const e = document.getElementById("elided"); if (e === null) { return false; } e.scrollIntoView({block: "center"}); return true; })()`))
	step("look for an elision", err)
	if cut {
		shots["elided.png"], err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		step("screenshot of the elision", err)
	}
	step("untick show barriers", chromedp.Do(ctx, chromedp.Click(chromedp.ID("show-barriers"))))
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector(".ev-barrier"); return b !== null && getComputedStyle(b).display === "none"; })()`))
	step("read the barriers", err)
	for name, png := range shots {
		p := filepath.Join(*outDir, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", p, len(png))
	}
	js, _ := json.MarshalIndent(f, "", "  ")
	t.Logf("page facts: %s", js)

	// The violation: visible in the viewport once the page opened, below
	// the sticky header and not covered by it, in red.
	if f.ViolationTop < f.HeaderBottom-1 || f.ViolationTop >= f.ViewportHeight {
		t.Errorf("the violation is not in view: its top at %.0fpx, header bottom %.0fpx, viewport %.0fpx", f.ViolationTop, f.HeaderBottom, f.ViewportHeight)
	}
	if !f.ViolationOnTop {
		t.Error("something covers the violation element")
	}
	if f.ViolationBorder != "rgb(207, 34, 46)" {
		t.Errorf("violation border %s, want the red rgb(207, 34, 46)", f.ViolationBorder)
	}
	if !strings.Contains(f.ViolationText, "VIOLATION") {
		t.Errorf("violation element text %q", f.ViolationText)
	}
	// The timeline.
	switch {
	case *wantLanes > 0 && f.Lanes != *wantLanes:
		t.Errorf("%d lanes %q, want %d", f.Lanes, f.LaneCtx, *wantLanes)
	case *wantLanes == 0 && f.Lanes < 2:
		t.Errorf("%d lanes, want a task and at least one nested context", f.Lanes)
	}
	want := *wantContexts
	if want == 0 {
		// One per distinct lane context (a cut page re-opens the lanes
		// that were open at the cut).
		distinct := map[string]bool{}
		for _, c := range f.LaneCtx {
			distinct[c] = true
		}
		want = len(distinct)
	}
	if f.Contexts != want {
		t.Errorf("%d contexts in the legend, want %d", f.Contexts, want)
	}
	if f.Commits == 0 || f.Barriers == 0 {
		t.Errorf("%d commits and %d barriers on the timeline", f.Commits, f.Barriers)
	}
	// The pictures: open, curr_ret_stack marked in each, one at the violation.
	if f.Pictures < 2 || f.OpenPictures < f.Pictures || f.CurrRows < f.Pictures || f.ViolationPictures < 1 {
		t.Errorf("pictures: %d, %d open with a word table, %d curr_ret_stack marks, %d at the violation", f.Pictures, f.OpenPictures, f.CurrRows, f.ViolationPictures)
	}
	if !strings.Contains(f.WordFont, "Mono") && !strings.Contains(f.WordFont, "monospace") {
		t.Errorf("words are drawn in %q, want a monospace font", f.WordFont)
	}
	if !hidden {
		t.Error("unticking \"show barriers\" does not hide the barriers")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if u != pageURL {
			t.Errorf("the page loaded %s: it must be self-contained", u)
		}
	}
	if len(problems) > 0 {
		t.Errorf("script problems: %q", problems)
	}
}
