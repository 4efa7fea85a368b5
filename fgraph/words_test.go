package fgraph

import "testing"

// TestWordConstants pins the bit layout of kernel-fgraph.md section 1.3 to
// the kernel macros (not to the kernel header comment, which has errata).
func TestWordConstants(t *testing.T) {
	cases := []struct {
		name   string
		got    int
		want   int
		reason string
	}{
		{"FGRAPH_FRAME_OFFSET_BITS", FgraphFrameOffsetBits, 10, "offset field is bits 0-9"},
		{"FGRAPH_FRAME_OFFSET_MASK", FgraphFrameOffsetMask, 0x3ff, "10-bit mask"},
		{"FGRAPH_TYPE_SHIFT", FgraphTypeShift, 10, "type field is bits 10-11"},
		{"FGRAPH_TYPE_MASK", FgraphTypeMask, 3, "2-bit type"},
		{"FGRAPH_TYPE_RESERVED", FgraphTypeReserved, 0, "RESERVED = 0"},
		{"FGRAPH_TYPE_BITMAP", FgraphTypeBitmap, 1, "BITMAP = 1"},
		{"FGRAPH_TYPE_DATA", FgraphTypeData, 2, "DATA = 2 (the header comment's 3 is an erratum)"},
		{"FGRAPH_INDEX_SHIFT", FgraphIndexShift, 12, "bitmap is bits 12-27"},
		{"FGRAPH_INDEX_MASK", FgraphIndexMask, 0xffff, "16-bit user bitmap"},
		{"FGRAPH_DATA_SHIFT", FgraphDataShift, 12, "DATA size-1 is bits 12-16 (comment says 12-17: erratum)"},
		{"FGRAPH_DATA_MASK", FgraphDataMask, 0x1f, "5-bit size-1"},
		{"FGRAPH_DATA_INDEX_SHIFT", FgraphDataIndexShift, 17, "DATA owner index is bits 17-20 (comment says 18-23: erratum)"},
		{"FGRAPH_DATA_INDEX_MASK", FgraphDataIndexMask, 0xf, "4-bit owner index"},
		{"FGRAPH_ARRAY_SIZE", FgraphArraySize, 16, "16 simultaneous users"},
		{"FGRAPH_MAX_DATA_SIZE", FgraphMaxDataSize, 256, "sizeof(long) * 32 on 64-bit"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x (%s)", c.name, c.got, c.want, c.reason)
		}
	}
}

// TestWordEncodingExamples checks the exact words of the worked example of
// section 1.6 and the field extremes.
func TestWordEncodingExamples(t *testing.T) {
	cases := []struct {
		name   string
		got    Word
		want   Word
		reason string
	}{
		{"A bitmap {0,3}", MakeBitmap(0b1001, 3), 0x9403, "section 1.6 index 3: (0b1001<<12)|(1<<10)|3"},
		{"A data idx 3, 2 words, offset 6", MakeData(3, 2, 6), 0x61806, "section 1.6 index 6: (3<<17)|(1<<12)|(2<<10)|6"},
		{"B bitmap {0}", MakeBitmap(1, 3), 0x1403, "section 1.6 index 10: (1<<12)|(1<<10)|3"},
		{"reserved F=3", MakeReserved(3), 3, "push step 3: type RESERVED (0) with offset F"},
		{"reserved F=4", MakeReserved(4), 4, "v6.11 frame has calltime: F = 4"},
		{"bitmap all ones", MakeBitmap(0xffff, 0x3ff), 0xffff7ff, "bits 12-27 all users, type 1, offset 1023"},
		{"data all ones", MakeData(15, 32, 0x3ff), 0x1ffbff, "idx 15 at 17-20, size-1 31 at 12-16, type 2, offset 1023: nothing above bit 20"},
		{"data 1 word idx 0", MakeData(0, 1, 4), 0x804, "size field 0 means one word"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %#x, want %#x (%s)", c.name, c.got, c.want, c.reason)
		}
	}
	// The kernel header comment's DATA example "(3 << 12) | (3 << 10) | F"
	// matches neither macro: it decodes as the unused type 3, never DATA.
	if erratum := Word(3<<12 | 3<<10 | 3); GetType(erratum) == FgraphTypeData || erratum == MakeData(3, 2, 6) {
		t.Errorf("comment erratum %#x decodes as DATA: the port follows the comment, not the macros", erratum)
	}
}

