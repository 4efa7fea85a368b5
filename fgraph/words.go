package fgraph

// Bit fields of the non-frame ("meta") words of the shadow stack.
// Source: kernel/trace/fgraph.c (v6.11..v6.18), macros FGRAPH_*; see
// kernel-fgraph.md section 1.3. The kernel header comment has errata (it says
// DATA size in bits 12-17 and index in bits 18-23); the macros, which these
// constants follow, give 12-16 and 17-20.
const (
	FgraphFrameOffsetBits = 10
	FgraphFrameOffsetMask = (1 << FgraphFrameOffsetBits) - 1 // 0x3ff

	FgraphTypeShift = FgraphFrameOffsetBits // 10
	FgraphTypeBits  = 2
	FgraphTypeMask  = (1 << FgraphTypeBits) - 1

	FgraphTypeReserved = 0
	FgraphTypeBitmap   = 1
	FgraphTypeData     = 2

	FgraphIndexShift = FgraphTypeShift + FgraphTypeBits // 12
	FgraphIndexBits  = 16
	FgraphIndexMask  = (1 << FgraphIndexBits) - 1

	FgraphDataShift = FgraphTypeShift + FgraphTypeBits // 12
	FgraphDataBits  = 5
	FgraphDataMask  = (1 << FgraphDataBits) - 1

	FgraphDataIndexShift = FgraphDataShift + FgraphDataBits // 17
	FgraphDataIndexBits  = 4
	FgraphDataIndexMask  = (1 << FgraphDataIndexBits) - 1

	// FgraphArraySize is the number of simultaneous users (fgraph_array).
	FgraphArraySize = FgraphIndexBits // 16

	// LongSize is sizeof(long) on the 64-bit kernels the port follows.
	LongSize = 8

	// FgraphMaxDataSize is the largest reservation in bytes (32 words).
	FgraphMaxDataSize = LongSize * (1 << FgraphDataBits)
)

// Word is one unsigned long of the shadow stack.
type Word = uint64

// GetFrameOffset decodes the offset field of a meta word.
// Source: __get_offset(), kernel/trace/fgraph.c v6.11+.
func GetFrameOffset(w Word) int { return int(w & FgraphFrameOffsetMask) }

// GetType decodes the type field. Source: __get_type().
func GetType(w Word) int { return int((w >> FgraphTypeShift) & FgraphTypeMask) }

// GetBitmapBits decodes the user bitmap of a BITMAP word. Source: __get_bitmap_bits().
func GetBitmapBits(w Word) uint16 { return uint16((w >> FgraphIndexShift) & FgraphIndexMask) }

// GetDataIndex decodes the owner index of a DATA word. Source: __get_data_index().
func GetDataIndex(w Word) int { return int((w >> FgraphDataIndexShift) & FgraphDataIndexMask) }

// GetDataSize decodes the payload size in words (the field holds size-1).
// Source: __get_data_size(): ((val >> FGRAPH_DATA_SHIFT) & FGRAPH_DATA_MASK) + 1.
func GetDataSize(w Word) int { return int((w>>FgraphDataShift)&FgraphDataMask) + 1 }

// MakeReserved encodes a RESERVED word with offset off.
// Source: ftrace_push_return_trace(): (FGRAPH_TYPE_RESERVED << FGRAPH_TYPE_SHIFT) | FGRAPH_FRAME_OFFSET.
func MakeReserved(off int) Word {
	return FgraphTypeReserved<<FgraphTypeShift | Word(off)
}

// MakeBitmap encodes a BITMAP word. Source: make_bitmap(), set_bitmap().
func MakeBitmap(bits uint16, off int) Word {
	return Word(bits)<<FgraphIndexShift | FgraphTypeBitmap<<FgraphTypeShift | Word(off)
}

// MakeData encodes a DATA word for owner idx, size in words, offset off.
// Source: make_data_type_val().
func MakeData(idx, words, off int) Word {
	return Word(idx)<<FgraphDataIndexShift | Word(words-1)<<FgraphDataShift |
		FgraphTypeData<<FgraphTypeShift | Word(off)
}
