// Package ci is the Go side of fgcheck's CI and continuous fuzzing
// (docs/scale-out.md): the merge of a sharded exploration's summaries and
// its checks against the pinned std totals (Check; the command is
// ./internal/ci/shardsum), and readers of the files the CI is made of (the
// GitHub workflows, .clusterfuzzlite/build.sh, the std pins and the fuzz
// targets of the module) that this package's tests use to check that those
// files agree with each other and with fgcheck:
//
//   - the explore matrix of .github/workflows/ci.yml covers shards 0..n-1
//     of every pinned variant with the n its commands and shardsum use, and
//     writes the summary file names shardsum reads;
//   - every fgcheck command line in a workflow names a subcommand and flags
//     that exist (`fgcheck help`, `fgcheck CMD -h` of the built binary), and
//     the explore lines run (with --max-runs 1) and print summaries that
//     Load reads;
//   - every Fuzz function of the module is built by build.sh (with a seed
//     corpus whose -sig matches its f.Fuzz arguments) and fuzzed by the
//     nightly job, so that adding a target without wiring it fails;
//   - build.sh passes bash -n; the workflows use only read permissions and
//     actions pinned to a major version.
//
// The other commands of the CI live next to it: ./internal/ci/seedcorpus
// and ./internal/ci/fuzzextract (both used by build.sh).
package ci
