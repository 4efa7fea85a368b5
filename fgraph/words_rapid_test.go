package fgraph

import (
	"testing"

	"pgregory.net/rapid"
)

// TestWordRoundTripRapid: every field of section 1.3 survives Make*/Get*,
// and no field bleeds into another or above its top bit.
func TestWordRoundTripRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		off := rapid.IntRange(0, FgraphFrameOffsetMask).Draw(t, "offset")
		bits := rapid.Uint16().Draw(t, "bitmap")
		idx := rapid.IntRange(0, FgraphDataIndexMask).Draw(t, "dataIndex")
		size := rapid.IntRange(1, 1<<FgraphDataBits).Draw(t, "dataWords")

		r := MakeReserved(off)
		if GetType(r) != FgraphTypeReserved || GetFrameOffset(r) != off || GetBitmapBits(r) != 0 || r>>FgraphTypeShift != 0 {
			t.Fatalf("MakeReserved(%d) = %#x: type %d offset %d", off, r, GetType(r), GetFrameOffset(r))
		}

		b := MakeBitmap(bits, off)
		if GetType(b) != FgraphTypeBitmap || GetFrameOffset(b) != off || GetBitmapBits(b) != bits {
			t.Fatalf("MakeBitmap(%#x, %d) = %#x: type %d offset %d bits %#x", bits, off, b, GetType(b), GetFrameOffset(b), GetBitmapBits(b))
		}
		if b>>(FgraphIndexShift+FgraphIndexBits) != 0 {
			t.Fatalf("MakeBitmap(%#x, %d) = %#x sets bits above 27", bits, off, b)
		}

		d := MakeData(idx, size, off)
		if GetType(d) != FgraphTypeData || GetFrameOffset(d) != off || GetDataIndex(d) != idx || GetDataSize(d) != size {
			t.Fatalf("MakeData(%d, %d, %d) = %#x: type %d offset %d idx %d size %d",
				idx, size, off, d, GetType(d), GetFrameOffset(d), GetDataIndex(d), GetDataSize(d))
		}
		if raw := int(d>>FgraphDataShift) & FgraphDataMask; raw != size-1 {
			t.Fatalf("MakeData size field %d, want size-1 = %d", raw, size-1)
		}
		if d>>(FgraphDataIndexShift+FgraphDataIndexBits) != 0 {
			t.Fatalf("MakeData(%d, %d, %d) = %#x sets bits above 20", idx, size, off, d)
		}

		// Decoding an arbitrary word and re-encoding it gives the low bits back.
		w := Word(rapid.Uint64().Draw(t, "word"))
		switch GetType(w) {
		case FgraphTypeBitmap:
			if MakeBitmap(GetBitmapBits(w), GetFrameOffset(w)) != w&(1<<28-1) {
				t.Fatalf("bitmap word %#x does not re-encode", w)
			}
		case FgraphTypeData:
			if MakeData(GetDataIndex(w), GetDataSize(w), GetFrameOffset(w)) != w&(1<<21-1) {
				t.Fatalf("data word %#x does not re-encode", w)
			}
		}
	})
}
