// Command fuzzconv converts between schedule files (the record) and the
// seed entries of the fuzz targets in fuzz/ (views).
//
//	go run ./fuzz/internal/fuzzconv seed [-dir fuzz/testdata/fuzz] FILE...
//
// writes, for every schedule file, a FuzzScheduleFile seed entry holding
// its text and a FuzzSchedule seed entry whose choice stream replays its
// schedule (on its own scenario if that is a fuzz shape, else projected
// onto std: fuzz.ScheduleInput); each is named as the go command names
// corpus files. It prints one line per file written.
//
//	go run ./fuzz/internal/fuzzconv file ENTRY
//
// prints the canonical schedule file of a seed entry: the file a
// FuzzScheduleFile entry holds, or the schedule of the run a FuzzSchedule
// entry (or a failing input go test -fuzz wrote) decodes into. The target
// is the entry's directory name unless -target says otherwise.
//
// Exit codes: 0 success, 1 a file could not be converted, 2 misuse.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fgcheck/fgcheck/fuzz"
	"github.com/fgcheck/fgcheck/harness"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: fuzzconv seed [-dir DIR] FILE... | fuzzconv file [-target NAME] ENTRY")
		return 2
	}
	switch args[0] {
	case "seed":
		fs := flag.NewFlagSet("seed", flag.ContinueOnError)
		fs.SetOutput(stderr)
		dir := fs.String("dir", filepath.Join("fuzz", "testdata", "fuzz"), "the fuzz targets' testdata/fuzz directory")
		if fs.Parse(args[1:]) != nil || fs.NArg() == 0 {
			fmt.Fprintln(stderr, "usage: fuzzconv seed [-dir DIR] FILE...")
			return 2
		}
		rc := 0
		for _, p := range fs.Args() {
			if err := seed(*dir, p, stdout); err != nil {
				fmt.Fprintf(stderr, "fuzzconv: %s: %v\n", p, err)
				rc = 1
			}
		}
		return rc
	case "file":
		fs := flag.NewFlagSet("file", flag.ContinueOnError)
		fs.SetOutput(stderr)
		target := fs.String("target", "", "FuzzScheduleFile or FuzzSchedule (default: the entry's directory name)")
		if fs.Parse(args[1:]) != nil || fs.NArg() != 1 {
			fmt.Fprintln(stderr, "usage: fuzzconv file [-target NAME] ENTRY")
			return 2
		}
		p := fs.Arg(0)
		t := *target
		if t == "" {
			t = filepath.Base(filepath.Dir(p))
		}
		out, err := file(t, p)
		if err != nil {
			fmt.Fprintf(stderr, "fuzzconv: %s: %v\n", p, err)
			return 1
		}
		stdout.Write(out)
		return 0
	}
	fmt.Fprintf(stderr, "fuzzconv: unknown command %q (want seed or file)\n", args[0])
	return 2
}

// seed writes the seed entries of one schedule file.
func seed(dir, path string, stdout io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := harness.ParseFile(path, b)
	if err != nil {
		return err
	}
	write := func(target string, data []byte) error {
		e := fuzz.SeedEntry(data)
		out := filepath.Join(dir, target, fuzz.EntryName(e))
		if err := os.MkdirAll(filepath.Dir(out), 0o775); err != nil {
			return err
		}
		if err := os.WriteFile(out, e, 0o664); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s -> %s\n", path, out)
		return nil
	}
	if err := write("FuzzScheduleFile", b); err != nil {
		return err
	}
	in, err := fuzz.ScheduleInput(f, 6)
	if err != nil {
		fmt.Fprintf(stdout, "%s: no FuzzSchedule entry: %v\n", path, err)
		return nil
	}
	return write("FuzzSchedule", in)
}

// file converts one seed entry back into a schedule file.
func file(target, path string) ([]byte, error) {
	e, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch target {
	case "FuzzScheduleFile":
		return fuzz.CanonicalFromEntry(e)
	case "FuzzSchedule":
		data, err := fuzz.ParseSeedEntry(e)
		if err != nil {
			return nil, err
		}
		f, _, err := fuzz.FileFromInput(data, fuzz.Options{})
		if err != nil {
			return nil, err
		}
		return f.Format(), nil
	}
	return nil, fmt.Errorf("unknown target %q (want FuzzScheduleFile or FuzzSchedule; use -target)", target)
}
