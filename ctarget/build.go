package ctarget

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

//go:embed csrc
var csrc embed.FS

// Tree is a kernel source tree (or the part of one that `make kernel`
// extracts: kernel/trace/fgraph.c, include/linux/ftrace.h,
// include/linux/sched.h).
type Tree struct {
	Dir string
}

// Files of a tree that the build reads.
const (
	FgraphC = "kernel/trace/fgraph.c"
	FtraceH = "include/linux/ftrace.h"
	SchedH  = "include/linux/sched.h"
)

// OpenTree checks that dir holds what the build needs.
func OpenTree(dir string) (*Tree, error) {
	if dir == "" {
		return nil, errors.New("no kernel tree given (--kernel DIR or FGCHECK_KERNEL)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range []string{FgraphC, FtraceH, SchedH} {
		if _, err := os.Stat(filepath.Join(abs, f)); err != nil {
			return nil, fmt.Errorf("kernel tree %s: no %s (a tree, or `make kernel`'s extract of one)", dir, f)
		}
	}
	return &Tree{Dir: abs}, nil
}

// Path is the absolute path of a file of the tree.
func (t *Tree) Path(rel string) string { return filepath.Join(t.Dir, rel) }

// Options are the build's configuration.
type Options struct {
	// StackWords is SHADOW_STACK_OFFSET: PAGE_SIZE is set to 8*StackWords
	// (fgraph.c sizes the shadow stack by PAGE_SIZE), so the compiled
	// stack has the size the scenario explores. 512 is the kernel's.
	StackWords int
	// Profiler sets CONFIG_FUNCTION_PROFILER (adds subtime to the frame).
	Profiler bool
	// CacheDir holds built objects, by content hash ("" = the user cache).
	CacheDir string
	// CC is the C compiler ("" = $CC or gcc).
	CC string
}

// Config is the x86-64 configuration fgraph.c is compiled with: what
// Debian's 6.12 amd64 kernel selects for the function-graph tracer.
var Config = []string{
	"CONFIG_X86_64", "CONFIG_64BIT", "CONFIG_TRACING", "CONFIG_FUNCTION_TRACER",
	"CONFIG_FUNCTION_GRAPH_TRACER", "CONFIG_DYNAMIC_FTRACE", "CONFIG_HAVE_STATIC_CALL",
	"CONFIG_HAVE_FUNCTION_GRAPH_FREGS", "CONFIG_FUNCTION_GRAPH_RETVAL",
	"CONFIG_DYNAMIC_FTRACE_WITH_ARGS", "CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS",
}

// KCSANFlags are the instrumentation flags of scripts/Makefile.kcsan for
// GCC: every load and store calls __tsan_*, volatile ones told apart.
var KCSANFlags = []string{"-fsanitize=thread", "--param", "tsan-distinguish-volatile=1",
	"--param", "tsan-instrument-func-entry-exit=0"}

// KernelFlags are the code-generation flags of the kernel's Makefile that
// matter to the order and kind of memory accesses.
var KernelFlags = []string{"-O2", "-std=gnu11", "-fno-strict-aliasing", "-fno-common",
	"-fno-delete-null-pointer-checks", "-fno-omit-frame-pointer", "-fno-stack-protector",
	"-mno-red-zone", "-fno-asynchronous-unwind-tables"}

// recipe names the build steps below: change it when they change, so
// that cached objects of the old recipe are not reused.
const recipe = "so-norelro-13"

// Object is a built shared object.
type Object struct {
	Path string
	// Sha256 is the hash of the fgraph.c that was compiled.
	Sha256 string
	Tree   string
	Opts   Options
	// Command is the compile command of fgraph.c.
	Command []string
}

// Build compiles the tree's fgraph.c with the runtime into a shared
// object, or returns the cached one built from the same inputs.
func Build(t *Tree, opt Options) (*Object, error) {
	if opt.StackWords == 0 {
		opt.StackWords = 512
	}
	cc := opt.CC
	if cc == "" {
		cc = os.Getenv("CC")
	}
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return nil, fmt.Errorf("the kernel target needs a C compiler: %s not found (apt-get install gcc)", cc)
	}
	src, err := os.ReadFile(t.Path(FgraphC))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	gen, err := Generate(t)
	if err != nil {
		return nil, err
	}
	defs := append([]string(nil), Config...)
	if opt.Profiler {
		defs = append(defs, "CONFIG_FUNCTION_PROFILER")
	}
	flags := append([]string(nil), KernelFlags...)
	flags = append(flags, "-g", "-fPIC")
	for _, d := range defs {
		flags = append(flags, "-D"+d)
	}
	flags = append(flags, fmt.Sprintf("-DPAGE_SIZE=%dUL", 8*opt.StackWords))

	// The cache key: every input of the build.
	h := sha256.New()
	h.Write(src)
	for _, k := range slices.Sorted(maps.Keys(gen)) {
		h.Write([]byte(k))
		h.Write(gen[k])
	}
	fs.WalkDir(csrc, "csrc", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := csrc.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	h.Write([]byte(strings.Join(flags, " ") + cc + t.Dir + recipe))
	key := hex.EncodeToString(h.Sum(nil))[:16]

	cache := CacheDir(opt)
	dir := filepath.Join(cache, "ctarget-"+key)
	so := filepath.Join(dir, "fgraph.so")
	obj := &Object{Path: so, Sha256: hex.EncodeToString(sum[:]), Tree: t.Dir, Opts: opt}
	inc := filepath.Join(dir, "include")
	fgCmd := append([]string{cc}, flags...)
	fgCmd = append(fgCmd, KCSANFlags...)
	// -I- keeps the quoted includes of fgraph.c ("trace.h",
	// "ftrace_internal.h") from resolving next to it in the tree.
	fgCmd = append(fgCmd, "-fvisibility=hidden", "-I"+dir, "-I-", "-I"+inc, "-I"+dir,
		"-c", t.Path(FgraphC), "-o", filepath.Join(dir, "fgraph.o"))
	obj.Command = fgCmd
	if _, err := os.Stat(so); err == nil {
		return obj, nil
	}
	tmp, err := os.MkdirTemp(cache+string(os.PathSeparator), "build-")
	if err != nil {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return nil, err
		}
		if tmp, err = os.MkdirTemp(cache, "build-"); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(tmp)
	if err := writeSources(tmp, gen); err != nil {
		return nil, err
	}
	tinc := filepath.Join(tmp, "include")
	cmds := [][]string{
		replaceDir(fgCmd, dir, tmp),
		append(append([]string{cc}, flags...), "-Wall", "-I"+tmp, "-I"+tinc,
			"-c", filepath.Join(tmp, "runtime.c"), "-o", filepath.Join(tmp, "runtime.o")),
		// -z norelro: fgc_reset restores the whole writable segment.
		{cc, "-shared", "-Wl,-z,norelro", "-o", filepath.Join(tmp, "fgraph.so"), filepath.Join(tmp, "fgraph.o"),
			filepath.Join(tmp, "runtime.o"), "-lpthread"},
	}
	for _, c := range cmds {
		out, err := exec.Command(c[0], c[1:]...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("building %s: %s: %v\n%s", t.Path(FgraphC), strings.Join(c, " "), err, out)
		}
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	tmp = ""
	return obj, nil
}

// CacheDir is where built objects (and mutated copies of trees) are kept.
func CacheDir(opt Options) string {
	if opt.CacheDir != "" {
		return opt.CacheDir
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fgcheck")
	}
	return filepath.Join(os.TempDir(), "fgcheck-cache")
}

// BuildMutant builds t with mu applied to a copy of its fgraph.c, kept in
// the cache under the name and the hash of the mutated file.
func BuildMutant(t *Tree, mu Mutant, opt Options) (*Object, error) {
	src, err := os.ReadFile(t.Path(FgraphC))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	dir := filepath.Join(CacheDir(opt), "tree-"+mu.Name+"-"+hex.EncodeToString(sum[:6]))
	mt, err := mu.Apply(t, dir)
	if err != nil {
		return nil, err
	}
	return Build(mt, opt)
}

func replaceDir(args []string, from, to string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, from, to)
	}
	return out
}

