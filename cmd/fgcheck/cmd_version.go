package main

// The version command.

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/fgcheck/fgcheck/harness"
)

// version is the tool's version; the schedule format has its own ("fgcheck
// v1" header, harness/format.go).
const version = "0.1.0-dev"

func init() {
	register(&command{name: "version", short: "print the versions of the tool and of the schedule and checkpoint formats", run: runVersion})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr, "fgcheck version [--json]\n\nPrints the tool version, the schedule and checkpoint format versions, and\nthe Go version and platform.")
	asJSON := fs.Bool("json", false, "print the versions as one JSON object")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	mod, pgo := "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			mod = " module " + bi.Main.Version
		}
		pgo = pgoProfile(bi)
	}
	if *asJSON {
		writeJSON(stdout, map[string]string{"tool": version, "module": strings.TrimPrefix(mod, " module "),
			"schedule_format": "v1", "checkpoint_format": harness.CheckpointFormat, "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH,
			"pgo": pgo})
		return exitClean
	}
	built := ""
	if pgo != "" {
		built = ", profile-guided by " + pgo
	}
	fmt.Fprintf(stdout, "fgcheck %s%s (schedule format v1, checkpoint format %s, %s %s/%s%s)\n", version, mod, harness.CheckpointFormat, runtime.Version(), runtime.GOOS, runtime.GOARCH, built)
	return exitClean
}

// pgoProfile is the file name of the CPU profile the binary was built with
// (go build's -pgo setting; cmd/fgcheck/default.pgo is picked up by
// itself, `make pgo` regenerates it), or "" for a build without one.
func pgoProfile(bi *debug.BuildInfo) string {
	for _, s := range bi.Settings {
		if s.Key == "-pgo" && s.Value != "" && s.Value != "off" {
			return filepath.Base(s.Value)
		}
	}
	return ""
}
