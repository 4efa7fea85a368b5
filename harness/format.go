package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// FormatError is a malformed scenario or schedule file: the position of the
// offending token (1-based line and byte column) and what is wrong with it.
type FormatError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

const (
	formatMagic   = "fgcheck"
	formatVersion = "v1"
	maxFunc       = 0xffef // 0xfff0.. name the interrupt handlers
)

var (
	optionNames = [...]string{"stores-only", "alias", "strict", "any-reader"}
)

// ParseFile parses a scenario and schedule file. name is used in error
// messages only. Every error is a *FormatError; ParseFile does not panic on
// any input. The scenario of an accepted file passes Scenario.Validate.
//
// The format, version 1, is line-based. Tokens are separated by spaces or
// tabs; a parenthesised group ("ops=(call 1, ret)") is one token. A line
// whose first non-blank character is '#' is a comment; blank lines are
// ignored; a trailing '\r' is dropped. The canonical form, which Format
// writes, has the lines in this order:
//
//	fgcheck v1                                   required, first
//	# comments                                   File.Comments
//	scenario NAME                                required; NAME is [A-Za-z0-9_.-]+
//	variant latest|v6.11|seed                    required
//	layout frame=3 stack=64                      0: the variant's default; omitted when both 0
//	fixes no-bit0 gen-counter entry-for-all      any subset, in this order
//	mutant M-push-1                              a name of fgraph.Catalogue
//	user u1 filter=1,2 accept=* data=8 callin=5 reject=3 parent=1  one per user; '*': every function; callin, reject and parent omitted when unset
//	                                             (parent: the profiler's reads of its frame and the one that many levels up)
//	                                             (reject: functions entryfunc reserves data for, then rejects)
//	setup u1 u2                                  users registered before the run
//	task ops=(call 1, tail 2, ret, sleep, unwind, exit)  one per task, task 0 first
//	irq ops=(call 10, ret)                       omitted when empty
//	nmi ops=(unwind)                             omitted when empty
//	remote unregister u1                         also "register USER", "unwind taskN"
//	bound K=2 D=2 R=1 E=1                        required
//	options stores-only alias strict any-reader  any subset, in this order
//	expect pass | expect violation ORACLE
//	irq id=1 in=task0 at=push.w3#2               events, ids 1, 2, 3, ... in file order
//	nmi id=2 in=1 at=push.w1#1                   in: taskN or an earlier irq/nmi event
//	remote id=3 in=task0 at=enter.save#1 do=unregister u1
//	order push.w4 = push.w5_func push.w4 -enter.restore  '-': a dropped store
//
// An irq runs in a task, an nmi in an irq or nmi event, a remote event at a
// position of any task or irq/nmi event. An "irq" or "nmi" line whose first
// argument is ops= is the program, otherwise an event; a "remote" line whose
// first argument has '=' is an event. In do= the action and its argument
// are two tokens and must match a remote line.
//
// The parser is more lenient than Format: scenario lines may come in any
// order (user, task and remote lines keep their relative order) as long as
// they come before the first event or order line; keys of a line may come in
// any order; event and order lines may interleave; numbers may have leading
// zeros; optional keys of layout and user lines may be left out. Comments
// may appear anywhere: all are kept, in order, in File.Comments, and Format
// prints them after the version line.
func ParseFile(name string, data []byte) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, sizeError(name)
	}
	p := &parser{
		name:    name,
		f:       &File{Scenario: &Scenario{}},
		once:    map[string]int{},
		users:   map[string]int{},
		regions: map[fgraph.Site]int{},
	}
	if err := p.parse(string(data)); err != nil {
		return nil, err
	}
	p.f.detach()
	return p.f, nil
}

// detach copies the strings a parsed file keeps out of the file's text, so
// that a kept file does not keep the whole text alive (fgcheck scenarios
// over 200 files of 1 MB held 390 MB through the names alone).
func (f *File) detach() {
	for i, c := range f.Comments {
		f.Comments[i] = strings.Clone(c)
	}
	if sc := f.Scenario; sc != nil {
		sc.Name = strings.Clone(sc.Name)
		for i := range sc.Users {
			sc.Users[i].Name = strings.Clone(sc.Users[i].Name)
		}
	}
	for i := range f.Schedule.Events {
		f.Schedule.Events[i].In = strings.Clone(f.Schedule.Events[i].In)
	}
	if f.Expect != nil {
		f.Expect.Oracle = strings.Clone(f.Expect.Oracle)
	}
}

// token is one word of a line and its 1-based byte column.
type token struct {
	text string
	col  int
}

// remoteLine is a "remote KIND ARG" line, resolved when the scenario ends.
type remoteLine struct {
	line int
	kind token
	arg  token
	with *token // replace: the user registered in its place
}

