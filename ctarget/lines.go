package ctarget

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Lines maps the code addresses of a built object to the source lines of
// the tree's fgraph.c, from the object's DWARF line table, and lines to the
// function they are in, from its DWARF subprograms.
type Lines struct {
	pcs   []uint64 // sorted start addresses (object-relative)
	lines []int    // line of fgraph.c at pcs[i], 0 if another file
	funcs []fn     // fgraph.c's functions by declaration line
	text  []string // fgraph.c's source lines (1-based: text[0] is "")
	// Symbols are the object's symbols (locals included) by name.
	Symbols map[string]elf.Symbol
	// Data is the object-relative range of its writable segment.
	DataLo, DataHi uint64
	// Text is the object-relative range of its read-only segments.
	TextLo, TextHi uint64
}

type fn struct {
	line int
	name string
}

// ReadLines reads the line table and symbols of obj.
func ReadLines(obj *Object) (*Lines, error) {
	f, err := elf.Open(obj.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := os.ReadFile(filepath.Join(obj.Tree, FgraphC))
	if err != nil {
		return nil, err
	}
	l := &Lines{Symbols: map[string]elf.Symbol{}, text: append([]string{""}, strings.Split(string(src), "\n")...)}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	for _, s := range syms {
		if _, dup := l.Symbols[s.Name]; !dup {
			l.Symbols[s.Name] = s
		}
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Flags&elf.PF_W != 0 {
			l.DataLo, l.DataHi = p.Vaddr, p.Vaddr+p.Memsz
		} else if l.TextHi < p.Vaddr+p.Memsz {
			l.TextHi = p.Vaddr + p.Memsz
		}
	}
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("%s: no DWARF: %v", obj.Path, err)
	}
	type ent struct {
		pc   uint64
		line int
	}
	var ents []ent
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if !strings.HasSuffix(name, "fgraph.c") {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			return nil, fmt.Errorf("%s: no line table for %s", obj.Path, name)
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			line := 0
			if le.File != nil && strings.HasSuffix(le.File.Name, "kernel/trace/fgraph.c") {
				line = le.Line
			}
			ents = append(ents, ent{le.Address, line})
		}
		files := lr.Files()
		// The subprograms of the unit: fgraph.c's functions.
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			if c.Tag == dwarf.TagSubprogram {
				n, _ := c.Val(dwarf.AttrName).(string)
				dl, _ := c.Val(dwarf.AttrDeclLine).(int64)
				df, _ := c.Val(dwarf.AttrDeclFile).(int64)
				if n != "" && dl > 0 && int(df) < len(files) && files[df] != nil &&
					strings.HasSuffix(files[df].Name, "kernel/trace/fgraph.c") {
					l.funcs = append(l.funcs, fn{int(dl), n})
				}
			}
			if c.Children {
				r.SkipChildren()
			}
		}
	}
	if len(ents) == 0 {
		return nil, fmt.Errorf("%s: the line table has no line of fgraph.c", obj.Path)
	}
	sort.SliceStable(ents, func(i, j int) bool { return ents[i].pc < ents[j].pc })
	for _, e := range ents {
		if n := len(l.pcs); n > 0 && l.pcs[n-1] == e.pc {
			l.lines[n-1] = e.line
			continue
		}
		l.pcs = append(l.pcs, e.pc)
		l.lines = append(l.lines, e.line)
	}
	sort.Slice(l.funcs, func(i, j int) bool { return l.funcs[i].line < l.funcs[j].line })
	return l, nil
}

// Line is the fgraph.c line of the code at object-relative address pc (the
// return address of an instrumentation call: the line of the call), 0 if
// none.
func (l *Lines) Line(pc uint64) int {
	if pc > 0 {
		pc-- // inside the call instruction
	}
	i := sort.Search(len(l.pcs), func(i int) bool { return l.pcs[i] > pc }) - 1
	if i < 0 {
		return 0
	}
	return l.lines[i]
}

// Func is the function of fgraph.c that line is in.
func (l *Lines) Func(line int) string {
	i := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].line > line }) - 1
	if i < 0 {
		return ""
	}
	return l.funcs[i].name
}

// Text is the source text of line.
func (l *Lines) Text(line int) string {
	if line <= 0 || line >= len(l.text) {
		return ""
	}
	return strings.TrimSpace(l.text[line])
}

// FuncLines returns the lines of function name whose text contains sub.
func (l *Lines) FuncLines(name, sub string) []int {
	var out []int
	for i := 1; i < len(l.text); i++ {
		if strings.Contains(l.text[i], sub) && l.Func(i) == name {
			out = append(out, i)
		}
	}
	return out
}
