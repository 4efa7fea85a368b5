package ext_test

import (
	"os"
	str "strings"
	"testing"

	"example.com/ext"
)

const limit = 3

var seeds = []string{"a", "bc"}

type checker struct{ n int }

func (c *checker) check(t *testing.T, s string) {
	if len(ext.Twice(s)) != 2*len(s) || c.n > limit {
		t.Fatalf("bad %q", str.ToUpper(s))
	}
}

func newChecker() *checker { return &checker{} }

// FuzzTwice is the target.
func FuzzTwice(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		newChecker().check(t, s)
	})
}

func init() { _ = os.Getenv("X") }

func unused(t *testing.T) { _ = os.Args }

func TestTwice(t *testing.T) { unused(t) }