// progLine is where a program was written, for error positions.
type progLine struct {
	line int
	ops  token  // the ops= value
	cols []int  // column of each op
	what string // "task 0", "irq", "nmi"
	prog *[]Op  // the program
	task bool   // checked as a task program
}

type parser struct {
	name string
	line int // current line, 1-based
	f    *File

	version  bool           // the version line was seen
	schedule int            // line of the first event or order line, 0 before
	once     map[string]int // singleton directive -> its line
	users    map[string]int // user name -> index
	userLine []int          // line of each user
	taskLine []int          // line of each task
	progs    []progLine
	setup    []token
	setupAt  int
	remotes  []remoteLine
	stack    *token // the layout line's stack= value, for errors
	stackAt  int
	evKind   []EventKind
	regions  map[fgraph.Site]int // ordered region -> its line
}

func (p *parser) errAt(line, col int, format string, args ...any) error {
	return &FormatError{File: p.name, Line: line, Col: col, Msg: fmt.Sprintf(format, shortQuotes(format, args)...)}
}

func (p *parser) errf(col int, format string, args ...any) error {
	return p.errAt(p.line, col, format, args...)
}

func (p *parser) parse(text string) error {
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		p.line = i + 1
		if len(raw) > MaxLineBytes {
			return p.errf(MaxLineBytes+1, "line longer than %d bytes (harness.MaxLineBytes)", MaxLineBytes)
		}
		raw = strings.TrimSuffix(raw, "\r")
		body := strings.TrimLeft(raw, " \t")
		if strings.TrimRight(body, " \t\r") == "" {
			continue
		}
		if body[0] == '#' {
			c := strings.TrimPrefix(body[1:], " ")
			p.f.Comments = append(p.f.Comments, strings.TrimRight(c, " \t\r"))
			continue
		}
		toks, err := p.tokenize(raw)
		if err != nil {
			return err
		}
		if err := p.directive(toks); err != nil {
			return err
		}
	}
	if !p.version {
		return p.errAt(1, 1, "missing %q header", formatMagic+" "+formatVersion)
	}
	if p.schedule == 0 {
		return p.finish()
	}
	return nil
}

// tokenize splits a line at spaces and tabs; a parenthesised group is part
// of its token even if it holds spaces.
func (p *parser) tokenize(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		start, depth, open := i, 0, 0
		for i < len(s) && (depth > 0 || (s[i] != ' ' && s[i] != '\t')) {
			switch s[i] {
			case '(':
				if depth == 0 {
					open = i
				}
				depth++
			case ')':
				if depth > 0 {
					depth--
				}
			}
			i++
		}
		if depth > 0 {
			return nil, p.errf(open+1, "unterminated \"(\"")
		}
		toks = append(toks, token{s[start:i], start + 1})
	}
	return toks, nil
}

func (p *parser) directive(toks []token) error {
	d := toks[0]
	if !p.version {
		if d.text != formatMagic {
			return p.errf(d.col, "missing %q header", formatMagic+" "+formatVersion)
		}
		if len(toks) < 2 {
			return p.errf(d.col, "missing format version")
		}
		if toks[1].text != formatVersion {
			return p.errf(toks[1].col, "unsupported format version %q", toks[1].text)
		}
		if len(toks) > 2 {
			return p.errf(toks[2].col, "unexpected %q", toks[2].text)
		}
		p.version = true
		p.once[formatMagic] = p.line
		return nil
	}
	switch d.text {
	case "irq", "nmi":
		if len(toks) > 1 && strings.HasPrefix(toks[1].text, "ops=") {
			return p.scenarioLine(toks)
		}
		return p.event(toks)
	case "remote":
		if len(toks) > 1 && strings.Contains(toks[1].text, "=") {
			return p.event(toks)
		}
		return p.scenarioLine(toks)
	case "order":
		return p.order(toks)
	case formatMagic:
		return p.errf(d.col, "duplicate %q header (first at line %d)", formatMagic+" "+formatVersion, p.once[formatMagic])
	}
	return p.scenarioLine(toks)
}