func writeSources(dir string, gen map[string][]byte) error {
	err := fs.WalkDir(csrc, "csrc", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "csrc")
		out := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := csrc.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		return err
	}
	for name, b := range gen {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The declarations of the tree's headers that the build copies, by the
// pattern of their first line. Each is copied from that line to the end of
// the declaration (the ';' after its closing brace, at depth 0).
var ftraceDecls = []string{
	`^typedef void \(\*ftrace_func_t\)`,
	`^struct ftrace_ops_hash \{`,
	`^enum ftrace_ops_cmd \{`,
	`^typedef int \(\*ftrace_ops_func_t\)`,
	`^struct ftrace_ops \{`,
	`^struct ftrace_graph_ent \{`,
	`^struct ftrace_graph_ret \{`,
	`^typedef void \(\*trace_func_graph_ret_t\)`,
	`^typedef int \(\*trace_func_graph_ent_t\)`,
	`^struct fgraph_ops \{`,
	`^struct ftrace_ret_stack \{`,
	// The entry points the runtime calls and the kill switch, as the
	// tree declares them.
	`^extern void return_to_handler\(void\);`,
	`^function_graph_enter\(`,
	`^ftrace_graph_get_ret_stack\(`,
	`^unsigned long ftrace_graph_ret_addr\(`,
	`^void \*fgraph_reserve_data\(`,
	`^void \*fgraph_retrieve_data\(`,
	`^extern int register_ftrace_graph\(`,
	`^extern void unregister_ftrace_graph\(`,
	`^extern void ftrace_graph_stop\(`,
	`^extern void ftrace_graph_exit_task\(`,
	`^DECLARE_STATIC_KEY_FALSE\(kill_ftrace_graph\);`,
	`^static inline bool ftrace_graph_is_dead\(void\)`,
	`^#define FTRACE_RETSTACK_ALLOC_SIZE`,
}

// ftraceEnums are the anonymous enums of the tree's ftrace.h that fgraph.c
// uses, by a member: the ops flags and the ftrace_startup commands.
var ftraceEnums = []string{"FTRACE_OPS_FL_ENABLED", "FTRACE_UPDATE_CALLS"}

// Generate reads the layout the build needs from the tree's headers and
// returns the generated headers by file name: fgc_tree.h (declarations of
// include/linux/ftrace.h), fgc_tree_graph.h (its FGRAPH_NO_DIRECT block) and
// fgc_task_fields.h (the CONFIG_FUNCTION_GRAPH_TRACER fields of struct
// task_struct in include/linux/sched.h).
func Generate(t *Tree) (map[string][]byte, error) {
	ft, err := os.ReadFile(t.Path(FtraceH))
	if err != nil {
		return nil, err
	}
	sch, err := os.ReadFile(t.Path(SchedH))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(ft), "\n")
	var tree bytes.Buffer
	fmt.Fprintf(&tree, "/* generated by fgcheck from %s: do not edit */\n", t.Path(FtraceH))
	tree.WriteString("struct ftrace_ops; struct ftrace_regs; struct ftrace_hash; struct fgraph_ops; struct module; struct task_struct;\n\n")
	for _, member := range ftraceEnums {
		d, ln, err := enclosingEnum(lines, member)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", t.Path(FtraceH), err)
		}
		fmt.Fprintf(&tree, "#line %d \"%s\"\n%s\n\n", ln+1, t.Path(FtraceH), d)
	}
	// ftrace_return_to_handler()'s prototype, by CONFIG_HAVE_FUNCTION_GRAPH_FREGS.
	rth, ln, err := ifBlock(lines, `^#ifdef CONFIG_HAVE_FUNCTION_GRAPH_FREGS`)
	if err != nil || !strings.Contains(rth, "ftrace_return_to_handler") {
		return nil, fmt.Errorf("%s: no ftrace_return_to_handler() under CONFIG_HAVE_FUNCTION_GRAPH_FREGS", t.Path(FtraceH))
	}
	fmt.Fprintf(&tree, "#line %d \"%s\"\n%s\n\n", ln+1, t.Path(FtraceH), rth)
	for _, pat := range ftraceDecls {
		d, ln, err := declaration(lines, pat)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", t.Path(FtraceH), err)
		}
		fmt.Fprintf(&tree, "#line %d \"%s\"\n%s\n\n", ln+1, t.Path(FtraceH), d)
	}
	graph, ln, err := ifBlock(lines, `^#ifndef ftrace_graph_func`)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", t.Path(FtraceH), err)
	}
	gb := fmt.Sprintf("/* generated by fgcheck: do not edit */\n#line %d \"%s\"\n%s\n", ln+1, t.Path(FtraceH), graph)

	sl := strings.Split(string(sch), "\n")
	fields, fl, err := taskFields(sl)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", t.Path(SchedH), err)
	}
	tf := fmt.Sprintf("/* generated by fgcheck: do not edit */\n#line %d \"%s\"\n%s\n", fl+1, t.Path(SchedH), fields)
	return map[string][]byte{
		"fgc_tree.h":        tree.Bytes(),
		"fgc_tree_graph.h":  []byte(gb),
		"fgc_task_fields.h": []byte(tf),
	}, nil
}

