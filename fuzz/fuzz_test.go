package fuzz

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"github.com/fgcheck/fgcheck/model"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var (
	mutantFlag = flag.String("fuzz.mutant", os.Getenv("FGCHECK_FUZZ_MUTANT"),
		"FuzzSchedule: apply this catalogue mutant to every input, or \"any\" to let a header byte pick one (measuring the fuzzer; failures are expected). Also FGCHECK_FUZZ_MUTANT.")
	wideFlag = flag.Bool("fuzz.wide", os.Getenv("FGCHECK_WIDE") != "",
		"FuzzSchedule: decode into every shape, including the ones with untriaged counterexamples. Also FGCHECK_WIDE=1.")
	kernelFlag = flag.String("fuzz.kernel", os.Getenv("FGCHECK_FUZZ_KERNEL"),
		"FuzzSchedule: run every input on this kernel tree's compiled kernel/trace/fgraph.c (v6.12's arch glue) instead of the port. Also FGCHECK_FUZZ_KERNEL.")
)

// scheduleFiles are the schedule files the seed corpus is derived from:
// the curated corpus and the harness's format golden files.
func scheduleFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{
		filepath.Join("..", "corpus", "*.txt"),
		filepath.Join("..", "corpus", "*", "*.txt"),
		filepath.Join("..", "harness", "testdata", "format", "*.txt"),
		filepath.Join("..", "harness", "testdata", "format", "noncanonical", "*.in"),
	} {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			out[p] = b
		}
	}
	return out
}

// fuzzOptions are FuzzSchedule's decoding options from the flags.
func fuzzOptions(tb testing.TB) Options {
	o := Options{Wide: *wideFlag}
	switch *mutantFlag {
	case "":
	case "any":
		o.Mutants = true
	default:
		mi, err := fgraph.LookupMutant(*mutantFlag)
		if err != nil {
			tb.Fatalf("-fuzz.mutant: %v", err)
		}
		o.Mutant = mi.Mutant
	}
	if *kernelFlag != "" {
		withKernel(tb, *kernelFlag, &o)
	}
	return o
}

// FuzzSchedule runs a scenario and a schedule decoded from the input and
// fails on any violation beyond the known findings, after writing the
// schedule file next to the fuzz input: testdata/fgcheck/<name>.txt, where
// <name> is the name the go command gives the failing input's file in
// testdata/fuzz/FuzzSchedule/.
func FuzzSchedule(f *testing.F) {
	o := fuzzOptions(f)
	// Every variant and shape with an empty stream, a sparse one and a
	// dense one.
	for shape := 0; shape < o.shapes(); shape++ {
		for _, v := range variants {
			for _, stream := range [][]byte{nil, {0, 0, 0, 0xff, 0, 0, 0, 0, 0xfe, 1}, {0xff, 0xff, 0xc0, 0xff, 0xff, 0xff}} {
				f.Add(append(Header(v, shape, 6, o, 0), stream...))
			}
		}
	}
	// The schedules of the corpus whose scenarios are shapes.
	for _, b := range scheduleFiles(f) {
		file, err := harness.ParseFile("seed", b)
		if err != nil {
			continue
		}
		if in, err := ScheduleInput(file, 6); err == nil {
			f.Add(in)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, res, err := FileFromInput(data, o)
		if err != nil {
			t.Fatalf("misuse: %v", err)
		}
		if !res.Failed() {
			return
		}
		name := EntryName(SeedEntry(data))
		path := filepath.Join("testdata", "fgcheck", name+".txt")
		if err := writeFileAtomic(path, file.Format()); err != nil {
			t.Logf("could not write %s: %v", path, err)
		}
		t.Fatalf("%s\n===== SCHEDULE =====\n%s[fgcheck] written to fuzz/%s\nTo replay: fgcheck replay fuzz/%s\n     or: go test ./fuzz -run 'FuzzSchedule/%s'",
			res.Violations[0], file.Format(), path, path, name)
	})
}

// writeFileAtomic writes through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o775); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fgcheck-tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// FuzzScheduleFile: harness.ParseFile never panics; every error is a
// *harness.FormatError whose position is inside the input; every accepted
// input's scenario validates and its canonical form parses back to a
// deep-equal File, and formatting is idempotent.
func FuzzScheduleFile(f *testing.F) {
	for _, b := range scheduleFiles(f) {
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("fgcheck v1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkScheduleFile(t, data) })
}

func checkScheduleFile(t *testing.T, data []byte) {
	file, err := harness.ParseFile("in", data)
	if err != nil {
		var fe *harness.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) is not a *harness.FormatError", err, err)
		}
		lines := strings.Split(string(data), "\n")
		if fe.Line < 1 || fe.Line > len(lines) {
			t.Fatalf("error %v: line %d outside 1..%d", err, fe.Line, len(lines))
		}
		if n := len(lines[fe.Line-1]); fe.Col < 1 || fe.Col > n+1 {
			t.Fatalf("error %v: column %d outside 1..%d of line %q", err, fe.Col, n+1, lines[fe.Line-1])
		}
		return
	}
	if err := file.Scenario.Validate(); err != nil {
		t.Fatalf("accepted a scenario that fails Validate: %v", err)
	}
	out := file.Format()
	again, err := harness.ParseFile("canonical", out)
	if err != nil {
		t.Fatalf("the canonical form does not parse: %v\n%s", err, out)
	}
	if d := cmp.Diff(file, again, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("Parse(Format(x)) differs from Parse(x) (-x +again):\n%s\ncanonical:\n%s", d, out)
	}
	if out2 := again.Format(); string(out2) != string(out) {
		t.Fatalf("Format is not idempotent:\n%s\nthen\n%s", out, out2)
	}
}