// scenarioLine handles every directive of the scenario part.
func (p *parser) scenarioLine(toks []token) error {
	d := toks[0]
	switch d.text {
	case "scenario", "variant", "layout", "fixes", "mutant", "user", "setup",
		"task", "irq", "nmi", "remote", "bound", "options", "expect":
	default:
		return p.errf(d.col, "unknown directive %q", d.text)
	}
	if p.schedule != 0 {
		return p.errf(d.col, "%q line after the first event or order line (line %d)", d.text, p.schedule)
	}
	switch d.text {
	case "user", "task", "remote":
	default:
		if first, ok := p.once[d.text]; ok {
			return p.errf(d.col, "duplicate %q line (first at line %d)", d.text, first)
		}
		p.once[d.text] = p.line
	}
	sc := p.f.Scenario
	args := toks[1:]
	switch d.text {
	case "scenario":
		name, err := p.name1(d, args, "scenario name")
		if err != nil {
			return err
		}
		sc.Name = name
	case "variant":
		if len(args) == 0 {
			return p.errf(d.col, "missing variant")
		}
		if len(args) > 1 {
			return p.errf(args[1].col, "unexpected %q", args[1].text)
		}
		v, err := fgraph.ParseVariant(args[0].text)
		if err != nil {
			return p.errf(args[0].col, "%v", err)
		}
		sc.Variant = v
	case "layout":
		kv, err := p.keys(d, args, "frame", "stack")
		if err != nil {
			return err
		}
		if t, ok := kv["frame"]; ok {
			n, err := p.number(t)
			if err != nil {
				return err
			}
			if n != 0 && n != 3 && n != 4 {
				return p.errf(t.col, "frame=%d: want 3 or 4 (0: the variant's default)", n)
			}
			sc.FrameWords = n
		}
		if t, ok := kv["stack"]; ok {
			n, err := p.number(t)
			if err != nil {
				return err
			}
			sc.StackWords = n
			p.stack, p.stackAt = &t, p.line
		}
	case "fixes":
		var fx Fixes
		for _, a := range args {
			if slices.Contains(fx.Names(), a.text) {
				return p.errf(a.col, "duplicate fix %q", a.text)
			}
			if !fx.Set(a.text) {
				return p.errf(a.col, "unknown fix %q (want %s)", a.text, fixList())
			}
		}
		sc.Fixes = fx
	case "options":
		var seen [len(optionNames)]bool
		for _, a := range args {
			i := indexOf(optionNames[:], a.text)
			if i < 0 {
				return p.errf(a.col, "unknown option %q (want stores-only, alias, strict or any-reader)", a.text)
			}
			if seen[i] {
				return p.errf(a.col, "duplicate option %q", a.text)
			}
			seen[i] = true
		}
		sc.StoresOnly, sc.Alias = seen[0], seen[1]
		p.f.Strict = seen[2]
		sc.AnyReader = seen[3]
	case "mutant":
		name, err := p.name1(d, args, "mutant name")
		if err != nil {
			return err
		}
		mi, err := fgraph.LookupMutant(name)
		if err != nil {
			return p.errf(args[0].col, "unknown mutant %q", name)
		}
		sc.Mutant = mi.Mutant
	case "user":
		return p.user(d, args)
	case "setup":
		p.setup, p.setupAt = args, p.line
	case "task":
		if len(p.taskLine) == MaxTasks {
			return p.errf(d.col, "too many tasks: at most %d", MaxTasks)
		}
		p.taskLine = append(p.taskLine, p.line)
		sc.Tasks = append(sc.Tasks, nil)
		i := len(sc.Tasks) - 1
		return p.program(d, args, fmt.Sprintf("task %d", i), &sc.Tasks[i], true)
	case "irq":
		return p.program(d, args, "irq", &sc.IRQ, false)
	case "nmi":
		return p.program(d, args, "nmi", &sc.NMI, false)
	case "remote":
		if len(args) < 2 {
			return p.errf(d.col, "remote wants an action and its argument (register USER, unregister USER, replace USER USER or unwind taskN)")
		}
		rl := remoteLine{line: p.line, kind: args[0], arg: args[1]}
		n := 2
		if args[0].text == "replace" {
			if len(args) < 3 {
				return p.errf(d.col, "remote replace wants two users: replace OLD NEW")
			}
			rl.with = &args[2]
			n = 3
		}
		if len(args) > n {
			return p.errf(args[n].col, "unexpected %q", args[n].text)
		}
		p.remotes = append(p.remotes, rl)
	case "bound":
		kv, err := p.keys(d, args, "K", "D", "R", "E", "C")
		if err != nil {
			return err
		}
		var v [4]int
		for i, k := range []string{"K", "D", "R", "E"} {
			t, ok := kv[k]
			if !ok {
				return p.errf(d.col, "missing key %q", k)
			}
			if v[i], err = p.number(t); err != nil {
				return err
			}
			if k == "K" && v[i] > 16 {
				return p.errf(t.col, "K=%d: at most 16", v[i])
			}
			if k == "D" && v[i] > 6 {
				return p.errf(t.col, "D=%d: at most 6", v[i])
			}
		}
		sc.Bound = Bound{K: v[0], D: v[1], R: v[2], E: v[3]}
		if t, ok := kv["C"]; ok {
			if sc.Bound.C, err = p.number(t); err != nil {
				return err
			}
		}
	case "expect":
		switch {
		case len(args) == 1 && args[0].text == "pass":
			p.f.Expect = &Expect{Pass: true}
		case len(args) >= 1 && args[0].text == "violation":
			oracle, err := p.name1(args[0], args[1:], "oracle")
			if err != nil {
				return err
			}
			p.f.Expect = &Expect{Oracle: oracle}
		case len(args) == 0:
			return p.errf(d.col, "expect wants \"pass\" or \"violation ORACLE\"")
		case args[0].text == "pass":
			return p.errf(args[1].col, "unexpected %q", args[1].text)
		default:
			return p.errf(args[0].col, "expect wants \"pass\" or \"violation ORACLE\", got %q", args[0].text)
		}
	}
	return nil
}

