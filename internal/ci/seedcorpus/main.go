// Command seedcorpus writes the seed corpus zip of a native Go fuzz target
// built for libFuzzer by go-118-fuzz-build (.clusterfuzzlite/build.sh).
//
//	go run ./internal/ci/seedcorpus -sig '[]byte' -o $OUT/NAME_seed_corpus.zip FILE|DIR...
//
// A libFuzzer build of a native target does not see the target's seeds:
// f.Add does nothing there, and testdata/fuzz/FuzzX/ is not read. Nor can
// the seed files be zipped as they are: go-118-fuzz-build hands the
// libFuzzer input to go-fuzz-headers, which decodes the f.Fuzz arguments
// from it one after the other ([]byte and string: a 4-byte big-endian
// length, then the bytes; integers: fixed-width, 16- and 64-bit ones
// followed by a byte whose parity picks the byte order). seedcorpus
// encodes each seed so.
//
// Each FILE (a DIR stands for the files in it) is either a seed entry in
// the go command's corpus format ("go test fuzz v1", then one Go literal
// per argument, like testdata/fuzz/FuzzX/*) or, when -sig is a single
// []byte or string, a raw file that is that argument (a schedule file of
// corpus/). -sig is the f.Fuzz function's argument types after the
// *testing.T, comma-separated; an entry of other types is an error. Seeds
// that cannot be encoded (an empty []byte, or an empty last string:
// go-fuzz-headers cannot produce them) are skipped and counted. Zip
// entries are named by the SHA-1 of their content, as libFuzzer names
// corpus files; duplicates are written once.
//
// Exit codes: 0 success; 1 a file could not be read or parsed; 2 misuse.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("seedcorpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sigFlag := fs.String("sig", "", "the f.Fuzz argument `types` after *testing.T, comma-separated (e.g. '[]byte' or 'uint8,uint64,[]byte')")
	out := fs.String("o", "", "the zip `file` to write")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sig, err := ParseSig(*sigFlag)
	if err != nil || *out == "" || fs.NArg() == 0 {
		if err != nil && *sigFlag != "" {
			fmt.Fprintf(stderr, "seedcorpus: %v\n", err)
		}
		fmt.Fprintln(stderr, "usage: seedcorpus -sig TYPES -o ZIP FILE|DIR...")
		return 2
	}
	var seeds [][]byte
	skipped := 0
	for _, p := range fs.Args() {
		paths, err := files(p)
		if err != nil {
			fmt.Fprintf(stderr, "seedcorpus: %v\n", err)
			return 1
		}
		for _, path := range paths {
			b, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(stderr, "seedcorpus: %v\n", err)
				return 1
			}
			vals, err := Values(b, sig)
			if err != nil {
				fmt.Fprintf(stderr, "seedcorpus: %s: %v\n", path, err)
				return 1
			}
			in, err := Encode(vals)
			if errors.Is(err, ErrUnencodable) {
				skipped++
				continue
			}
			if err != nil {
				fmt.Fprintf(stderr, "seedcorpus: %s: %v\n", path, err)
				return 1
			}
			seeds = append(seeds, in)
		}
	}
	n, err := WriteZip(*out, seeds)
	if err != nil {
		fmt.Fprintf(stderr, "seedcorpus: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "seedcorpus: %s: %d seeds (%d duplicates, %d that go-fuzz-headers cannot produce skipped)\n", *out, n, len(seeds)-n, skipped)
	return 0
}

// files lists p, or the regular files in directory p, sorted.
func files(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, filepath.Join(p, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// kinds are the argument types seedcorpus can encode, as go-118-fuzz-build
// names them (reflect.Type.String; byte is uint8).
var kinds = map[string]string{
	"[]byte": "[]uint8", "[]uint8": "[]uint8", "string": "string", "bool": "bool",
	"byte": "uint8", "uint8": "uint8", "int8": "int8",
	"uint16": "uint16", "int16": "int16", "uint32": "uint32", "int32": "int32",
	"uint64": "uint64", "int64": "int64", "uint": "uint", "int": "int",
}

// ParseSig parses a comma-separated list of argument types.
func ParseSig(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty -sig")
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		k, ok := kinds[strings.TrimSpace(t)]
		if !ok {
			return nil, fmt.Errorf("type %q: go-fuzz-headers encoding not implemented here", strings.TrimSpace(t))
		}
		out = append(out, k)
	}
	return out, nil
}

// Value is one argument of a seed: its kind (a value of kinds) and value
// ([]byte for []uint8 and string, bool, or the integer's bits in uint64).
type Value struct {
	Kind  string
	Bytes []byte
	Bool  bool
	Bits  uint64
}

const header = "go test fuzz v1\n"

// Values reads one seed: a corpus entry of the go command, or (for a
// single []byte or string argument) a raw file.
func Values(b []byte, sig []string) ([]Value, error) {
	if !bytes.HasPrefix(b, []byte(header)) {
		if len(sig) != 1 || sig[0] != "[]uint8" && sig[0] != "string" {
			return nil, fmt.Errorf("not a %q entry, and -sig is not a single []byte or string", strings.TrimSpace(header))
		}
		return []Value{{Kind: sig[0], Bytes: b}}, nil
	}
	var vals []Value
	for i, line := range strings.Split(string(b[len(header):]), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseValue(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+2, err)
		}
		vals = append(vals, v)
	}
	if len(vals) != len(sig) {
		return nil, fmt.Errorf("%d values, -sig has %d types", len(vals), len(sig))
	}
	for i := range vals {
		if vals[i].Kind != sig[i] {
			return nil, fmt.Errorf("value %d is %s, -sig says %s", i+1, vals[i].Kind, sig[i])
		}
	}
	return vals, nil
}

// parseValue parses one line of a corpus entry: T(literal).
func parseValue(line string) (Value, error) {
	x, err := parser.ParseExpr(line)
	if err != nil {
		return Value{}, err
	}
	call, ok := x.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return Value{}, fmt.Errorf("%q is not T(value)", line)
	}
	var typ string
	switch f := call.Fun.(type) {
	case *ast.Ident:
		typ = f.Name
	case *ast.ArrayType:
		if id, ok := f.Elt.(*ast.Ident); ok && f.Len == nil {
			typ = "[]" + id.Name
		}
	}
	kind, ok := kinds[typ]
	if !ok {
		return Value{}, fmt.Errorf("%q: type %q not supported", line, typ)
	}
	v := Value{Kind: kind}
	arg := call.Args[0]
	neg := false
	if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, arg = true, u.X
	}
	switch a := arg.(type) {
	case *ast.Ident:
		if kind != "bool" || a.Name != "true" && a.Name != "false" || neg {
			return Value{}, fmt.Errorf("%q: bad value", line)
		}
		v.Bool = a.Name == "true"
		return v, nil
	case *ast.BasicLit:
		switch {
		case a.Kind == token.STRING && (kind == "[]uint8" || kind == "string") && !neg:
			s, err := strconv.Unquote(a.Value)
			if err != nil {
				return Value{}, fmt.Errorf("%q: %v", line, err)
			}
			v.Bytes = []byte(s)
			return v, nil
		case a.Kind == token.INT && kind != "[]uint8" && kind != "string" && kind != "bool":
			u, err := strconv.ParseUint(a.Value, 0, 64)
			if err != nil {
				return Value{}, fmt.Errorf("%q: %v", line, err)
			}
			if neg {
				u = -u
			}
			v.Bits = u
			return v, nil
		case a.Kind == token.CHAR && kind != "[]uint8" && kind != "string" && kind != "bool" && !neg:
			r, _, _, err := strconv.UnquoteChar(a.Value[1:len(a.Value)-1], '\'')
			if err != nil {
				return Value{}, fmt.Errorf("%q: %v", line, err)
			}
			v.Bits = uint64(r)
			return v, nil
		}
	}
	return Value{}, fmt.Errorf("%q: bad value for %s", line, typ)
}