// FuzzEncoding: the word encoders and decoders of fgraph agree, and
// model.Abstract on a word image never panics and either names a
// malformed word inside the image or returns frames the words encode.
//
// The image is built from frame descriptions (so that most inputs are
// well-formed stacks) and then, as mode says, corrupted: one word XORed
// with w, one byte-wide field of one word flipped (a narrow corruption that
// leaves the rest of the word well-formed), curr_ret_stack moved, or raw
// words appended.
func FuzzEncoding(f *testing.F) {
	f.Add(uint8(0), uint64(0x1404), []byte{})
	f.Add(uint8(1), uint64(0x2803), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(uint8(2), uint64(0xffffffffffffffff), []byte("frames frames frames frames frames frames"))
	f.Add(uint8(7), uint64(0x80000000000), []byte{0xff, 0, 0xff, 0, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89})
	f.Fuzz(func(t *testing.T, mode uint8, w uint64, data []byte) {
		checkWord(t, w)
		checkImage(t, mode, w, data)
	})
}

// checkWord checks the encoders against the decoders on w's fields and
// the decoders' ranges on w.
func checkWord(t *testing.T, w uint64) {
	off, typ := fgraph.GetFrameOffset(w), fgraph.GetType(w)
	bits, idx, size := fgraph.GetBitmapBits(w), fgraph.GetDataIndex(w), fgraph.GetDataSize(w)
	if off < 0 || off > fgraph.FgraphFrameOffsetMask || typ < 0 || typ > 3 || idx < 0 || idx > 15 || size < 1 || size > 32 {
		t.Fatalf("%#x decodes out of range: off %d type %d idx %d size %d", w, off, typ, idx, size)
	}
	if r := fgraph.MakeReserved(off); fgraph.GetType(r) != fgraph.FgraphTypeReserved || fgraph.GetFrameOffset(r) != off {
		t.Fatalf("MakeReserved(%d) = %#x decodes as type %d offset %d", off, r, fgraph.GetType(r), fgraph.GetFrameOffset(r))
	}
	if b := fgraph.MakeBitmap(bits, off); fgraph.GetType(b) != fgraph.FgraphTypeBitmap || fgraph.GetFrameOffset(b) != off || fgraph.GetBitmapBits(b) != bits {
		t.Fatalf("MakeBitmap(%#x, %d) = %#x decodes as type %d offset %d bits %#x", bits, off, b, fgraph.GetType(b), fgraph.GetFrameOffset(b), fgraph.GetBitmapBits(b))
	}
	if d := fgraph.MakeData(idx, size, off); fgraph.GetType(d) != fgraph.FgraphTypeData || fgraph.GetFrameOffset(d) != off ||
		fgraph.GetDataIndex(d) != idx || fgraph.GetDataSize(d) != size {
		t.Fatalf("MakeData(%d, %d, %d) = %#x decodes as type %d offset %d idx %d size %d", idx, size, off, d,
			fgraph.GetType(d), fgraph.GetFrameOffset(d), fgraph.GetDataIndex(d), fgraph.GetDataSize(d))
	}
	// A word with no bits beyond its type's fields is its own re-encoding.
	switch typ {
	case fgraph.FgraphTypeReserved:
		if w>>fgraph.FgraphTypeShift == 0 && fgraph.MakeReserved(off) != w {
			t.Fatalf("MakeReserved(GetFrameOffset(%#x)) = %#x", w, fgraph.MakeReserved(off))
		}
	case fgraph.FgraphTypeBitmap:
		if w>>(fgraph.FgraphIndexShift+fgraph.FgraphIndexBits) == 0 && fgraph.MakeBitmap(bits, off) != w {
			t.Fatalf("MakeBitmap of %#x's fields = %#x", w, fgraph.MakeBitmap(bits, off))
		}
	case fgraph.FgraphTypeData:
		if w>>(fgraph.FgraphDataIndexShift+fgraph.FgraphDataIndexBits) == 0 && fgraph.MakeData(idx, size, off) != w {
			t.Fatalf("MakeData of %#x's fields = %#x", w, fgraph.MakeData(idx, size, off))
		}
	}
}

// reader hands out the input's bytes, then zeros.
type reader struct {
	b []byte
	i int
}

func (r *reader) byte() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *reader) word() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = r.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

func (r *reader) done() bool { return r.i >= len(r.b) }

