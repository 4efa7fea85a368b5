package ext

import "testing"

func FuzzInternal(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) { _ = Twice(string(b)) }) }
