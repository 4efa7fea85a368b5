package ci

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// RepoRoot finds the module root (the directory holding go.mod) at or
// above dir.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = up
	}
}

// variantIdents maps the fgraph identifiers stdPins uses to variant names.
var variantIdents = map[string]string{"Latest": "latest", "V612": "v6.12", "V611": "v6.11", "Seed": "seed"}

// StdPins reads the pins of harness/std_test.go: the composite literal
// stdPins, whose elements are {fgraph.Variant, runs, []string{known...}}.
func StdPins(root string) (map[string]Pin, error) {
	path := filepath.Join(root, "harness", "std_test.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "stdPins" && len(vs.Values) == 1 {
			lit, _ = vs.Values[0].(*ast.CompositeLit)
		}
		return lit == nil
	})
	if lit == nil {
		return nil, fmt.Errorf("%s: no composite literal stdPins", path)
	}
	pins := map[string]Pin{}
	for _, e := range lit.Elts {
		el, ok := e.(*ast.CompositeLit)
		if !ok || len(el.Elts) != 3 {
			return nil, fmt.Errorf("%s: stdPins element %s is not {variant, runs, known}", path, types.ExprString(e))
		}
		sel, ok := el.Elts[0].(*ast.SelectorExpr)
		name := ""
		if ok {
			name = variantIdents[sel.Sel.Name]
		}
		if name == "" {
			return nil, fmt.Errorf("%s: unknown variant %s in stdPins", path, types.ExprString(el.Elts[0]))
		}
		runsLit, ok := el.Elts[1].(*ast.BasicLit)
		if !ok || runsLit.Kind != token.INT {
			return nil, fmt.Errorf("%s: runs of %s is not an integer literal", path, name)
		}
		runs, err := strconv.ParseInt(strings.ReplaceAll(runsLit.Value, "_", ""), 0, 64)
		if err != nil {
			return nil, err
		}
		knownLit, ok := el.Elts[2].(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("%s: known findings of %s are not a []string literal", path, name)
		}
		var known []string
		for _, k := range knownLit.Elts {
			bl, ok := k.(*ast.BasicLit)
			if !ok || bl.Kind != token.STRING {
				return nil, fmt.Errorf("%s: known finding %s of %s is not a string literal", path, types.ExprString(k), name)
			}
			s, _ := strconv.Unquote(bl.Value)
			known = append(known, s)
		}
		sort.Strings(known)
		pins[name] = Pin{Schedules: runs, Known: known}
	}
	return pins, nil
}

// FuzzTarget is a native Go fuzz target of the module.
type FuzzTarget struct {
	Dir      string   // the package directory, relative to the root ("fuzz")
	Func     string   // FuzzXxx
	External bool     // declared in the external test package (package x_test)
	Args     []string // the types of its f.Fuzz function's arguments after *testing.T
}

// FuzzTargets lists the fuzz targets of the module below root, as
// `go test -list 'Fuzz.*' ./...` does: top-level functions FuzzXxx(*testing.F)
// of _test.go files, skipping testdata and hidden directories.
func FuzzTargets(root string) ([]FuzzTarget, error) {
	var out []FuzzTarget
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !isFuzzName(fd.Name.Name) || !takesTestingF(fd) {
				continue
			}
			out = append(out, FuzzTarget{
				Dir: filepath.ToSlash(rel), Func: fd.Name.Name,
				External: strings.HasSuffix(f.Name.Name, "_test"),
				Args:     fuzzArgs(fd),
			})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dir != out[j].Dir {
			return out[i].Dir < out[j].Dir
		}
		return out[i].Func < out[j].Func
	})
	return out, err
}

// isFuzzName is the go command's rule: Fuzz, or Fuzz followed by a
// character that is not a lower-case letter.
func isFuzzName(s string) bool {
	if !strings.HasPrefix(s, "Fuzz") {
		return false
	}
	rest := s[len("Fuzz"):]
	return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
}

func takesTestingF(fd *ast.FuncDecl) bool {
	p := fd.Type.Params.List
	return len(p) == 1 && len(p[0].Names) <= 1 && types.ExprString(p[0].Type) == "*testing.F" && fd.Type.Results == nil
}

// fuzzArgs returns the argument types (after the first) of the function
// literal passed to f.Fuzz in fd's body, as written.
func fuzzArgs(fd *ast.FuncDecl) []string {
	var args []string
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		lit, ok2 := call.Args[0].(*ast.FuncLit)
		if !ok || !ok2 || sel.Sel.Name != "Fuzz" {
			return true
		}
		args = []string{}
		first := true
		for _, field := range lit.Type.Params.List {
			n := max(1, len(field.Names))
			for i := 0; i < n; i++ {
				if first {
					first = false
					continue
				}
				args = append(args, types.ExprString(field.Type))
			}
		}
		return false
	})
	return args
}

// BuildSh is what .clusterfuzzlite/build.sh builds: its calls of
// build_fuzzer, extract_fuzzer and seed_corpus, in order.
type BuildSh struct {
	Builds   []BuildLine   // build_fuzzer DIR FUNC NAME
	Extracts []ExtractLine // extract_fuzzer DIR FUNC NEWDIR
	Seeds    []SeedLine    // seed_corpus NAME SIG PATH...
}

// BuildLine is one build_fuzzer call.
type BuildLine struct {
	Line            int
	Dir, Func, Name string
}

// ExtractLine is one extract_fuzzer call.
type ExtractLine struct {
	Line              int
	Dir, Func, NewDir string
}

// SeedLine is one seed_corpus call.
type SeedLine struct {
	Line      int
	Name, Sig string
	Paths     []string
}

// ParseBuildSh reads the calls of the build script's helper functions:
// lines (outside the functions' definitions) that start with one of their
// names, with plain or single-quoted words as arguments.
func ParseBuildSh(src []byte) (*BuildSh, error) {
	b := &BuildSh{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || strings.HasSuffix(line, "() {") {
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			return nil, fmt.Errorf("build.sh:%d: %v", n, err)
		}
		if len(words) == 0 {
			continue
		}
		arity := map[string]int{"build_fuzzer": 3, "extract_fuzzer": 3}
		switch cmd := words[0]; cmd {
		case "build_fuzzer", "extract_fuzzer":
			if len(words) != arity[cmd]+1 {
				return nil, fmt.Errorf("build.sh:%d: %s takes %d arguments: %s", n, cmd, arity[cmd], line)
			}
			if cmd == "build_fuzzer" {
				b.Builds = append(b.Builds, BuildLine{n, words[1], words[2], words[3]})
			} else {
				b.Extracts = append(b.Extracts, ExtractLine{n, words[1], words[2], words[3]})
			}
		case "seed_corpus":
			if len(words) < 4 {
				return nil, fmt.Errorf("build.sh:%d: seed_corpus NAME SIG PATH...: %s", n, line)
			}
			b.Seeds = append(b.Seeds, SeedLine{n, words[1], words[2], words[3:]})
		}
	}
	return b, sc.Err()
}

// splitWords splits a line into shell words: blanks separate, single and
// double quotes group (no expansion is done).
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
