package model

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var cfg3 = Config{F: 3, StackWords: 64, TaskVars: true, Bit0: true}

// words builds an image from (index, value) pairs.
func image(curr int, kv ...uint64) Image {
	w := make([]uint64, 64)
	for i := 0; i+1 < len(kv); i += 2 {
		w[kv[i]] = kv[i+1]
	}
	return Image{HasStack: true, Curr: curr, Depth: -1, Words: w}
}

// The worked example of kernel-fgraph.md section 1.6.
func example() Image {
	return image(11,
		0, 0xa0, 1, 0xa1, 2, 0xa2, 3, 0x9403, 4, 0xd1, 5, 0xd2, 6, 0x61806,
		7, 0xb0, 8, 0xb1, 9, 0xb2, 10, 0x1403)
}

func TestAbstractWorkedExample(t *testing.T) {
	got, err := Abstract(cfg3, example())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) != 2 {
		t.Fatalf("%d frames, want 2", len(got.Frames))
	}
	a, b := got.Frames[0], got.Frames[1]
	if a.Ret != 0xa0 || a.Func != 0xa1 || a.Retp != 0xa2 || a.Bits != 0x9 || len(a.Data) != 1 ||
		a.Data[0].Idx != 3 || len(a.Data[0].Words) != 2 || a.Data[0].Words[0] != 0xd1 || a.Data[0].Words[1] != 0xd2 {
		t.Errorf("frame A = %+v", a)
	}
	if b.Ret != 0xb0 || b.Bits != 0x1 || len(b.Data) != 0 {
		t.Errorf("frame B = %+v", b)
	}
}

func TestAbstractErrors(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		im     Image
		want   string // substring of the error
		index  int    // the word named, -1 for none
	}{
		{"curr-past-limit", "curr_ret_stack past SHADOW_STACK_MAX_OFFSET is no stack", image(60), "outside [0, 44]", -1},
		{"curr-negative", "a negative curr_ret_stack", image(-1), "outside", -1},
		{"top-reserved-quiescent", "a RESERVED top word means an entry never completed", image(4, 3, 3), "RESERVED meta word at a quiescent point", 3},
		{"zero-top", "an all-zero word is RESERVED with offset 0", image(4), "offset 0, want F = 3", 3},
		{"bad-type", "type 3 is unused", image(4, 3, 3<<10|3), "type 3", 3},
		{"bitmap-no-bits", "a BITMAP word with no user bit", image(4, 3, 1<<10|3), "no user bit", 3},
		{"bitmap-bad-offset", "a frame meta word must have offset F", image(5, 4, 0x1404), "offset 4, want F = 3", 4},
		{"data-below-zero", "a DATA offset pointing below word 0", image(6, 3, 0x1403, 5, 2<<10|9), "leads below word 0", 5},
		{"data-inconsistent", "a DATA offset disagreeing with the word below it", image(6, 3, 0x1403, 5, 2<<10|4), "disagrees with word 3", 5},
		{"frame-below-zero", "a frame meta word too low for a frame", image(2, 1, 0x1403), "frame starts below word 0", 1},
		{"bitmap-high-bits", "bits above the index field without the gen-counter fix", image(4, 3, 1<<40|0x1403), "above the index field", 3},
	}
	for _, tc := range tests {
		if tc.reason == "" {
			t.Fatalf("%s: no reason", tc.name)
		}
		t.Run(tc.name, func(t *testing.T) {
			_, err := Abstract(cfg3, tc.im)
			if err == nil {
				t.Fatalf("no error, want %q\nreason: %s", tc.want, tc.reason)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q\nreason: %s", err, tc.want, tc.reason)
			}
			var we *WordError
			if !errors.As(err, &we) || we.Index != tc.index {
				t.Errorf("error names word %v, want %d", we, tc.index)
			}
		})
	}
}

// TestAbstractNeverPanics: any image gives frames or a WordError naming a
// word inside the image.
func TestAbstractNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 64).Draw(t, "n")
		w := make([]uint64, 64)
		for i := 0; i < n; i++ {
			w[i] = rapid.OneOf(rapid.Uint64(), rapid.Uint64Range(0, 1<<21)).Draw(t, "w")
		}
		im := Image{HasStack: true, Curr: rapid.IntRange(-2, 66).Draw(t, "curr"), Words: w}
		task, err := Abstract(cfg3, im)
		if err != nil {
			var we *WordError
			if !errors.As(err, &we) || we.Index < -1 || we.Index >= len(w) {
				t.Fatalf("error %v does not name a word of the image", err)
			}
			return
		}
		if task.Words(cfg3) != im.Curr {
			t.Fatalf("frames use %d words, curr_ret_stack is %d", task.Words(cfg3), im.Curr)
		}
	})
}
