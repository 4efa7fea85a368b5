package fgraph

import (
	"slices"
	"testing"
	"unsafe"
)

// TestRecordWordsApart: the payloads of callback records are cut from
// shared chunks (recordWords), so two records must never share a word:
// every entry record keeps the words it wrote after hundreds of later
// records (three chunks' worth) were cut, its return record read the
// same words back, and no two payloads overlap in memory. A payload of
// no words is empty, not nil (the state encoding tells them apart).
func TestRecordWordsApart(t *testing.T) {
	m := MustMachine(DefaultConfig(Latest))
	u := m.AddOps(&Ops{Name: "data", DataBytes: 16})
	m.RegisterFtraceGraph(u)
	const calls = 400 // 800 words of payload at entry, 800 at return: chunks of 256
	type kept struct {
		rec  Record
		want []Word // a copy of the payload when it was made
	}
	var all []kept
	for i := 0; i < calls; i++ {
		n := len(m.Log)
		m.Call(1+i%3, false)
		m.Return()
		for _, r := range m.Log[n:] {
			if r.Ops == u.k && r.Data != nil {
				all = append(all, kept{r, slices.Clone(r.Data)})
			}
		}
	}
	if len(all) != 2*calls {
		t.Fatalf("%d records with a payload, want %d (an entry and a return per call)", len(all), 2*calls)
	}
	type span struct{ lo, hi uintptr }
	var spans []span
	for i, k := range all {
		if len(k.rec.Data) != 2 {
			t.Fatalf("record %d: %d payload words, want 2", i, len(k.rec.Data))
		}
		if !slices.Equal(k.rec.Data, k.want) {
			t.Fatalf("record %d: payload %#x now, %#x when made: a later record wrote its words", i, k.rec.Data, k.want)
		}
		if i%2 == 1 && !slices.Equal(k.rec.Data, all[i-1].rec.Data) {
			t.Fatalf("call %d: the return read %#x, the entry wrote %#x", i/2, k.rec.Data, all[i-1].rec.Data)
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(k.rec.Data)))
		spans = append(spans, span{lo, lo + uintptr(cap(k.rec.Data))*unsafe.Sizeof(Word(0))})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(int64(a.lo - b.lo)) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("two payloads overlap: [%#x, %#x) and [%#x, %#x)", spans[i-1].lo, spans[i-1].hi, spans[i].lo, spans[i].hi)
		}
	}
	if w := m.recordWords(0); w == nil || len(w) != 0 {
		t.Fatalf("recordWords(0) = %#v, want an empty, non-nil slice", w)
	}
}