// name1 reads the single name argument of a directive.
func (p *parser) name1(d token, args []token, what string) (string, error) {
	if len(args) == 0 {
		return "", p.errf(d.col, "missing %s", what)
	}
	if len(args) > 1 {
		return "", p.errf(args[1].col, "unexpected %q", args[1].text)
	}
	if !validName(args[0].text) {
		return "", p.errf(args[0].col, "bad %s %q (want letters, digits, '_', '.' or '-')", what, args[0].text)
	}
	return args[0].text, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func indexOf(list []string, s string) int {
	for i, n := range list {
		if n == s {
			return i
		}
	}
	return -1
}

// keys splits key=value tokens; the returned tokens are the values with
// their columns. Unknown and duplicate keys are errors.
func (p *parser) keys(d token, args []token, allowed ...string) (map[string]token, error) {
	kv := map[string]token{}
	for _, a := range args {
		k, v, ok := strings.Cut(a.text, "=")
		if !ok {
			return nil, p.errf(a.col, "want key=value, got %q", a.text)
		}
		if indexOf(allowed, k) < 0 {
			return nil, p.errf(a.col, "unknown key %q for %s", k, d.text)
		}
		if _, dup := kv[k]; dup {
			return nil, p.errf(a.col, "duplicate key %q", k)
		}
		kv[k] = token{v, a.col + len(k) + 1}
	}
	return kv, nil
}

// number parses a non-negative decimal number.
func (p *parser) number(t token) (int, error) {
	return p.numberAt(t.text, t.col)
}

func (p *parser) numberAt(s string, col int) (int, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, p.errf(col, "bad number %q", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, p.errf(col, "bad number %q", s)
	}
	return n, nil
}

// user parses "user NAME filter=1,2 accept=* data=8 callin=5".
func (p *parser) user(d token, args []token) error {
	sc := p.f.Scenario
	if len(args) == 0 {
		return p.errf(d.col, "missing user name")
	}
	name := args[0]
	if !validName(name.text) {
		return p.errf(name.col, "bad user name %q (want letters, digits, '_', '.' or '-')", name.text)
	}
	if i, dup := p.users[name.text]; dup {
		return p.errf(name.col, "duplicate user %q (first at line %d)", name.text, p.userLine[i])
	}
	if len(sc.Users) == fgraph.MaxOps {
		return p.errf(d.col, "too many users: at most %d", fgraph.MaxOps)
	}
	kv, err := p.keys(d, args[1:], "filter", "accept", "data", "callin", "reject", "parent")
	if err != nil {
		return err
	}
	u := User{Name: name.text}
	if t, ok := kv["filter"]; ok {
		if u.Filter, err = p.funcList(t); err != nil {
			return err
		}
	}
	if t, ok := kv["accept"]; ok {
		if u.Accept, err = p.funcList(t); err != nil {
			return err
		}
	}
	if t, ok := kv["data"]; ok {
		if u.DataBytes, err = p.number(t); err != nil {
			return err
		}
	}
	if t, ok := kv["callin"]; ok {
		if u.CallInEntry, err = p.number(t); err != nil {
			return err
		}
		if u.CallInEntry > maxFunc {
			return p.errf(t.col, "function %d out of range 1..%d", u.CallInEntry, maxFunc)
		}
	}
	if t, ok := kv["reject"]; ok {
		if u.RejectAfter, err = p.funcList(t); err != nil {
			return err
		}
	}
	if t, ok := kv["parent"]; ok {
		if u.ParentDepth, err = p.number(t); err != nil {
			return err
		}
		if u.ParentDepth < 1 || u.ParentDepth > 8 {
			return p.errf(t.col, "parent depth %d out of range 1..8", u.ParentDepth)
		}
	}
	p.users[name.text] = len(sc.Users)
	p.userLine = append(p.userLine, p.line)
	sc.Users = append(sc.Users, u)
	return nil
}

// funcList parses "*" (nil: every function) or "1,2,3".
func (p *parser) funcList(t token) ([]int, error) {
	if t.text == "*" {
		return nil, nil
	}
	var out []int
	col := t.col
	for _, s := range strings.Split(t.text, ",") {
		n, err := p.numberAt(s, col)
		if err != nil {
			return nil, err
		}
		if n < 1 || n > maxFunc {
			return nil, p.errf(col, "function %d out of range 1..%d", n, maxFunc)
		}
		out = append(out, n)
		col += len(s) + 1
	}
	return out, nil
}

// program parses "ops=(call 1, ret)" into *prog.
func (p *parser) program(d token, args []token, what string, prog *[]Op, task bool) error {
	kv, err := p.keys(d, args, "ops")
	if err != nil {
		return err
	}
	t, ok := kv["ops"]
	if !ok {
		return p.errf(d.col, "missing key %q", "ops")
	}
	if len(t.text) < 2 || t.text[0] != '(' || t.text[len(t.text)-1] != ')' {
		return p.errf(t.col, "ops wants a list in parentheses: ops=(call 1, ret)")
	}
	ops, cols, err := p.ops(t.text[1:len(t.text)-1], t.col+1)
	if err != nil {
		return err
	}
	*prog = ops
	p.progs = append(p.progs, progLine{line: p.line, ops: t, cols: cols, what: what, prog: prog, task: task})
	return nil
}

// ops parses the inside of an op list; col is the column of its first byte.
func (p *parser) ops(s string, col int) ([]Op, []int, error) {
	if strings.Trim(s, " \t") == "" {
		return nil, nil, nil
	}
	var (
		ops  []Op
		cols []int
	)
	for _, item := range strings.Split(s, ",") {
		words := splitWords(item, col)
		itemCol := col
		col += len(item) + 1
		if len(words) == 0 {
			return nil, nil, p.errf(itemCol, "empty op")
		}
		if len(ops) == MaxProgramOps {
			return nil, nil, p.errf(itemCol, "program of more than %d ops (harness.MaxProgramOps)", MaxProgramOps)
		}
		w := words[0]
		var op Op
		switch w.text {
		case "call", "tail":
			op.Kind = OpCall
			if w.text == "tail" {
				op.Kind = OpTail
			}
			if len(words) < 2 {
				return nil, nil, p.errf(w.col, "%s wants a function number", w.text)
			}
			n, err := p.number(words[1])
			if err != nil {
				return nil, nil, err
			}
			op.Func = n
			words = words[2:]
		case "ret", "sleep", "unwind", "exit":
			op.Kind = OpKind(indexOf(opNames[:], w.text))
			words = words[1:]
		default:
			return nil, nil, p.errf(w.col, "unknown op %q (want call, tail, ret, sleep, unwind or exit)", w.text)
		}
		if len(words) > 0 {
			return nil, nil, p.errf(words[0].col, "unexpected %q after %s", words[0].text, w.text)
		}
		ops = append(ops, op)
		cols = append(cols, w.col)
	}
	return ops, cols, nil
}

// splitWords splits s at spaces and tabs; col is the column of s[0].
func splitWords(s string, col int) []token {
	var out []token
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, token{s[i:j], col + i})
		i = j
	}
	return out
}

