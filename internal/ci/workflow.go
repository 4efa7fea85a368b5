package ci

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Workflow is the part of a GitHub Actions workflow file the checks read.
type Workflow struct {
	Path        string            `yaml:"-"`
	Name        string            `yaml:"name"`
	On          yaml.Node         `yaml:"on"`
	Permissions yaml.Node         `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]*Job   `yaml:"jobs"`
}

// Job is one job of a Workflow.
type Job struct {
	Name           string            `yaml:"name"`
	Needs          yaml.Node         `yaml:"needs"`
	If             string            `yaml:"if"`
	RunsOn         string            `yaml:"runs-on"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Permissions    yaml.Node         `yaml:"permissions"`
	Env            map[string]string `yaml:"env"`
	Strategy       struct {
		Matrix yaml.Node `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []*Step `yaml:"steps"`
}

// Step is one step of a Job.
type Step struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// LoadWorkflow reads a workflow file.
func LoadWorkflow(path string) (*Workflow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w := &Workflow{Path: path}
	if err := yaml.Unmarshal(b, w); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(w.Jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", path)
	}
	return w, nil
}

// Permissions decodes a permissions node: a map of scope to level, or one
// of the strings read-all / write-all (returned as {"*": level}). An
// absent node gives nil.
func Permissions(n yaml.Node) (map[string]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		return map[string]string{"*": n.Value}, nil
	}
	var m map[string]string
	if err := n.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// Needs lists the jobs a job needs.
func (j *Job) NeedsList() []string {
	switch j.Needs.Kind {
	case yaml.ScalarNode:
		return []string{j.Needs.Value}
	case yaml.SequenceNode:
		var l []string
		_ = j.Needs.Decode(&l)
		return l
	}
	return nil
}

// Combo is one combination of a job's matrix: key to value (as text).
type Combo map[string]string

// Matrix expands a job's strategy.matrix into its combinations: the
// cartesian product of its keys, or its include list when it has only
// that. A job without a matrix has one empty combination. exclude, and
// include next to other keys, are not supported (an error, so that a
// workflow using them makes the checks fail loudly instead of wrongly).
func (j *Job) Matrix() ([]Combo, error) {
	n := j.Strategy.Matrix
	if n.Kind == 0 {
		return []Combo{{}}, nil
	}
	var raw map[string]yaml.Node
	if err := n.Decode(&raw); err != nil {
		return nil, err
	}
	if inc, ok := raw["include"]; ok {
		if len(raw) != 1 {
			return nil, fmt.Errorf("matrix: include next to other keys is not supported by these checks")
		}
		var list []map[string]string
		if err := inc.Decode(&list); err != nil {
			return nil, err
		}
		var out []Combo
		for _, m := range list {
			out = append(out, Combo(m))
		}
		return out, nil
	}
	if _, ok := raw["exclude"]; ok {
		return nil, fmt.Errorf("matrix: exclude is not supported by these checks")
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []Combo{{}}
	for _, k := range keys {
		var vals []string
		node := raw[k]
		if err := node.Decode(&vals); err != nil {
			return nil, fmt.Errorf("matrix.%s: %v", k, err)
		}
		var next []Combo
		for _, c := range out {
			for _, v := range vals {
				d := Combo{k: v}
				for kk, vv := range c {
					d[kk] = vv
				}
				next = append(next, d)
			}
		}
		out = next
	}
	return out, nil
}

// RunnerEnv is the environment a runner gives every step, as far as the
// checks need it.
var RunnerEnv = map[string]string{
	"RUNNER_TEMP":         "/runner/temp",
	"GITHUB_STEP_SUMMARY": "/runner/step-summary.md",
	"GITHUB_OUTPUT":       "/runner/output",
	"GITHUB_WORKSPACE":    "/runner/work",
}

var exprRE = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// Expr substitutes the ${{ matrix.X }} and ${{ env.X }} expressions of s;
// any other expression is an error.
func Expr(s string, c Combo, env map[string]string) (string, error) {
	var err error
	out := exprRE.ReplaceAllStringFunc(s, func(m string) string {
		e := exprRE.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "matrix."):
			if v, ok := c[strings.TrimPrefix(e, "matrix.")]; ok {
				return v
			}
		case strings.HasPrefix(e, "env."):
			if v, ok := env[strings.TrimPrefix(e, "env.")]; ok {
				return v
			}
		}
		if err == nil {
			err = fmt.Errorf("expression ${{ %s }} cannot be evaluated here", e)
		}
		return m
	})
	return out, err
}

// StepEnv is the environment a step of job runs with for combination c:
// the runner's, the workflow's, the job's and the step's, in that order of
// precedence, each with its expressions evaluated.
func StepEnv(w *Workflow, j *Job, s *Step, c Combo) map[string]string {
	env := map[string]string{}
	for k, v := range RunnerEnv {
		env[k] = v
	}
	for _, layer := range []map[string]string{w.Env, j.Env, s.Env} {
		for k, v := range layer {
			// An expression Expr cannot evaluate (inputs, secrets) stays
			// as written; a command line using it shows it.
			x, _ := Expr(v, c, env)
			env[k] = x
		}
	}
	return env
}

// Command is one simple command of a run script after expansion: its words
// and where its standard output goes ("" when not redirected).
type Command struct {
	Words  []string
	Stdout string
}

// Commands splits a run script into simple commands, expanding $VAR and
// ${VAR} from env and the ${{ }} expressions Expr knows. It understands
// what the workflows here use: backslash-newline continuations, single and
// double quotes, ;, &&, ||, |, and the redirections > FILE, >> FILE,
// 2> FILE, < FILE, N>&M. A variable not in env is left as written ($X),
// and so is $(...). An expression Expr cannot evaluate is an error.
func Commands(script string, c Combo, env map[string]string) ([]Command, error) {
	script, err := Expr(strings.ReplaceAll(script, "\\\n", " "), c, env)
	if err != nil {
		return nil, err
	}
	var out []Command
	var cur Command
	var word strings.Builder
	inWord := false
	redirect := "" // the redirection whose target the next word is
	flushWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		switch redirect {
		case ">", ">>":
			cur.Stdout = w
		case "":
			cur.Words = append(cur.Words, w)
		}
		redirect = ""
	}
	flushCmd := func() {
		flushWord()
		if len(cur.Words) > 0 {
			out = append(out, cur)
		}
		cur = Command{}
	}
	expand := func(s string, i int) (int, error) { // s[i] == '$'
		j := i + 1
		var name string
		if j < len(s) && s[j] == '{' {
			k := strings.IndexByte(s[j:], '}')
			if k < 0 {
				return 0, fmt.Errorf("unterminated ${")
			}
			name, j = s[j+1:j+k], j+k+1
		} else {
			k := j
			for k < len(s) && (s[k] == '_' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9' && k > j) {
				k++
			}
			if k == j {
				word.WriteByte('$')
				inWord = true
				return j, nil
			}
			name, j = s[j:k], k
		}
		v, ok := env[name]
		if !ok {
			v = "$" + name
		}
		word.WriteString(v)
		inWord = true
		return j, nil
	}
	s := script
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case ch == '\n' || ch == ';' || ch == '|' || ch == '&':
			flushCmd()
			i++
		case ch == ' ' || ch == '\t':
			flushWord()
			i++
		case ch == '>' || ch == '<' || ch == '2' && !inWord && i+1 < len(s) && s[i+1] == '>':
			flushWord()
			r := string(ch)
			if ch == '2' {
				r, i = "2>", i+1
			}
			i++
			if i < len(s) && s[i] == '>' {
				r += ">"
				i++
			}
			if r == "2>>" {
				r = "2>"
			}
			redirect = r
			if i < len(s) && s[i] == '&' { // N>&M: no target word
				i++
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				redirect = ""
			}
		case ch == '\'':
			k := strings.IndexByte(s[i+1:], '\'')
			if k < 0 {
				return nil, fmt.Errorf("unterminated ' quote")
			}
			word.WriteString(s[i+1 : i+1+k])
			inWord = true
			i += k + 2
		case ch == '"':
			i++
			inWord = true
			for {
				if i >= len(s) {
					return nil, fmt.Errorf("unterminated \" quote")
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '$' {
					j, err := expand(s, i)
					if err != nil {
						return nil, err
					}
					i = j
					continue
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				word.WriteByte(s[i])
				i++
			}
		case ch == '$':
			j, err := expand(s, i)
			if err != nil {
				return nil, err
			}
			i = j
		default:
			word.WriteByte(ch)
			inWord = true
			i++
		}
	}
	flushCmd()
	return out, nil
}

// Invocation is one fgcheck command line of a workflow, expanded for one
// matrix combination.
type Invocation struct {
	Where  string   // workflow, job, step and combination, for messages
	Args   []string // after the fgcheck program: subcommand, then flags and arguments
	Stdout string
	Combo  Combo
	Job    string
}

// FgcheckInvocations finds every fgcheck command line in the run steps of
// w, for every combination of each job's matrix: commands whose program is
// a file named fgcheck, or `go run ./cmd/fgcheck`.
func FgcheckInvocations(w *Workflow) ([]Invocation, error) {
	var out []Invocation
	var jobs []string
	for name := range w.Jobs {
		jobs = append(jobs, name)
	}
	sort.Strings(jobs)
	for _, jn := range jobs {
		j := w.Jobs[jn]
		combos, err := j.Matrix()
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %v", w.Path, jn, err)
		}
		for _, c := range combos {
			for si, s := range j.Steps {
				if s.Run == "" {
					continue
				}
				where := fmt.Sprintf("%s: job %s step %d (%s) %v", w.Path, jn, si+1, s.Name, map[string]string(c))
				cmds, err := Commands(s.Run, c, StepEnv(w, j, s, c))
				if err != nil {
					return nil, fmt.Errorf("%s: %v", where, err)
				}
				for _, cmd := range cmds {
					w := cmd.Words
					switch {
					case path.Base(w[0]) == "fgcheck":
						out = append(out, Invocation{Where: where, Args: w[1:], Stdout: cmd.Stdout, Combo: c, Job: jn})
					case len(w) >= 3 && w[0] == "go" && w[1] == "run" && strings.TrimSuffix(w[2], "/") == "./cmd/fgcheck":
						out = append(out, Invocation{Where: where, Args: w[3:], Stdout: cmd.Stdout, Combo: c, Job: jn})
					}
				}
			}
		}
	}
	return out, nil
}

// Flags returns the flag names (without dashes) of an argument list,
// stopping at "--", and the value given with each: after =, or the next
// argument when takesValue says the flag takes one (when takesValue is
// nil: when the next argument does not start with a dash).
func Flags(args []string, takesValue func(name string) bool) (map[string]string, []string) {
	flags := map[string]string{}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		val := ""
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, val = name[:k], name[k+1:]
		} else if i+1 < len(args) && (takesValue == nil && !strings.HasPrefix(args[i+1], "-") || takesValue != nil && takesValue(name)) {
			val = args[i+1]
			i++
		}
		flags[name] = val
	}
	return flags, positional
}
