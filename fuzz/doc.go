// Package fuzz holds the native Go fuzz targets of fgcheck and the pieces
// they are made of:
//
//   - FuzzSchedule decodes its []byte input into a scenario (variant and
//     shape: std, peer-spin, nested or churn; Decode) and a stream of
//     choices (Chooser, one byte per choice point), runs it, and fails on a
//     violation beyond the known findings after writing the schedule file
//     to testdata/fgcheck/<hash>.txt, named like the fuzz input.
//   - FuzzScheduleFile checks the schedule text format: harness.ParseFile
//     never panics, every error is a *harness.FormatError positioned inside
//     the input, and every accepted file round-trips through File.Format.
//   - FuzzEncoding checks the word encodings of fgraph against their
//     decoders and model.Abstract on word images built from the input.
//
// The seed corpus comes from corpus/*.txt and harness/testdata/format/*.txt
// (added with f.Add when the test runs) and from testdata/fuzz/<Target>/,
// which holds `go test fuzz v1` views of those files written by the
// converter (SeedEntry, EncodeSchedule; go run ./fuzz/internal/fuzzconv).
// The schedule files are the record; seed entries and fuzz inputs are
// views, and fuzzconv turns a seed entry back into a schedule file.
//
// Short campaigns (CI):
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzSchedule$' -fuzztime 30s
//	go test ./fuzz -run '^$' -fuzz '^FuzzScheduleFile$' -fuzztime 30s
//	go test ./fuzz -run '^$' -fuzz '^FuzzEncoding$' -fuzztime 30s
//
// A plain `go test ./fuzz` runs every seed entry as a regression test.
package fuzz
