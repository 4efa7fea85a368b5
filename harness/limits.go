package harness

// Size limits of the schedule format, checked while reading so that a huge
// or hostile input is refused early and cheaply: the file's size as it is
// read (ReadInput), each line's length, the ops of a program, the users,
// tasks and events as their lines come; an error quotes at most
// maxQuote bytes of a token.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

const (
	// MaxFileBytes caps a schedule or scenario file (the corpus's largest
	// is under 4 KB).
	MaxFileBytes = 1 << 20
	// MaxLineBytes caps one line: a task program of MaxProgramOps calls.
	MaxLineBytes = 64 << 10
	// MaxProgramOps caps the ops of one program (a task's, the IRQ's or the
	// NMI's): the cost of a run is linear in it (BenchmarkLongProgram).
	MaxProgramOps = 4096
	// MaxCallDepth caps the open calls of a program: the unwinder oracles
	// walk every frame at every yield point, so a run costs ops times
	// depth; 256 is past what any shadow stack holds (512 words, frames of
	// at least 4), so deeper calls only overrun.
	MaxCallDepth = 256
	// MaxTasks caps the task lines (fgraph.Config.Validate's bound).
	MaxTasks = 8
	// MaxEventLines caps the event lines of a schedule: far more than
	// any bound lets a run inject (K is at most 16).
	MaxEventLines = 1024
	// maxQuote is the most of a token an error message quotes.
	maxQuote = 40
)

// ReadInput reads the schedule file at path, refusing it as soon as it
// proves larger than MaxFileBytes (a *FormatError at 1:1); other errors are
// the file system's.
func ReadInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, sizeError(path)
	}
	return data, nil
}

func sizeError(name string) error {
	return &FormatError{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("file larger than %d bytes, the limit of a schedule file (harness.MaxFileBytes)", MaxFileBytes)}
}

// IsTooLarge reports whether err is ReadInput's or ParseFile's refusal of
// a file over MaxFileBytes.
func IsTooLarge(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe) && strings.HasPrefix(fe.Msg, "file larger than")
}

// shortQuotes shortens every argument printed with %q to maxQuote bytes
// (at a rune boundary, with "..." after it).
func shortQuotes(format string, args []any) []any {
	out := args
	n := 0 // the argument the next verb takes
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			break
		}
		if format[j] == '%' {
			i = j
			continue
		}
		if format[j] == 'q' && n < len(args) {
			if s, ok := args[n].(string); ok && len(s) > maxQuote {
				if &out[0] == &args[0] {
					out = append([]any(nil), args...)
				}
				out[n] = cut(s, maxQuote) + "..."
			}
		}
		n++
		i = j
	}
	return out
}

// cut is at most the first n bytes of s, ending at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