// declaration copies the declaration starting at the first line matching
// pat: to the ';' at depth 0, or to the closing brace of a function body.
// A function name at the start of its line takes the line before it along
// (the return type).
func declaration(lines []string, pat string) (string, int, error) {
	re := regexp.MustCompile(pat)
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		start := i
		if i > 0 && regexp.MustCompile(`^[a-z_]+\(`).MatchString(l) {
			start = i - 1
		}
		depth, body := 0, false
		for j := i; j < len(lines); j++ {
			code := strings.TrimSpace(stripComment(lines[j]))
			depth += strings.Count(lines[j], "{") - strings.Count(lines[j], "}")
			if strings.HasPrefix(code, "{") && j > i && depth == 1 && !strings.HasSuffix(strings.TrimSpace(lines[i]), "{") {
				body = true // a function's body on its own line
			}
			if depth == 0 && (strings.HasSuffix(code, ";") || body && code == "}" || strings.HasPrefix(l, "#define")) {
				return strings.Join(lines[start:j+1], "\n"), start, nil
			}
		}
		return "", 0, fmt.Errorf("declaration %q does not end", pat)
	}
	return "", 0, fmt.Errorf("no declaration matching %q", pat)
}

// enclosingEnum copies the enum that has a member named member.
func enclosingEnum(lines []string, member string) (string, int, error) {
	re := regexp.MustCompile(`^\s+` + member + `\b`)
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		for k := i - 1; k >= 0; k-- {
			if strings.HasPrefix(lines[k], "enum") && strings.HasSuffix(strings.TrimSpace(lines[k]), "{") {
				d, _, err := declaration(lines[k:], `^enum`)
				return d, k, err
			}
		}
	}
	return "", 0, fmt.Errorf("no enum with a member %s", member)
}