// finish ends the scenario part: required lines, names, and validation.
func (p *parser) finish() error {
	sc := p.f.Scenario
	for _, d := range []string{"scenario", "variant"} {
		if _, ok := p.once[d]; !ok {
			return p.errAt(1, 1, "missing %q line", d)
		}
	}
	if len(sc.Tasks) == 0 {
		return p.errAt(1, 1, "missing %q line", "task")
	}
	if _, ok := p.once["bound"]; !ok {
		return p.errAt(1, 1, "missing %q line", "bound")
	}
	if n := len(sc.Tasks); n > 8 {
		return p.errAt(p.taskLine[8], 1, "%d tasks, at most 8", n)
	}
	if n := len(sc.Users); n > fgraph.MaxOps {
		return p.errAt(p.userLine[fgraph.MaxOps], 1, "%d users, at most %d", n, fgraph.MaxOps)
	}
	for _, t := range p.setup {
		i, ok := p.users[t.text]
		if !ok {
			return p.errAt(p.setupAt, t.col, "unknown user %q", t.text)
		}
		sc.Setup = append(sc.Setup, i)
	}
	labels := map[string]int{}
	for _, rl := range p.remotes {
		var r Remote
		switch rl.kind.text {
		case "register", "unregister":
			r.Kind = RemoteRegister
			if rl.kind.text == "unregister" {
				r.Kind = RemoteUnregister
			}
			i, ok := p.users[rl.arg.text]
			if !ok {
				return p.errAt(rl.line, rl.arg.col, "unknown user %q", rl.arg.text)
			}
			r.User = i
		case "replace":
			r.Kind = RemoteReplace
			i, ok := p.users[rl.arg.text]
			if !ok {
				return p.errAt(rl.line, rl.arg.col, "unknown user %q", rl.arg.text)
			}
			j, ok := p.users[rl.with.text]
			if !ok {
				return p.errAt(rl.line, rl.with.col, "unknown user %q", rl.with.text)
			}
			if i == j {
				return p.errAt(rl.line, rl.with.col, "replace %q by itself", rl.with.text)
			}
			r.User, r.With = i, j
		case "unwind":
			r.Kind = RemoteUnwind
			n, err := p.taskRef(rl.arg, rl.line)
			if err != nil {
				return err
			}
			r.Task = n
		default:
			return p.errAt(rl.line, rl.kind.col, "unknown remote action %q (want register, unregister, replace or unwind)", rl.kind.text)
		}
		label := r.Label(sc)
		if first, dup := labels[label]; dup {
			return p.errAt(rl.line, rl.kind.col, "duplicate remote %q (first at line %d)", label, first)
		}
		labels[label] = rl.line
		sc.Remotes = append(sc.Remotes, r)
	}
	if err := sc.Config().Validate(); err != nil {
		msg := strings.TrimPrefix(err.Error(), "fgraph: ")
		if p.stack != nil {
			return p.errAt(p.stackAt, p.stack.col, "%s", msg)
		}
		return p.errAt(1, 1, "%s", msg)
	}
	for _, pl := range p.progs {
		if err := checkProgram(*pl.prog, pl.task); err != nil {
			col := pl.ops.col
			var n int
			if _, serr := fmt.Sscanf(err.Error(), "op %d:", &n); serr == nil && n >= 1 && n <= len(pl.cols) {
				col = pl.cols[n-1]
			}
			return p.errAt(pl.line, col, "%s: %v", pl.what, err)
		}
	}
	if err := sc.Validate(); err != nil {
		return p.errAt(1, 1, "%v", err)
	}
	return nil
}

