// Command fgcheck explores, samples, replays and minimizes interleavings of
// the fgraph shadow stack under simulated interrupts, and runs the mutant
// catalogue. Run "fgcheck help" for the subcommands.
//
// Exit codes: 0 clean (known findings allowed), 1 a violation was found
// (a crash of the code under test included), 2 misuse (bad flags, bad
// files, unknown names), 3 an internal error of fgcheck itself.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
)

// command is one subcommand. Files named cmd_<name>.go register theirs in
// init().
type command struct {
	name  string
	short string // one line for "fgcheck help"
	run   func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("fgcheck: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// Exit codes.
const (
	exitClean     = 0
	exitViolation = 1
	exitMisuse    = 2
	exitInternal  = 3
)

func main() {
	// The explorer allocates small, short-lived objects at every run and
	// keeps a heap of about 10 MB: a less eager collector buys 8-25 %
	// (measured on std). GOGC still wins when set.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(runProtected(os.Args[1:], os.Stdout, os.Stderr))
}

// runProtected is run with a panic of fgcheck itself reported as an
// internal error (exit 3), not as Go's exit 2, which means misuse here.
func runProtected(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if x := recover(); x != nil {
			fmt.Fprintf(stderr, "fgcheck: internal error (a bug in fgcheck, not in the code under test): %v\n%s", x, debug.Stack())
			code = exitInternal
		}
	}()
	return run(args, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 2 && args[0] == "help" {
		if c := commands[args[1]]; c != nil {
			return c.run([]string{"-h"}, stdout, stderr) // fgcheck help CMD
		}
		fmt.Fprintf(stderr, "fgcheck help: unknown command %q (run \"fgcheck help\")\n", args[1])
		return exitMisuse
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return exitMisuse
		}
		return exitClean
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fgcheck: unknown command %q (run \"fgcheck help\")\n", args[0])
		return exitMisuse
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: fgcheck COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run \"fgcheck help COMMAND\" or \"fgcheck COMMAND -h\" for its flags and examples.")
	fmt.Fprintln(w, "Exit codes: 0 clean, 1 a violation, 2 misuse, 3 internal error, 130/143 interrupted.")
}
