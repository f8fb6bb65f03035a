package txnindex

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestFetchDenseSearch checks FetchInto's binary search over a dense
// segment against the batch-by-batch scan it replaces: for random logs
// (compacted ones, with skipped offsets, included), every fetch offset and
// byte limits from below one batch to past a segment, both isolations, the
// responses are the same with and without the segments marked dense.
func TestFetchDenseSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 41))
	compared := 0
	for range 300 {
		l := genWorkload(randomSeed(r, 128)).b.build()
		if !anyDense(l) {
			continue
		}
		scan := *l
		scan.segDense = make([]bool, len(l.Segments))
		for off := l.LogStartOffset - 1; off <= l.LogEndOffset; off++ {
			for _, limit := range []int32{1, 60, 100, 161, 300, 1000, 1 << 20} {
				for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
					req := FetchRequest{Offset: off, MaxBytes: limit, Isolation: iso}
					got, want := l.Fetch(req), scan.Fetch(req)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("fetch %+v: dense search %+v, scan %+v", req, got, want)
					}
					compared++
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no log with a dense segment")
	}
}

func anyDense(l *Log) bool {
	for _, d := range l.segDense {
		if d {
			return true
		}
	}
	return false
}

// TestDense: a segment is dense only when each batch starts where the one
// before ends, at known positions, with growing offsets.
func TestDense(t *testing.T) {
	l := newLog().txn(p1, 3).commit(p1).plain(NoProducerID, 2).build()
	if !dense(l.Batches) {
		t.Fatal("a broker-written segment is not dense")
	}
	for name, spoil := range map[string]func(bs []Batch){
		"hole":            func(bs []Batch) { bs[1].SetPosition(bs[1].Position() + 1) },
		"unknown":         func(bs []Batch) { bs[2].SetPosition(-1) },
		"offsets go back": func(bs []Batch) { bs[2].BaseOffset = bs[1].BaseOffset },
	} {
		bs := append([]Batch(nil), l.Batches...)
		spoil(bs)
		if dense(bs) {
			t.Errorf("%s: dense", name)
		}
	}
}