func stripComment(l string) string {
	if i := strings.Index(l, "/*"); i >= 0 {
		return l[:i]
	}
	if i := strings.Index(l, "//"); i >= 0 {
		return l[:i]
	}
	return l
}

// ifBlock copies the preprocessor block starting at the line matching pat
// to its #endif.
func ifBlock(lines []string, pat string) (string, int, error) {
	re := regexp.MustCompile(pat)
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		depth := 0
		for j := i; j < len(lines); j++ {
			s := strings.TrimSpace(lines[j])
			if strings.HasPrefix(s, "#if") {
				depth++
			} else if strings.HasPrefix(s, "#endif") {
				depth--
				if depth == 0 {
					return strings.Join(lines[i:j+1], "\n"), i, nil
				}
			}
		}
		return "", 0, fmt.Errorf("block %q has no #endif", pat)
	}
	return "", 0, fmt.Errorf("no block matching %q", pat)
}

// taskFields copies the body of the #ifdef CONFIG_FUNCTION_GRAPH_TRACER
// block inside struct task_struct.
func taskFields(lines []string) (string, int, error) {
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "struct task_struct {") {
			in = true
			continue
		}
		if in && strings.TrimSpace(l) == "#ifdef CONFIG_FUNCTION_GRAPH_TRACER" {
			body, _, err := ifBlock(lines[i:], `^#ifdef CONFIG_FUNCTION_GRAPH_TRACER`)
			if err != nil {
				return "", 0, err
			}
			b := strings.Split(body, "\n")
			return strings.Join(b[1:len(b)-1], "\n"), i + 1, nil
		}
		if in && strings.HasPrefix(l, "};") {
			break
		}
	}
	return "", 0, errors.New("struct task_struct has no CONFIG_FUNCTION_GRAPH_TRACER block")
}