// taskRef parses "taskN" with N a task of the scenario.
func (p *parser) taskRef(t token, line int) (int, error) {
	s, ok := strings.CutPrefix(t.text, "task")
	if !ok || s == "" {
		return 0, p.errAt(line, t.col, "bad task %q (want taskN)", t.text)
	}
	n, err := p.numberAt(s, t.col+4)
	if err != nil {
		return 0, p.errAt(line, t.col, "bad task %q (want taskN)", t.text)
	}
	if n >= len(p.f.Scenario.Tasks) {
		return 0, p.errAt(line, t.col, "no task%d: the scenario has %s", n, plural(len(p.f.Scenario.Tasks), "task"))
	}
	return n, nil
}

// startSchedule ends the scenario part at the first event or order line.
func (p *parser) startSchedule() error {
	if p.schedule != 0 {
		return nil
	}
	p.schedule = p.line
	return p.finish()
}

// event parses "irq|nmi|remote id=N in=CTX at=SITE#OCC [do=ACTION ARG]".
func (p *parser) event(toks []token) error {
	if err := p.startSchedule(); err != nil {
		return err
	}
	d := toks[0]
	if len(p.evKind) == MaxEventLines {
		return p.errf(d.col, "more than %d event lines (harness.MaxEventLines)", MaxEventLines)
	}
	kind := EventKind(indexOf(eventNames[:], d.text))
	allowed := []string{"id", "in", "at"}
	if kind == EvRemote {
		allowed = append(allowed, "do")
	}
	var doArgs []token
	args := toks[1:]
	var kvToks []token
	for i := 0; i < len(args); i++ {
		kvToks = append(kvToks, args[i])
		if kind == EvRemote && strings.HasPrefix(args[i].text, "do=") {
			if i+1 >= len(args) {
				return p.errf(args[i].col, "do= wants an action and its argument: do=unregister u1")
			}
			i++
			doArgs = append(doArgs, args[i])
			if args[i-1].text == "do=replace" && i+1 < len(args) {
				i++
				doArgs = append(doArgs, args[i])
			}
		}
	}
	kv, err := p.keys(d, kvToks, allowed...)
	if err != nil {
		return err
	}
	for _, k := range allowed {
		if _, ok := kv[k]; !ok {
			return p.errf(d.col, "missing key %q", k)
		}
	}
	ev := Event{Kind: kind}
	t := kv["id"]
	if ev.ID, err = p.number(t); err != nil {
		return err
	}
	if want := len(p.f.Schedule.Events) + 1; ev.ID != want {
		return p.errf(t.col, "event id %d, want %d (ids count 1, 2, 3, ... in file order)", ev.ID, want)
	}
	t = kv["in"]
	if ev.In, err = p.context(t, kind); err != nil {
		return err
	}
	t = kv["at"]
	site, occ, ok := strings.Cut(t.text, "#")
	if !ok {
		return p.errf(t.col, "bad position %q (want SITE#N)", t.text)
	}
	if ev.At.Site, ok = fgraph.ParseSite(site); !ok {
		return p.errf(t.col, "unknown site %q", site)
	}
	occCol := t.col + len(site) + 1
	if ev.At.Occ, err = p.numberAt(occ, occCol); err != nil {
		return err
	}
	if ev.At.Occ < 1 {
		return p.errf(occCol, "occurrence %d, want 1 or more", ev.At.Occ)
	}
	if kind == EvRemote {
		t = kv["do"]
		label := t.text
		for _, a := range doArgs {
			label += " " + a.text
		}
		sc := p.f.Scenario
		ev.Remote = -1
		for i, r := range sc.Remotes {
			if r.Label(sc) == label {
				ev.Remote = i
				break
			}
		}
		if ev.Remote < 0 {
			return p.errf(t.col, "no remote %q in the scenario", label)
		}
	}
	p.f.Schedule.Events = append(p.f.Schedule.Events, ev)
	p.evKind = append(p.evKind, kind)
	return nil
}