// TestWordDecodeWorkedExample decodes each meta word of section 1.6.
func TestWordDecodeWorkedExample(t *testing.T) {
	cases := []struct {
		w                 Word
		typ, off          int
		bits              uint16
		dataIdx, dataSize int
		reason            string
	}{
		{0x9403, FgraphTypeBitmap, 3, 0b1001, -1, -1, "A's bitmap: users 0 and 3, frame 3 words down"},
		{0x61806, FgraphTypeData, 6, 0, 3, 2, "A's DATA: owner 3, 2 words, frame start 6 words down"},
		{0x1403, FgraphTypeBitmap, 3, 0b1, -1, -1, "B's bitmap: user 0 only"},
		{0x3, FgraphTypeReserved, 3, 0, -1, -1, "RESERVED word during entry"},
	}
	for _, c := range cases {
		if g := GetType(c.w); g != c.typ {
			t.Errorf("%#x: type %d, want %d (%s)", c.w, g, c.typ, c.reason)
		}
		if g := GetFrameOffset(c.w); g != c.off {
			t.Errorf("%#x: offset %d, want %d (%s)", c.w, g, c.off, c.reason)
		}
		if c.typ == FgraphTypeBitmap || c.typ == FgraphTypeReserved {
			if g := GetBitmapBits(c.w); g != c.bits {
				t.Errorf("%#x: bitmap %#b, want %#b (%s)", c.w, g, c.bits, c.reason)
			}
		}
		if c.typ == FgraphTypeData {
			if g := GetDataIndex(c.w); g != c.dataIdx {
				t.Errorf("%#x: data index %d, want %d (%s)", c.w, g, c.dataIdx, c.reason)
			}
			if g := GetDataSize(c.w); g != c.dataSize {
				t.Errorf("%#x: data size %d, want %d (%s)", c.w, g, c.dataSize, c.reason)
			}
		}
	}
}

// TestDataSizeAllSizes walks every payload size 1..32 and every owner
// index exhaustively (the rapid property samples the whole word space).
func TestDataSizeAllSizes(t *testing.T) {
	for size := 1; size <= 32; size++ {
		for idx := 0; idx < FgraphArraySize; idx++ {
			w := MakeData(idx, size, 7)
			if int(w>>FgraphDataShift)&FgraphDataMask != size-1 {
				t.Fatalf("size %d: raw field %d, want size-1 = %d", size, int(w>>FgraphDataShift)&FgraphDataMask, size-1)
			}
			if GetDataSize(w) != size || GetDataIndex(w) != idx || GetType(w) != FgraphTypeData || GetFrameOffset(w) != 7 {
				t.Fatalf("MakeData(%d, %d, 7) = %#x decodes as idx %d size %d type %d off %d",
					idx, size, w, GetDataIndex(w), GetDataSize(w), GetType(w), GetFrameOffset(w))
			}
		}
	}
}

// TestReserveDataWordMatchesMakeData: the DATA word fgraph_reserve_data
// writes is make_data_type_val(idx, words, offset(prev)+words+1).
func TestReserveDataWordMatchesMakeData(t *testing.T) {
	for _, v := range []Variant{Latest, V611} {
		m := MustMachine(DefaultConfig(v))
		u := m.AddOps(&Ops{Name: "u"})
		mustRegister(t, m, u, 0)
		F := m.cfg.FrameWords
		// A RESERVED word on top, as during entry callbacks.
		m.Mem[m.WordAddr(0, F)] = MakeReserved(F)
		m.Mem[m.TaskBase(0)+TaskCurr] = intWord(F + 1)
		off := F
		for i, size := range []int{1, 8, 9, 255, 256, 24} {
			words := (size + 7) / 8
			c := curr(m, 0)
			p := m.fgraphReserveData(i%16, size)
			if p != c {
				t.Fatalf("%v: reserve %d bytes: payload %d, want %d", v, size, p, c)
			}
			off += words + 1
			want := MakeData(i%16, words, off)
			if got := stackWord(m, 0, curr(m, 0)-1); got != want {
				t.Fatalf("%v: reserve %d bytes: DATA word %#x, want %#x", v, size, got, want)
			}
			if curr(m, 0) != c+words+1 {
				t.Fatalf("%v: reserve %d bytes: curr %d, want %d", v, size, curr(m, 0), c+words+1)
			}
		}
	}
}
