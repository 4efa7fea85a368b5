package ci

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// root is the repository root.
func root(t *testing.T) string {
	t.Helper()
	r, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func workflow(t *testing.T, name string) *Workflow {
	t.Helper()
	w, err := LoadWorkflow(filepath.Join(root(t), ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestStdPinsMatch(t *testing.T) {
	pins, err := StdPins(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != len(Pins) {
		t.Errorf("harness/std_test.go pins %d variants, ci.Pins %d", len(pins), len(Pins))
	}
	for v, p := range pins {
		if q, ok := Pins[v]; !ok || q.Schedules != p.Schedules || !slices.Equal(q.Known, p.Known) {
			t.Errorf("variant %s: harness/std_test.go pins %d schedules and %q; ci.Pins (internal/ci/shards.go) has %d and %q: copy the new pin",
				v, p.Schedules, p.Known, q.Schedules, q.Known)
		}
	}
}

// TestWorkflowBasics: every workflow grants read permissions only and
// uses actions pinned to a major version, setup-go reads the Go version
// from go.mod, and every job has a timeout.
func TestWorkflowBasics(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.yml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no workflows (%v)", err)
	}
	pinned := regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@v[0-9]+$`)
	for _, p := range paths {
		w, err := LoadWorkflow(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		perms, err := Permissions(w.Permissions)
		if err != nil || len(perms) != 1 || perms["contents"] != "read" {
			t.Errorf("%s: top-level permissions %v (%v), want exactly contents: read", name, perms, err)
		}
		for jn, j := range w.Jobs {
			jp, err := Permissions(j.Permissions)
			if err != nil {
				t.Errorf("%s: job %s: permissions: %v", name, jn, err)
			}
			for scope, level := range jp {
				if level != "read" || scope != "contents" && scope != "actions" {
					t.Errorf("%s: job %s grants %s: %s; only contents: read and actions: read (artifacts of earlier runs) are wanted", name, jn, scope, level)
				}
			}
			if j.TimeoutMinutes <= 0 {
				t.Errorf("%s: job %s has no timeout-minutes", name, jn)
			}
			for i, s := range j.Steps {
				if s.Uses == "" {
					continue
				}
				if !pinned.MatchString(s.Uses) {
					t.Errorf("%s: job %s step %d uses %q, not pinned to a major version (owner/repo@vN)", name, jn, i+1, s.Uses)
				}
				if strings.HasPrefix(s.Uses, "actions/setup-go@") {
					if s.With["go-version-file"] != "go.mod" || s.With["cache"] == "false" {
						t.Errorf("%s: job %s step %d: setup-go with %v, want go-version-file: go.mod and the cache on", name, jn, i+1, s.With)
					}
				}
			}
		}
	}
}

// shardsN is ci.yml's SHARDS.
func shardsN(t *testing.T, w *Workflow) int {
	t.Helper()
	n, err := strconv.Atoi(w.Env["SHARDS"])
	if err != nil || n < 2 {
		t.Fatalf("ci.yml: env SHARDS = %q, want a shard count >= 2", w.Env["SHARDS"])
	}
	return n
}

// TestShardMatrix: ci.yml's explore matrix is every pinned variant times
// shards 0..n-1, each combination runs exactly one `fgcheck explore
// --variant V --shard i/n --json` with the n of SHARDS and writes its
// summary to the file shardsum reads, uploads it under a name the merge
// job downloads, and the merge job checks with -n n.
func TestShardMatrix(t *testing.T) {
	w := workflow(t, "ci.yml")
	n := shardsN(t, w)
	ex := w.Jobs["explore"]
	if ex == nil {
		t.Fatal("ci.yml: no explore job")
	}
	var raw map[string][]string
	if err := ex.Strategy.Matrix.Decode(&raw); err != nil {
		t.Fatalf("ci.yml: explore matrix: %v", err)
	}
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, strconv.Itoa(i))
	}
	if !slices.Equal(raw["shard"], want) {
		t.Errorf("ci.yml: explore matrix shard %q, want %q (0..SHARDS-1 with SHARDS=%d)", raw["shard"], want, n)
	}
	variants := slices.Sorted(func(yield func(string) bool) {
		for v := range Pins {
			if !yield(v) {
				return
			}
		}
	})
	if got := slices.Sorted(slices.Values(raw["variant"])); !slices.Equal(got, variants) {
		t.Errorf("ci.yml: explore matrix variant %q, want the pinned variants %q", got, variants)
	}

	invs, err := FgcheckInvocations(w)
	if err != nil {
		t.Fatal(err)
	}
	// Each combination: one explore line, with its variant and shard i/n.
	seen := map[string]int{}
	summaryDir := ""
	for _, inv := range invs {
		if inv.Job != "explore" {
			continue
		}
		if len(inv.Args) == 0 || inv.Args[0] != "explore" {
			t.Errorf("%s: fgcheck %q in the explore job is not an explore", inv.Where, inv.Args)
			continue
		}
		flags, _ := Flags(inv.Args[1:], nil)
		v, i := inv.Combo["variant"], inv.Combo["shard"]
		if flags["variant"] != v || flags["shard"] != fmt.Sprintf("%s/%d", i, n) {
			t.Errorf("%s: --variant %q --shard %q, want --variant %s --shard %s/%d", inv.Where, flags["variant"], flags["shard"], v, i, n)
		}
		if _, ok := flags["json"]; !ok {
			t.Errorf("%s: no --json: shardsum reads the JSON summary", inv.Where)
		}
		ii, _ := strconv.Atoi(i)
		if base := path.Base(inv.Stdout); base != FileName(v, ii, n) {
			t.Errorf("%s: the summary goes to %q, want a file named %s (shardsum's naming)", inv.Where, inv.Stdout, FileName(v, ii, n))
		}
		if summaryDir == "" {
			summaryDir = path.Dir(inv.Stdout)
		} else if path.Dir(inv.Stdout) != summaryDir {
			t.Errorf("%s: the summary goes to %s, the others to %s", inv.Where, path.Dir(inv.Stdout), summaryDir)
		}
		seen[v+" "+i]++
		if out := flags["out"]; out != "fgcheck-out" {
			t.Errorf("%s: --out %q; the failure artifact uploads fgcheck-out/", inv.Where, out)
		}
	}
	for _, v := range raw["variant"] {
		for _, i := range raw["shard"] {
			if seen[v+" "+i] != 1 {
				t.Errorf("ci.yml: variant %s shard %s/%d runs fgcheck explore %d times, want once", v, i, n, seen[v+" "+i])
			}
		}
	}

	// The artifacts: the summary's name matches the download pattern; the
	// failing schedules are uploaded on failure.
	var uploadName, uploadPath, failPath string
	for _, s := range ex.Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			if strings.Contains(s.If, "failure()") {
				failPath = s.With["path"]
			} else {
				uploadName, uploadPath = s.With["name"], s.With["path"]
			}
		}
	}
	if strings.TrimSuffix(uploadPath, "/") != summaryDir {
		t.Errorf("ci.yml: explore uploads %q, the summaries are written to %q", uploadPath, summaryDir)
	}
	if strings.TrimSuffix(failPath, "/") != "fgcheck-out" {
		t.Errorf("ci.yml: explore uploads %q on failure, want fgcheck-out/", failPath)
	}
	m := w.Jobs["shardsum"]
	if m == nil || !slices.Contains(m.NeedsList(), "explore") {
		t.Fatal("ci.yml: no shardsum job that needs explore")
	}
	var pattern, dir string
	ran := false
	for _, s := range m.Steps {
		if strings.HasPrefix(s.Uses, "actions/download-artifact@") {
			pattern, dir = s.With["pattern"], s.With["path"]
			if s.With["merge-multiple"] != "true" {
				t.Errorf("ci.yml: download-artifact without merge-multiple: true puts each shard in its own directory")
			}
		}
		if s.Run == "" {
			continue
		}
		cmds, err := Commands(s.Run, Combo{}, StepEnv(w, m, s, Combo{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			if len(c.Words) < 3 || c.Words[0] != "go" || c.Words[1] != "run" || c.Words[2] != "./internal/ci/shardsum" {
				continue
			}
			ran = true
			flags, args := Flags(c.Words[3:], nil)
			if flags["n"] != strconv.Itoa(n) {
				t.Errorf("ci.yml: shardsum -n %q, want %d", flags["n"], n)
			}
			if !slices.Equal(args, []string{dir}) {
				t.Errorf("ci.yml: shardsum reads %q, the summaries are downloaded to %q", args, dir)
			}
		}
	}
	if !ran {
		t.Error("ci.yml: the shardsum job does not run go run ./internal/ci/shardsum")
	}
	for _, c := range []Combo{{"variant": "v6.11", "shard": "0"}, {"variant": "seed", "shard": strconv.Itoa(n - 1)}} {
		name, err := Expr(uploadName, c, nil)
		if ok, _ := path.Match(pattern, name); err != nil || !ok {
			t.Errorf("ci.yml: the summary artifact %q (%v) does not match the download pattern %q", name, err, pattern)
		}
	}
}

var (
	buildOnce sync.Once
	fgBin     string
	fgErr     error
)

// fgcheck builds cmd/fgcheck once per test process.
func fgcheck(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cicheck-")
		if err != nil {
			fgErr = err
			return
		}
		fgBin = filepath.Join(dir, "fgcheck")
		cmd := exec.Command("go", "build", "-o", fgBin, "./cmd/fgcheck")
		cmd.Dir = root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			fgErr = fmt.Errorf("go build ./cmd/fgcheck: %v\n%s", err, out)
		}
	})
	if fgErr != nil {
		t.Fatal(fgErr)
	}
	return fgBin
}