// checkImage builds a word image from data, corrupts it as mode says and
// checks model.Abstract on it.
func checkImage(t *testing.T, mode uint8, w uint64, data []byte) {
	c := model.Config{F: 3 + int(mode>>3&1), StackWords: 64, GenCounter: mode&0x10 != 0, TaskVars: mode&0x20 != 0}
	r := &reader{b: data}
	var words []uint64
	var want []model.Frame
	// Frames: ret, func, retp, a bitmap and up to two DATA blocks each.
	for !r.done() && len(want) < 6 {
		var fr model.Frame
		start := len(words)
		fr.Ret, fr.Func, fr.Retp = uint64(r.byte())|0xffffffff81000000, uint64(r.byte())<<8|0xffffffff82000000, uint64(len(words))*8|0xffffc90000000000
		fr.Bits = uint16(r.byte())<<8 | uint16(r.byte())
		if fr.Bits == 0 {
			fr.Bits = 1
		}
		body := make([]uint64, c.F)
		body[0], body[1], body[c.F-1] = fr.Ret, fr.Func, fr.Retp
		meta := fgraph.MakeBitmap(fr.Bits, c.F)
		if c.GenCounter {
			fr.Gens = uint32(r.byte()) << 8
			meta |= uint64(fr.Gens) << fgraph.GenShift
		}
		words = append(words, body...)
		words = append(words, meta)
		for nd := int(r.byte() % 3); nd > 0; nd-- {
			size := 1 + int(r.byte()%4)
			d := model.Data{Idx: int(r.byte() % 16)}
			for i := 0; i < size; i++ {
				d.Words = append(d.Words, r.word())
			}
			words = append(words, d.Words...)
			words = append(words, fgraph.MakeData(d.Idx, size, len(words)-start))
			fr.Data = append(fr.Data, d)
		}
		want = append(want, fr)
	}
	curr := len(words)
	words = append(words, make([]uint64, 8)...)
	corrupt := false
	if mode&4 != 0 { // raw words on top
		for i := uint64(0); i < 3; i++ {
			words[curr] = w ^ i
			curr++
		}
		corrupt = true
	}
	if mode&1 != 0 && curr > 0 { // XOR one word with w
		words[int(w>>32)%curr] ^= w
		corrupt = corrupt || w != 0
	}
	if mode&0x40 != 0 && curr > 0 { // flip one byte-wide field of one word
		shift, mask := w&63, (w>>8)&0xff
		words[int(w>>16)%curr] ^= mask << shift
		corrupt = corrupt || mask<<shift != 0
	}
	if mode&2 != 0 { // move curr_ret_stack
		curr += int(int8(w))
		corrupt = true
	}
	c.StackWords = max(c.StackWords, len(words)+c.F+1+model.Slots)
	im := model.Image{HasStack: true, Curr: curr, Depth: len(want) - 1, Words: words}
	task, err := model.Abstract(c, im)
	if err != nil {
		var we *model.WordError
		if !errors.As(err, &we) {
			t.Fatalf("Abstract error %v (%T) is not a *model.WordError", err, err)
		}
		if we.Index != -1 && (we.Index < 0 || we.Index >= curr || we.Index >= len(words)) {
			t.Fatalf("Abstract error %v: word index %d outside the live image [0, %d)", err, we.Index, curr)
		}
		if we.Index >= 0 && we.Word != words[we.Index] {
			t.Fatalf("Abstract error %v names word %d as %#x, the image holds %#x", err, we.Index, we.Word, words[we.Index])
		}
		if !corrupt {
			t.Fatalf("Abstract rejects a well-formed image: %v\nframes %+v", err, want)
		}
		return
	}
	if !corrupt {
		if d := cmp.Diff(want, task.Frames, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("Abstract of a well-formed image (-built +abstracted):\n%s", d)
		}
	}
	if err := encodes(c, task.Frames, words[:max(curr, 0)]); err != nil {
		t.Fatalf("Abstract returned frames the words do not encode: %v\nframes %+v", err, task.Frames)
	}
}

// encodes checks that frames, encoded with the port's encoders, are words.
func encodes(c model.Config, frames []model.Frame, words []uint64) error {
	var enc []uint64
	for _, fr := range frames {
		start := len(enc)
		body := make([]uint64, c.F)
		copy(body, words[start:min(start+c.F, len(words))])
		body[0], body[1], body[c.F-1] = fr.Ret, fr.Func, fr.Retp
		enc = append(enc, body...)
		meta := fgraph.MakeBitmap(fr.Bits, c.F)
		if c.GenCounter {
			meta |= uint64(fr.Gens) << fgraph.GenShift
		}
		enc = append(enc, meta)
		for _, d := range fr.Data {
			enc = append(enc, d.Words...)
			enc = append(enc, fgraph.MakeData(d.Idx, len(d.Words), len(enc)-start))
		}
	}
	if len(enc) != len(words) {
		return fmt.Errorf("frames take %d words, curr_ret_stack is %d", len(enc), len(words))
	}
	for i := range enc {
		if enc[i] != words[i] {
			return fmt.Errorf("word %d is %#x, the frames encode %#x", i, words[i], enc[i])
		}
	}
	return nil
}
