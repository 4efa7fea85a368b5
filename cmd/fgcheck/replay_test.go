package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const htmlCorpusFile = "../../corpus/irq-before-w3-clobbers-ret.txt"

// TestReplayHTML: --html writes one page, atomically, and leaves stdout as
// it is without it.
func TestReplayHTML(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "page.html")
	code0, stdout0, _ := fgcheck(t, "replay", htmlCorpusFile)
	code, stdout, stderr := fgcheck(t, "replay", htmlCorpusFile, "--html", out)
	if code != exitClean || code0 != exitClean {
		t.Fatalf("exit %d (without --html %d), stderr:\n%s", code, code0, stderr)
	}
	if stdout != stdout0 {
		t.Error("--html changed stdout")
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "replay: wrote "+out+" ("+strconv.Itoa(len(page))+" bytes)") {
		t.Errorf("stderr %q does not report the page and its size", stderr)
	}
	for _, want := range []string{"<!DOCTYPE html>", `id="violation"`, `href="#violation"`, "shadow stack at the violation", "irq 1 in task0 at push.w2#1", "scenario <b>irq-before-w3-clobbers-ret</b>", "mutant M-push-2"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)<(link|img)\b|src=`).Match(page) {
		t.Error("the page refers to an external asset")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want only the page (no temporary file left)", len(ents))
	}
	// Deterministic: the same bytes again, and with --trace=false.
	out2 := filepath.Join(dir, "again.html")
	fgcheck(t, "replay", "--trace=false", htmlCorpusFile, "--html", out2)
	if again, _ := os.ReadFile(out2); !bytes.Equal(page, again) {
		t.Error("two replays wrote different pages")
	}
}

func TestReplayHTMLCap(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "page.html")
	fgcheck(t, "replay", htmlCorpusFile, "--html", out)
	full, _ := os.ReadFile(out)
	limit := len(full) * 2 / 3
	code, _, stderr := fgcheck(t, "replay", htmlCorpusFile, "--html", out, "--html-max-bytes", strconv.Itoa(limit))
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(out)
	if len(page) > limit || !bytes.Contains(page, []byte(`id="elided"`)) || !bytes.Contains(page, []byte(`id="violation"`)) {
		t.Errorf("capped page: %d bytes (cap %d), elision notice %v, violation %v", len(page), limit,
			bytes.Contains(page, []byte(`id="elided"`)), bytes.Contains(page, []byte(`id="violation"`)))
	}
	if !strings.Contains(stderr, "events left out to fit --html-max-bytes "+strconv.Itoa(limit)) {
		t.Errorf("stderr does not say events were left out: %q", stderr)
	}
	// Below the smallest page: misuse, and the old page stays.
	code, _, stderr = fgcheck(t, "replay", htmlCorpusFile, "--html", out, "--html-max-bytes", "2000")
	if code != exitMisuse || !strings.Contains(stderr, "smallest page") {
		t.Errorf("a 2000-byte cap: exit %d, stderr %q; want exit 2 naming the smallest page", code, stderr)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, page) {
		t.Error("a failed --html replaced the previous page")
	}
	for _, args := range [][]string{
		{"replay", htmlCorpusFile, "--html", out, "--html-max-bytes", "0"},
		{"replay", htmlCorpusFile, "--html", filepath.Join(dir, "no", "such", "dir", "p.html")},
	} {
		if code, _, _ := fgcheck(t, args...); code != exitMisuse {
			t.Errorf("fgcheck %q: exit %d, want %d", args, code, exitMisuse)
		}
	}
}

// The file's comments are shown on the page, escaped.
func TestReplayHTMLEscapes(t *testing.T) {
	evil := `<script>alert("fgcheck")</script>`
	p := writeTemp(t, "evil.txt", strings.Replace(irqFile, "# test: an IRQ between W3 and W4", "# "+evil, 1))
	out := filepath.Join(t.TempDir(), "page.html")
	if code, _, stderr := fgcheck(t, "replay", p, "--html", out); code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(out)
	if bytes.Contains(page, []byte(evil)) || !bytes.Contains(page, []byte(`&lt;script&gt;alert(&#34;fgcheck&#34;)&lt;/script&gt;`)) {
		t.Error("the comment is not on the page, escaped")
	}
	if bytes.Contains(page, []byte(`id="violation"`)) || !bytes.Contains(page, []byte("PASS")) {
		t.Error("a clean replay's page has a violation element or no PASS")
	}
}