// context parses in=: "taskN" or the id of an earlier interrupt event.
func (p *parser) context(t token, kind EventKind) (string, error) {
	if strings.HasPrefix(t.text, "task") {
		n, err := p.taskRef(t, p.line)
		if err != nil {
			return "", err
		}
		if kind == EvNMI {
			return "", p.errf(t.col, "nmi must fire in an irq or nmi event, not in task%d", n)
		}
		return "task" + strconv.Itoa(n), nil
	}
	if t.text == "" || t.text[0] < '0' || t.text[0] > '9' {
		return "", p.errf(t.col, "bad context %q (want taskN or the id of an earlier event)", t.text)
	}
	n, err := p.number(t)
	if err != nil {
		return "", err
	}
	if n < 1 || n > len(p.evKind) {
		return "", p.errf(t.col, "no event %d before this line", n)
	}
	parent := p.evKind[n-1]
	if parent == EvRemote {
		return "", p.errf(t.col, "event %d is a remote event, not a context", n)
	}
	if kind == EvIRQ {
		return "", p.errf(t.col, "irq must fire in a task, not in event %d", n)
	}
	return strconv.Itoa(n), nil
}

// order parses "order REGION = SITE ... -SITE ...".
func (p *parser) order(toks []token) error {
	if err := p.startSchedule(); err != nil {
		return err
	}
	d := toks[0]
	if len(toks) < 2 {
		return p.errf(d.col, "missing region")
	}
	var o Order
	var ok bool
	if o.Region, ok = fgraph.ParseSite(toks[1].text); !ok {
		return p.errf(toks[1].col, "unknown site %q", toks[1].text)
	}
	if first, dup := p.regions[o.Region]; dup {
		return p.errf(toks[1].col, "region %s already ordered at line %d", o.Region, first)
	}
	if len(toks) < 3 {
		return p.errf(d.col, "missing \"=\" after the region")
	}
	if toks[2].text != "=" {
		return p.errf(toks[2].col, "want \"=\" after the region, got %q", toks[2].text)
	}
	for _, t := range toks[3:] {
		name, drop := strings.CutPrefix(t.text, "-")
		s, ok := fgraph.ParseSite(name)
		if !ok {
			col := t.col
			if drop {
				col++
			}
			return p.errf(col, "unknown site %q", name)
		}
		if drop {
			o.Drop = append(o.Drop, s)
		} else {
			o.Sites = append(o.Sites, s)
		}
	}
	p.regions[o.Region] = p.line
	p.f.Schedule.Orders = append(p.f.Schedule.Orders, o)
	return nil
}

