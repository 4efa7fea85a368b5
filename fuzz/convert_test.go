package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// TestSeedEntryRoundTrip: a schedule file survives the trip to a seed
// entry and back, and the entry is named as the go command names it.
func TestSeedEntryRoundTrip(t *testing.T) {
	files := scheduleFiles(t)
	if len(files) == 0 {
		t.Fatal("no schedule files found under ../corpus or ../harness/testdata/format")
	}
	for p, b := range files {
		e := SeedEntry(b)
		got, err := ParseSeedEntry(e)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: ParseSeedEntry(SeedEntry(x)) = %q, %v", p, got, err)
			continue
		}
		f, err := harness.ParseFile(p, b)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		canon, err := CanonicalFromEntry(e)
		if err != nil || !bytes.Equal(canon, f.Format()) {
			t.Errorf("%s: CanonicalFromEntry = %q, %v; want the canonical file", p, canon, err)
		}
	}
	// The go command's own example: the entry of []byte("") is named by
	// the SHA-256 of its text.
	if got, want := string(SeedEntry(nil)), "go test fuzz v1\n[]byte(\"\")\n"; got != want {
		t.Errorf("SeedEntry(nil) = %q, want %q", got, want)
	}
}

// TestSeedEntriesOnDisk: every entry under testdata/fuzz decodes (a stale
// entry fails loudly), is named by its contents, and the entries of
// FuzzScheduleFile hold schedule files. Schedule files without an entry
// are listed, with the command that adds them.
func TestSeedEntriesOnDisk(t *testing.T) {
	have := map[string]bool{}
	for _, target := range []string{"FuzzScheduleFile", "FuzzSchedule"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		for _, p := range paths {
			e, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if name := EntryName(e); name != filepath.Base(p) {
				t.Errorf("%s: named %s, its contents hash to %s", p, filepath.Base(p), name)
			}
			data, err := ParseSeedEntry(e)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			switch target {
			case "FuzzScheduleFile":
				have[string(data)] = true
				if _, err := CanonicalFromEntry(e); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			case "FuzzSchedule":
				if _, _, err := FileFromInput(data, Options{}); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		}
	}
	var missing []string
	for p, b := range scheduleFiles(t) {
		if !have[string(b)] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		t.Logf("schedule files without a seed entry (f.Add seeds them anyway); to write them:\n  go run ./fuzz/internal/fuzzconv seed %v", missing)
	}
}

// TestEncodeSchedule: the schedule of a run turned into a choice stream
// replays exactly (random schedules of std, with orders and violations),
// and ScheduleInput's input decodes back to the same file.
func TestEncodeSchedule(t *testing.T) {
	for p, b := range scheduleFiles(t) {
		f, err := harness.ParseFile(p, b)
		if err != nil {
			continue
		}
		// A hand-written file may name an order the replay adapts to a
		// shorter buffer; no chooser makes that choice.
		if _, err := EncodeSchedule(f.Scenario, f.Schedule); err != nil {
			t.Logf("%s: not encodable: %v", p, err)
		}
	}
	for _, v := range variants {
		sc := harness.Standard(v)
		sc.Mutant = fgraph.MPushBarrier2 // reorders and violations too
		for seed := uint64(0); seed < 40; seed++ {
			res, err := harness.Run(sc, harness.NewRandom(seed, 0.03), harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f := &harness.File{Scenario: sc, Schedule: res.Schedule}
			in, err := ScheduleInput(f, 3)
			if err != nil {
				t.Fatalf("%v seed %d: %v\n%s", v, seed, err, f.Format())
			}
			back, _, err := FileFromInput(in, Options{Mutant: sc.Mutant})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := harness.FormatSchedule(sc, back.Schedule), harness.FormatSchedule(sc, res.Schedule); got != want {
				t.Fatalf("%v seed %d: the input replays\n%swant\n%s", v, seed, got, want)
			}
		}
	}
}

// TestDecode: every input decodes (short ones too) and Header is the
// inverse of Decode's header.
func TestDecode(t *testing.T) {
	for _, o := range []Options{{}, {Mutants: true}, {Wide: true}} {
		for n := 0; n < 4; n++ {
			in := Decode(make([]byte, n), o)
			if in.Scenario().Validate() != nil {
				t.Fatalf("Decode(%d zero bytes, %+v) gives an invalid scenario", n, o)
			}
		}
		for _, v := range variants {
			for shape := 0; shape < o.shapes(); shape++ {
				for density := 1; density <= 8; density++ {
					m := fgraph.Mutant(0)
					if o.Mutants {
						m = fgraph.MRetOff
					}
					in := Decode(append(Header(v, shape, density, o, m), 7), o)
					if in.Variant != v || in.Shape != shape || in.Density != density || in.Mutant != m || !bytes.Equal(in.Stream, []byte{7}) {
						t.Fatalf("Decode(Header(%v, %d, %d, %+v, %v)) = %+v", v, shape, density, o, m, in)
					}
				}
			}
		}
	}
}