func TestMain(m *testing.M) {
	// The workflow checks run fgcheck on the port: an FGCHECK_KERNEL that
	// make test exports for the kernel-target tests would otherwise be the
	// default tree of every fgcheck started here.
	os.Unsetenv("FGCHECK_KERNEL")
	rc := m.Run()
	if fgBin != "" {
		os.RemoveAll(filepath.Dir(fgBin))
	}
	os.Exit(rc)
}

// helpFlags runs `fgcheck CMD -h` and returns its flags, each with
// whether it takes a value (the usage line of a flag that does names it).
func helpFlags(t *testing.T, bin, cmd string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, cmd, "-h").CombinedOutput()
	flags := map[string]bool{}
	re := regexp.MustCompile(`(?m)^  -([A-Za-z0-9-]+)( \S+)?$`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = m[2] != ""
	}
	if len(flags) == 0 {
		t.Fatalf("fgcheck %s -h lists no flags:\n%s", cmd, out)
	}
	return flags
}

// TestFgcheckInvocations: every fgcheck command line of every workflow names
// a subcommand of `fgcheck help` and only flags of `fgcheck CMD -h`; every
// explore line runs (cut to one schedule with --max-runs 1) and prints a
// summary Load reads, and Check finds nothing wrong with them but that.
func TestFgcheckInvocations(t *testing.T) {
	bin := fgcheck(t)
	out, _ := exec.Command(bin, "help").CombinedOutput()
	cmds := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(string(out), -1) {
		cmds[m[1]] = true
	}
	if !cmds["explore"] {
		t.Fatalf("fgcheck help lists no explore:\n%s", out)
	}
	paths, _ := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.yml"))
	var all []Invocation
	for _, p := range paths {
		w, err := LoadWorkflow(p)
		if err != nil {
			t.Fatal(err)
		}
		invs, err := FgcheckInvocations(w)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, invs...)
	}
	if len(all) == 0 {
		t.Fatal("no fgcheck command line in the workflows")
	}
	help := map[string]map[string]bool{}
	summaries := t.TempDir()
	ran := 0
	for _, inv := range all {
		if len(inv.Args) == 0 || !cmds[inv.Args[0]] {
			t.Errorf("%s: fgcheck %q: no such subcommand (fgcheck help: %v)", inv.Where, inv.Args, slices.Sorted(func(y func(string) bool) {
				for c := range cmds {
					if !y(c) {
						return
					}
				}
			}))
			continue
		}
		sub := inv.Args[0]
		if help[sub] == nil {
			help[sub] = helpFlags(t, bin, sub)
		}
		flags, _ := Flags(inv.Args[1:], func(name string) bool { return help[sub][name] })
		bad := false
		for f, v := range flags {
			if _, ok := help[sub][f]; !ok {
				t.Errorf("%s: fgcheck %s has no flag -%s (fgcheck %s -h)", inv.Where, sub, f, sub)
				bad = true
			}
			if strings.Contains(v, "$") {
				t.Errorf("%s: -%s %q is not expanded here", inv.Where, f, v)
				bad = true
			}
		}
		if bad || sub != "explore" {
			continue
		}
		// Run it, cut to one schedule, writing nothing into the tree.
		args := append(slices.Clone(inv.Args), "--max-runs", "1", "--out", filepath.Join(t.TempDir(), "out"))
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: fgcheck %q: %v\n%s", inv.Where, args, err, &stderr)
			continue
		}
		ran++
		if inv.Stdout != "" {
			if err := os.WriteFile(filepath.Join(summaries, path.Base(inv.Stdout)), stdout.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ran == 0 {
		t.Fatal("no explore line ran")
	}
	shards, err := LoadAll([]string{summaries})
	if err != nil {
		t.Fatalf("the summaries of the workflow's explore lines: %v", err)
	}
	r := Check(shards, Pins, shardsN(t, workflow(t, "ci.yml")))
	for _, p := range r.Problems {
		// Cut to one schedule, every shard is unfinished and nothing else.
		if !strings.Contains(p, "did not explore its whole shard") {
			t.Errorf("shardsum on the workflow's explore lines (run with --max-runs 1): %s", p)
		}
	}
	if len(r.Problems) != len(shards) {
		t.Errorf("%d shards, %d problems; want each shard reported unfinished (--max-runs 1)", len(shards), len(r.Problems))
	}
}

// TestFuzzTargetsWired: every Fuzz function of the module is built by
// .clusterfuzzlite/build.sh and fuzzed by the nightly job, and build.sh's
// seed corpora are encoded for the right argument types.
func TestFuzzTargetsWired(t *testing.T) {
	r := root(t)
	targets, err := FuzzTargets(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 4 {
		t.Fatalf("found %d fuzz targets, want at least the 4 of fuzz/ and harness/: %+v", len(targets), targets)
	}
	src, err := os.ReadFile(filepath.Join(r, ".clusterfuzzlite", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := ParseBuildSh(src)
	if err != nil {
		t.Fatal(err)
	}
	clean := func(dir string) string { return strings.TrimSuffix(strings.TrimPrefix(dir, "./"), "/") }
	names := map[string]int{}
	for _, b := range sh.Builds {
		names[b.Name]++
		if names[b.Name] == 2 {
			t.Errorf("build.sh:%d: fuzzer name %s built twice", b.Line, b.Name)
		}
	}
	built := map[string]string{} // target "dir Func" -> fuzzer name
	for _, tg := range targets {
		key := tg.Dir + " " + tg.Func
		dir := tg.Dir
		if tg.External {
			// Copied out of the external test package first.
			var ex *ExtractLine
			for i := range sh.Extracts {
				if clean(sh.Extracts[i].Dir) == tg.Dir && sh.Extracts[i].Func == tg.Func {
					ex = &sh.Extracts[i]
				}
			}
			if ex == nil {
				t.Errorf("%s.%s is in an external test package: build.sh must extract_fuzzer ./%s %s NEWDIR before building it", tg.Dir, tg.Func, tg.Dir, tg.Func)
				continue
			}
			dir = clean(ex.NewDir)
		}
		for _, b := range sh.Builds {
			if clean(b.Dir) == dir && b.Func == tg.Func {
				built[key] = b.Name
			}
		}
		if built[key] == "" {
			t.Errorf("%s.%s is not built by .clusterfuzzlite/build.sh: add build_fuzzer ./%s %s NAME (and a seed_corpus line if it has seeds)", tg.Dir, tg.Func, dir, tg.Func)
		}
	}
	for _, ex := range sh.Extracts {
		ok := false
		for _, tg := range targets {
			ok = ok || tg.External && clean(ex.Dir) == tg.Dir && ex.Func == tg.Func
		}
		if !ok {
			t.Errorf("build.sh:%d: extract_fuzzer %s %s: no such target of an external test package (fuzzextract refuses internal ones)", ex.Line, ex.Dir, ex.Func)
		}
	}
	for _, b := range sh.Builds {
		ok := false
		for _, name := range built {
			ok = ok || name == b.Name
		}
		if !ok {
			t.Errorf("build.sh:%d: build_fuzzer %s %s %s builds no fuzz target of the module", b.Line, b.Dir, b.Func, b.Name)
		}
	}
	for _, s := range sh.Seeds {
		var tg *FuzzTarget
		for key, name := range built {
			if name == s.Name {
				for i := range targets {
					if targets[i].Dir+" "+targets[i].Func == key {
						tg = &targets[i]
					}
				}
			}
		}
		if tg == nil {
			t.Errorf("build.sh:%d: seed_corpus %s: no fuzzer of that name is built", s.Line, s.Name)
			continue
		}
		if sig := strings.Join(tg.Args, ","); strings.ReplaceAll(s.Sig, " ", "") != sig {
			t.Errorf("build.sh:%d: seed_corpus %s -sig %q, but %s.%s's f.Fuzz takes (%s)", s.Line, s.Name, s.Sig, tg.Dir, tg.Func, sig)
		}
		for _, p := range s.Paths {
			if _, err := os.Stat(filepath.Join(r, p)); err != nil {
				t.Errorf("build.sh:%d: seed path %s: %v", s.Line, p, err)
			}
		}
	}

	// The nightly job: one matrix entry per target, package and name.
	w := workflow(t, "fuzz.yml")
	j := w.Jobs["fuzz"]
	if j == nil {
		t.Fatal("fuzz.yml: no fuzz job")
	}
	combos, err := j.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, c := range combos {
		got = append(got, clean(c["package"])+" "+c["target"])
	}
	for _, tg := range targets {
		want = append(want, tg.Dir+" "+tg.Func)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("fuzz.yml: the fuzz matrix has %q, the module's fuzz targets are %q", got, want)
	}
	// And the matrix is what the fuzz step runs.
	for _, c := range combos {
		for _, s := range j.Steps {
			if !strings.Contains(s.Run, "go test") {
				continue
			}
			cmds, err := Commands(s.Run, c, StepEnv(w, j, s, c))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"go", "test", c["package"], "-run", "^$", "-fuzz", "^" + c["target"] + "$"}
			if len(cmds) != 1 || len(cmds[0].Words) < len(want) || !slices.Equal(cmds[0].Words[:len(want)], want) {
				t.Errorf("fuzz.yml: for %v the fuzz step runs %q, want it to start with %q", c, cmds, want)
			}
		}
	}
}

// TestClusterFuzzLiteFiles: build.sh is valid bash, and the Dockerfile puts
// the repository where build.sh looks for it.
func TestClusterFuzzLiteFiles(t *testing.T) {
	r := root(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if out, err := exec.Command(bash, "-n", filepath.Join(r, ".clusterfuzzlite", "build.sh")).CombinedOutput(); err != nil {
		t.Errorf("bash -n build.sh: %v\n%s", err, out)
	}
	df, err := os.ReadFile(filepath.Join(r, ".clusterfuzzlite", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FROM gcr.io/oss-fuzz-base/base-builder-go\n",
		"COPY . $SRC/fgcheck\n",
		"WORKDIR $SRC/fgcheck\n",
		"COPY .clusterfuzzlite/build.sh $SRC/\n",
	} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	sh, _ := os.ReadFile(filepath.Join(r, ".clusterfuzzlite", "build.sh"))
	if !strings.Contains(string(sh), `cd "$SRC/fgcheck"`) {
		t.Error(`build.sh does not cd "$SRC/fgcheck", where the Dockerfile copies the repository`)
	}
	py, _ := os.ReadFile(filepath.Join(r, ".clusterfuzzlite", "project.yaml"))
	if !regexp.MustCompile(`(?m)^language: go$`).Match(py) {
		t.Errorf("project.yaml: no language: go:\n%s", py)
	}
	w := workflow(t, "cflite.yml")
	for jn, j := range w.Jobs {
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "google/clusterfuzzlite/actions/build_fuzzers@") && s.With["language"] != "go" {
				t.Errorf("cflite.yml: job %s builds with language %q, want go", jn, s.With["language"])
			}
		}
	}
}

func TestCommands(t *testing.T) {
	env := map[string]string{"V": "v6.11", "DIR": "/t", "EMPTY": ""}
	tests := []struct {
		name, script string
		want         []Command
		reason       string
	}{
		{
			name: "continuation and redirect", script: "\"$DIR/fgcheck\" explore --variant \"$V\" \\\n  --json > \"out/$V.json\"\n",
			want:   []Command{{Words: []string{"/t/fgcheck", "explore", "--variant", "v6.11", "--json"}, Stdout: "out/v6.11.json"}},
			reason: "the explore step's shape: a continued line, quoted variables, stdout to a file",
		},
		{
			name: "lists, pipes, stderr", script: "mkdir -p x && a 2>&1 | b -0 -r; c 2> err.txt < in",
			want:   []Command{{Words: []string{"mkdir", "-p", "x"}}, {Words: []string{"a"}}, {Words: []string{"b", "-0", "-r"}}, {Words: []string{"c"}}},
			reason: "&&, | and ; separate commands; 2>&1, 2> FILE and < FILE are not words",
		},
		{
			name: "quotes and comments", script: "# a comment\ngo test -run '^$' -fuzz \"^${V}\\$\" # trailing\n",
			want:   []Command{{Words: []string{"go", "test", "-run", "^$", "-fuzz", "^v6.11$"}}},
			reason: "single quotes keep $, double quotes expand ${V} and unescape \\$, # starts a comment outside a word",
		},
		{
			name: "expressions and unknown variables", script: "x ${{ matrix.shard }}/${{ env.V }} $HOME \"$EMPTY\"",
			want:   []Command{{Words: []string{"x", "3/v6.11", "$HOME", ""}}},
			reason: "matrix and env expressions are evaluated; an unset variable stays visible; an empty quoted word is a word",
		},
	}
	for _, tt := range tests {
		got, err := Commands(tt.script, Combo{"shard": "3"}, env)
		if err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
			t.Errorf("%s: Commands = %q, %v\nwant %q\nreason: %s", tt.name, got, err, tt.want, tt.reason)
		}
	}
	if _, err := Commands("x ${{ secrets.TOKEN }}", nil, env); err == nil {
		t.Error("an expression the checks cannot evaluate must be an error, not a silent pass")
	}
}