// Format returns the canonical text of the file (see ParseFile). Comments
// must not contain newlines.
func (f *File) Format() []byte {
	var b strings.Builder
	b.WriteString(formatMagic + " " + formatVersion + "\n")
	for _, c := range f.Comments {
		if c == "" {
			b.WriteString("#\n")
		} else {
			b.WriteString("# " + c + "\n")
		}
	}
	sc := f.Scenario
	if sc == nil {
		return []byte(b.String())
	}
	line := func(parts ...string) {
		b.WriteString(strings.Join(parts, " "))
		b.WriteByte('\n')
	}
	line("scenario", sc.Name)
	line("variant", sc.Variant.String())
	if sc.FrameWords != 0 || sc.StackWords != 0 {
		line("layout", fmt.Sprintf("frame=%d", sc.FrameWords), fmt.Sprintf("stack=%d", sc.StackWords))
	}
	if fx := sc.Fixes.Names(); len(fx) > 0 {
		line(append([]string{"fixes"}, fx...)...)
	}
	if sc.Mutant != 0 {
		line("mutant", sc.Mutant.Info().Name)
	}
	for _, u := range sc.Users {
		parts := []string{"user", u.Name, "filter=" + funcList(u.Filter), "accept=" + funcList(u.Accept), fmt.Sprintf("data=%d", u.DataBytes)}
		if u.CallInEntry != 0 {
			parts = append(parts, fmt.Sprintf("callin=%d", u.CallInEntry))
		}
		if len(u.RejectAfter) > 0 {
			parts = append(parts, "reject="+funcList(u.RejectAfter))
		}
		if u.ParentDepth != 0 {
			parts = append(parts, fmt.Sprintf("parent=%d", u.ParentDepth))
		}
		line(parts...)
	}
	if len(sc.Setup) > 0 {
		parts := []string{"setup"}
		for _, u := range sc.Setup {
			parts = append(parts, userName(sc, u))
		}
		line(parts...)
	}
	for _, t := range sc.Tasks {
		line("task", formatOps(t))
	}
	if len(sc.IRQ) > 0 {
		line("irq", formatOps(sc.IRQ))
	}
	if len(sc.NMI) > 0 {
		line("nmi", formatOps(sc.NMI))
	}
	for _, r := range sc.Remotes {
		line("remote", remoteLabel(sc, r))
	}
	line("bound", sc.Bound.String())
	if opts := (flags{sc.StoresOnly, sc.Alias, f.Strict, sc.AnyReader}).names(optionNames[:]); len(opts) > 0 {
		line(append([]string{"options"}, opts...)...)
	}
	if e := f.Expect; e != nil {
		if e.Pass {
			line("expect", "pass")
		} else {
			line("expect", "violation", e.Oracle)
		}
	}
	b.WriteString(FormatSchedule(sc, f.Schedule))
	return []byte(b.String())
}

type flags []bool

func (fl flags) names(names []string) []string {
	var out []string
	for i, on := range fl {
		if on {
			out = append(out, names[i])
		}
	}
	return out
}

// FormatSchedule returns the event and order lines of a schedule in
// canonical form, each ending in a newline ("" for the empty schedule). The
// scenario names the remote actions.
func FormatSchedule(sc *Scenario, s Schedule) string {
	var b strings.Builder
	for _, e := range s.Events {
		fmt.Fprintf(&b, "%s id=%d in=%s at=%s", e.Kind, e.ID, e.In, e.At)
		if e.Kind == EvRemote {
			label := fmt.Sprintf("remote%d", e.Remote)
			if sc != nil && e.Remote >= 0 && e.Remote < len(sc.Remotes) {
				label = remoteLabel(sc, sc.Remotes[e.Remote])
			}
			b.WriteString(" do=" + label)
		}
		b.WriteByte('\n')
	}
	for _, o := range s.Orders {
		b.WriteString("order " + o.Region.String() + " =")
		for _, s := range o.Sites {
			b.WriteString(" " + s.String())
		}
		for _, s := range o.Drop {
			b.WriteString(" -" + s.String())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// remoteLabel is Remote.Label that tolerates a bad user index.
func remoteLabel(sc *Scenario, r Remote) string {
	if r.Kind == RemoteUnwind {
		return r.Label(sc)
	}
	if r.Kind == RemoteReplace {
		return fmt.Sprintf("replace %s %s", userName(sc, r.User), userName(sc, r.With))
	}
	return fmt.Sprintf("%s %s", r.Kind, userName(sc, r.User))
}

func userName(sc *Scenario, i int) string {
	if i >= 0 && i < len(sc.Users) {
		return sc.Users[i].Name
	}
	return fmt.Sprintf("user%d?", i)
}

func funcList(l []int) string {
	if len(l) == 0 {
		return "*"
	}
	s := make([]string, len(l))
	for i, n := range l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func formatOps(p []Op) string { return "ops=(" + OpsText(p) + ")" }

// OpsText is a program as the schedule format writes it inside ops=(...):
// "call 1, call 2, ret, ret".
func OpsText(p []Op) string {
	s := make([]string, len(p))
	for i, op := range p {
		s[i] = op.String()
	}
	return strings.Join(s, ", ")
}
