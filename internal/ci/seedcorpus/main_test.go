package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fuzz"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		name   string
		vals   []Value
		want   []byte
		err    error
		reason string
	}{
		{
			name: "bytes", vals: []Value{{Kind: "[]uint8", Bytes: []byte("ab")}},
			want:   []byte{0, 0, 0, 2, 'a', 'b'},
			reason: "GetBytes reads a big-endian uint32 length, then the bytes; as the last argument the length equals what is left, so no modulo cuts it",
		},
		{
			name: "FuzzEncoding's shape", vals: []Value{{Kind: "uint8", Bits: 7}, {Kind: "uint64", Bits: 0x0102030405060708}, {Kind: "[]uint8", Bytes: []byte{9}}},
			want:   []byte{7, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 1, 9},
			reason: "uint8 is one byte; uint64 is eight bytes and a byte whose evenness makes them little-endian; then the []byte",
		},
		{
			name: "uint16 and uint32", vals: []Value{{Kind: "uint16", Bits: 0x0102}, {Kind: "int32", Bits: 0x01020304}},
			want:   []byte{2, 1, 0, 1, 2, 3, 4},
			reason: "GetUint16 has the byte-order byte, GetUint32 does not and is big-endian",
		},
		{
			name: "bools", vals: []Value{{Kind: "bool", Bool: true}, {Kind: "bool", Bool: false}},
			want:   []byte{0, 1},
			reason: "GetBool is true for an even byte",
		},
		{
			name: "empty string not last", vals: []Value{{Kind: "string"}, {Kind: "uint8", Bits: 1}},
			want:   []byte{0, 0, 0, 0, 1},
			reason: "GetString takes a zero length as it is, while bytes follow",
		},
		{
			name: "empty bytes", vals: []Value{{Kind: "[]uint8"}},
			err:    ErrUnencodable,
			reason: "GetBytes turns a zero length into 30, so no input yields an empty []byte",
		},
		{
			name: "empty last string", vals: []Value{{Kind: "uint8"}, {Kind: "string"}},
			err:    ErrUnencodable,
			reason: "GetString fails when no byte is left, and F.Fuzz then returns without calling the target",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.vals)
			if !errors.Is(err, tt.err) || !bytes.Equal(got, tt.want) {
				t.Errorf("Encode = %v, %v; want %v, %v\nreason: %s", got, err, tt.want, tt.err, tt.reason)
			}
		})
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		name, in, sig string
		want          []Value
		err           string
		reason        string
	}{
		{
			name: "raw file", in: "fgcheck v1\nscenario std\n", sig: "[]byte",
			want:   []Value{{Kind: "[]uint8", Bytes: []byte("fgcheck v1\nscenario std\n")}},
			reason: "a schedule file of corpus/ is FuzzScheduleFile's input as it is",
		},
		{
			name: "entry", in: "go test fuzz v1\nuint8(200)\nuint64(0xff)\n[]byte(\"\\x00\\xffz\")\n", sig: "uint8, uint64, []byte",
			want:   []Value{{Kind: "uint8", Bits: 200}, {Kind: "uint64", Bits: 0xff}, {Kind: "[]uint8", Bytes: []byte{0, 0xff, 'z'}}},
			reason: "the go command's corpus format: one Go literal per argument",
		},
		{
			name: "byte, rune and negative literals", in: "go test fuzz v1\nbyte('a')\nint64(-1)\nbool(true)\nstring(`raw`)\n", sig: "byte,int64,bool,string",
			want:   []Value{{Kind: "uint8", Bits: 'a'}, {Kind: "int64", Bits: ^uint64(0)}, {Kind: "bool", Bool: true}, {Kind: "string", Bytes: []byte("raw")}},
			reason: "character, negative, boolean and raw-string literals all occur in corpus entries",
		},
		{
			name: "wrong types", in: "go test fuzz v1\nuint8(1)\n", sig: "[]byte",
			err:    "value 1 is uint8, -sig says []uint8",
			reason: "an entry of another target must not be encoded for this one",
		},
		{
			name: "wrong count", in: "go test fuzz v1\n[]byte(\"a\")\n", sig: "uint8,[]byte",
			err:    "1 values, -sig has 2 types",
			reason: "a missing argument would shift every later one",
		},
		{
			name: "raw file for several arguments", in: "abc", sig: "uint8,[]byte",
			err:    "not a \"go test fuzz v1\" entry",
			reason: "a raw file is one []byte or string argument, nothing else",
		},
		{
			name: "bad literal", in: "go test fuzz v1\nuint8(\"x\")\n", sig: "uint8",
			err:    "bad value for uint8",
			reason: "a string cannot be a uint8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := ParseSig(tt.sig)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Values([]byte(tt.in), sig)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one containing %q\nreason: %s", err, tt.err, tt.reason)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("Values = %+v, %v; want %+v\nreason: %s", got, err, tt.want, tt.reason)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Kind != w.Kind || !bytes.Equal(g.Bytes, w.Bytes) || g.Bool != w.Bool || g.Bits != w.Bits {
					t.Errorf("value %d = %+v, want %+v\nreason: %s", i, g, w, tt.reason)
				}
			}
		})
	}
}

// TestRepoSeeds: every seed entry build.sh zips parses, and encodes to a
// length and the bytes the fuzz package's own parser reads from it.
func TestRepoSeeds(t *testing.T) {
	sig, _ := ParseSig("[]byte")
	for _, dir := range []string{"FuzzSchedule", "FuzzScheduleFile"} {
		paths, err := files(filepath.Join("..", "..", "..", "fuzz", "testdata", "fuzz", dir))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: %d seed entries, %v", dir, len(paths), err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			vals, err := Values(b, sig)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			in, err := Encode(vals)
			want, werr := fuzz.ParseSeedEntry(b)
			if err != nil || werr != nil || binary.BigEndian.Uint32(in) != uint32(len(want)) || !bytes.Equal(in[4:], want) {
				t.Errorf("%s: encoded %q (%v), the fuzz package reads %q (%v)", p, in, err, want, werr)
			}
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a":   "go test fuzz v1\n[]byte(\"one\")\n",
		"b":   "two",
		"dup": "go test fuzz v1\n[]byte(\"two\")\n", // the same input as b
		"nil": "go test fuzz v1\n[]byte(\"\")\n",    // cannot be encoded
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zipPath := filepath.Join(t.TempDir(), "x_seed_corpus.zip")
	var out, errb bytes.Buffer
	if rc := run([]string{"-sig", "[]byte", "-o", zipPath, dir}, &out, &errb); rc != 0 {
		t.Fatalf("exit %d\n%s%s", rc, &out, &errb)
	}
	if want := "2 seeds (1 duplicates, 1 that go-fuzz-headers cannot produce skipped)"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout %q lacks %q", &out, want)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got []string
	for _, f := range zr.File {
		rc, _ := f.Open()
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		got = append(got, b.String()[4:])
	}
	if strings.Join(got, ",") != "two,one" && strings.Join(got, ",") != "one,two" {
		t.Errorf("zip holds %q, want one and two", got)
	}
	if rc := run([]string{"-sig", "float64", "-o", zipPath, dir}, &out, &errb); rc != 2 {
		t.Errorf("-sig float64: exit %d, want 2 (not implemented)", rc)
	}
}