// ErrUnencodable marks a seed go-fuzz-headers cannot produce.
var ErrUnencodable = errors.New("go-fuzz-headers cannot produce this seed")

// Encode lays the values out as go-fuzz-headers' ConsumeFuzzer reads them
// (the version go-118-fuzz-build's testing.F.Fuzz uses): GetBytes and
// GetString read a big-endian uint32 length, then that many bytes
// (GetBytes takes a length of 0 as 30, so an empty []byte cannot be made);
// GetByte one byte; GetUint32 four bytes, big-endian; GetUint16 and
// GetUint64 two or eight bytes and then a byte that, when even, makes them
// little-endian; GetBool one byte, true when even.
func Encode(vals []Value) ([]byte, error) {
	var b []byte
	for i, v := range vals {
		last := i == len(vals)-1
		switch v.Kind {
		case "[]uint8", "string":
			if len(v.Bytes) == 0 && (v.Kind == "[]uint8" || last) {
				return nil, ErrUnencodable
			}
			b = binary.BigEndian.AppendUint32(b, uint32(len(v.Bytes)))
			b = append(b, v.Bytes...)
		case "bool":
			if v.Bool {
				b = append(b, 0)
			} else {
				b = append(b, 1)
			}
		case "uint8", "int8":
			b = append(b, byte(v.Bits))
		case "uint16", "int16":
			b = binary.LittleEndian.AppendUint16(b, uint16(v.Bits))
			b = append(b, 0)
		case "uint32", "int32":
			b = binary.BigEndian.AppendUint32(b, uint32(v.Bits))
		case "uint64", "int64", "uint", "int":
			b = binary.LittleEndian.AppendUint64(b, v.Bits)
			b = append(b, 0)
		default:
			return nil, fmt.Errorf("kind %s not supported", v.Kind)
		}
	}
	return b, nil
}

// WriteZip writes the seeds, each once, to a zip file named by the SHA-1
// of their content, and returns how many it wrote.
func WriteZip(path string, seeds [][]byte) (int, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	seen := map[string]bool{}
	var names []string
	byName := map[string][]byte{}
	for _, s := range seeds {
		sum := sha1.Sum(s)
		name := hex.EncodeToString(sum[:])
		if seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
		byName[name] = s
	}
	sort.Strings(names)
	for _, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			return 0, err
		}
		if _, err := w.Write(byName[name]); err != nil {
			return 0, err
		}
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return len(names), os.WriteFile(path, buf.Bytes(), 0o644)
}
