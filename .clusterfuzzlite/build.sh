#!/bin/bash -eu
# ClusterFuzzLite (and OSS-Fuzz) build of fgcheck's native Go fuzz targets
# as libFuzzer binaries. It runs as `compile` inside the image of
# .clusterfuzzlite/Dockerfile (gcr.io/oss-fuzz-base/base-builder-go), with
# the repository at $SRC/fgcheck, and writes to $OUT one binary per target
# and its seed corpus zip. docs/scale-out.md says what has and has not been
# run. It edits the source tree it builds: run it only on a copy (the
# container's), never in a working checkout.
#
# Why not compile_native_go_fuzzer: that script finds the file of a target
# with `grep -r -l FUNC DIR` and requires `grep "func FUNC" | grep testing.F`
# to match exactly one line. Here FuzzSchedule is a prefix of
# FuzzScheduleFile and fuzz/doc.go names every target, so it matches two
# lines (or two files) and the script prints "Could not find the function"
# and builds nothing, without failing. We run what its non-coverage branch
# runs, go-118-fuzz-build and a link with $LIB_FUZZING_ENGINE, ourselves.
#
# Coverage builds (SANITIZER=coverage) are not wired up: OSS-Fuzz's Go
# coverage path depends on its own corpus converters. The ClusterFuzzLite
# workflow (.github/workflows/cflite.yml) runs address builds only.

cd "$SRC/fgcheck"

if [[ "${SANITIZER:-address}" == *coverage* ]]; then
	echo "build.sh: SANITIZER=$SANITIZER: coverage builds of the native Go targets are not supported (docs/scale-out.md)" >&2
	exit 1
fi

# One go-118-fuzz-build version for both the tool and the testing package
# it links the targets against (the tool's generated main calls that
# package's API). This pseudo-version is the one verified here.
GO118FB_VERSION=v0.0.0-20250520111509-a70c2aa677fa
GOBIN="$WORK/gobin" go install "github.com/AdamKorcz/go-118-fuzz-build@$GO118FB_VERSION"
GO118FB="$WORK/gobin/go-118-fuzz-build"

# The targets import go-118-fuzz-build/testing instead of testing once
# rewritten, so the module must require it: the register file the
# go-118-fuzz-build README prescribes, then go get.
printf 'package fuzz\n\nimport _ "github.com/AdamKorcz/go-118-fuzz-build/testing"\n' >fuzz/register_go118fuzzbuild.go
go get "github.com/AdamKorcz/go-118-fuzz-build/testing@$GO118FB_VERSION"

# That testing package has no testing.TB (in this version); fuzz_test.go's
# helpers take one. Give them an interface with the methods both
# testing.F and its stand-in have.
cat >fuzz/ossfuzz_tb.go <<'EOF'
package fuzz

// ossfuzzTB replaces testing.TB in fuzz_test.go for the libFuzzer build
// (.clusterfuzzlite/build.sh).
type ossfuzzTB interface {
	Helper()
	Log(args ...any)
	Logf(format string, args ...any)
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Name() string
	TempDir() string
	Cleanup(func())
}
EOF
sed -i 's/\btesting\.TB\b/ossfuzzTB/g' fuzz/fuzz_test.go

# build_fuzzer PKGDIR FUNC NAME: one libFuzzer binary, $OUT/NAME. The
# target's _test.go file must belong to the package itself (package x):
# go-118-fuzz-build renames it to a non-test file for the build.
build_fuzzer() {
	local dir=$1 func=$2 name=$3
	"$GO118FB" -tags gofuzz -func "$func" -o "$WORK/$name.a" "$dir"
	# CXXFLAGS and LIB_FUZZING_ENGINE are lists of flags: split them.
	# shellcheck disable=SC2086
	$CXX $CXXFLAGS $LIB_FUZZING_ENGINE "$WORK/$name.a" -o "$OUT/$name"
}

# extract_fuzzer PKGDIR FUNC NEWDIR: a target of an external test package
# (package x_test) cannot be renamed in place; copy it, with what it uses,
# into a package of its own first.
extract_fuzzer() {
	local dir=$1 func=$2 newdir=$3
	go run ./internal/ci/fuzzextract -dir "$dir" -func "$func" -pkg "$(basename "$newdir")" -o "$newdir/fuzz.go"
}

# seed_corpus NAME SIG FILE|DIR...: $OUT/NAME_seed_corpus.zip, the seeds
# encoded as go-fuzz-headers decodes the f.Fuzz arguments of types SIG
# (zipping the files as they are would feed the targets garbage: the first
# four bytes would be read as a length).
seed_corpus() {
	local name=$1 sig=$2
	shift 2
	go run ./internal/ci/seedcorpus -sig "$sig" -o "$OUT/${name}_seed_corpus.zip" "$@"
}

# The targets. Every Fuzz function that `go test -list 'Fuzz.*' ./...`
# lists has a build_fuzzer line here (internal/ci's tests check it, and
# that each seed_corpus -sig matches its target's f.Fuzz arguments).

# fuzz/: seeds are the go test fuzz v1 views in fuzz/testdata/fuzz/ and the
# schedule files they view (corpus/, harness/testdata/format/).
build_fuzzer ./fuzz FuzzSchedule fuzz_schedule
seed_corpus fuzz_schedule '[]byte' fuzz/testdata/fuzz/FuzzSchedule

build_fuzzer ./fuzz FuzzScheduleFile fuzz_schedule_file
seed_corpus fuzz_schedule_file '[]byte' corpus harness/testdata/format harness/testdata/format/noncanonical fuzz/testdata/fuzz/FuzzScheduleFile

# FuzzEncoding's seeds are f.Add calls in fuzz_test.go only: no seed zip.
build_fuzzer ./fuzz FuzzEncoding fuzz_encoding

# harness/format_test.go is package harness_test.
extract_fuzzer ./harness FuzzParseFile internal/ossfuzz/harness_parsefile
build_fuzzer ./internal/ossfuzz/harness_parsefile FuzzParseFile harness_parse_file
seed_corpus harness_parse_file '[]byte' harness/testdata/format harness/testdata/format/noncanonical

# harness/checkpoint_fuzz_test.go is package harness and uses no other
# test file; its seeds are real checkpoints it makes with f.Add.
build_fuzzer ./harness FuzzCheckpointFile harness_checkpoint_file
