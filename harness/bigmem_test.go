package harness

import (
	"runtime"
	"testing"
	"unsafe"
)

// Arrays of bigMin bytes or more are mapped apart from the heap on Linux,
// a whole number of huge pages each, zeroed to their capacity, and given
// back by freeOf and release; smaller ones are the heap's.
func TestArena(t *testing.T) {
	var a arena
	small := allocOf[stateKey](&a, 1<<12)
	if len(a.maps) != 0 {
		t.Errorf("a %d-byte array was mapped", len(small)*16)
	}
	big := allocOf[cacheEntry](&a, bigMin/int(unsafe.Sizeof(cacheEntry{}))+1) // just over bigMin
	if runtime.GOOS == "linux" {
		if len(a.maps) != 1 {
			t.Fatalf("%d arrays mapped after a big one, want 1", len(a.maps))
		}
		b := a.maps[unsafe.Pointer(unsafe.SliceData(big))].b
		if len(b) != hugePage {
			t.Errorf("an array of %d bytes took a mapping of %d, want one huge page (%d)", len(big)*48, len(b), hugePage)
		}
		if want := hugePage / int(unsafe.Sizeof(cacheEntry{})); cap(big) != want {
			t.Errorf("capacity %d, want the mapping's %d entries", cap(big), want)
		}
	}
	all := big[:cap(big)]
	for i := range all {
		if all[i] != (cacheEntry{}) {
			t.Fatalf("entry %d not zero: %+v", i, all[i])
		}
		all[i].runs = int64(i)
	}
	if all[len(all)-1].runs != int64(len(all)-1) {
		t.Fatal("the last entry does not keep what was written")
	}
	other := allocOf[uint32](&a, 1<<slabChunkShift)
	if m := a.maps[unsafe.Pointer(unsafe.SliceData(other))]; runtime.GOOS == "linux" && len(m.b) != 1<<slabChunkShift*4 {
		t.Errorf("a slab chunk took a mapping of %d bytes, want its own 2 MiB", len(m.b))
	}
	if n := 1 << entChunkShift * int(unsafe.Sizeof(cacheEntry{})); n%hugePage != 0 {
		t.Errorf("a chunk of entries is %d bytes, not a whole number of huge pages: its mapping would hold a part-used one", n)
	}
	freeOf(&a, big)
	freeOf(&a, small) // the heap's: nothing to give back
	if runtime.GOOS == "linux" && len(a.maps) != 1 {
		t.Errorf("%d arrays mapped after one of two was freed, want 1", len(a.maps))
	}
	other[len(other)-1] = 1
	a.release()
	if len(a.maps) != 0 {
		t.Errorf("%d arrays mapped after release", len(a.maps))
	}
}
