package api

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestCountsRoute: GET .../counts of random ranges and options equals the
// counts of the engine's own decisions, and the whole-log default covers
// the log start to the log end.
func TestCountsRoute(t *testing.T) {
	l := large(3000)
	srv, _ := server(t, fakeCatalog{"large": l}, nil, nil)
	base := srv.URL + "/api/v1/sources/large/partitions/big/0/counts"
	direct := func(o txnindex.ConsumeOptions, from, to int64) txnindex.Counts {
		c := txnindex.NewCounts(from, to)
		for d := range l.Decisions(o) {
			c.Add(&d)
		}
		return c
	}
	r := rand.New(rand.NewPCG(1, 2))
	span := l.LogEndOffset - l.LogStartOffset
	for range 40 {
		iso := []string{"read_committed", "read_uncommitted"}[r.IntN(2)]
		from := l.LogStartOffset + r.Int64N(span)
		to := from + r.Int64N(l.LogEndOffset-from)
		pos := int64(-1)
		q := fmt.Sprintf("?isolation=%s&from=%d&to=%d", iso, from, to)
		if r.IntN(3) == 0 {
			pos = l.LogStartOffset + r.Int64N(span)
			q += fmt.Sprintf("&position=%d", pos)
		}
		var got CountsJSON
		if err := json.Unmarshal(get(t, base+q, 200), &got); err != nil {
			t.Fatal(err)
		}
		iv, _ := txnindex.ParseIsolation(iso)
		want := direct(txnindex.ConsumeOptions{From: pos, Isolation: iv, MaxBytes: txnindex.DefaultMaxBytes}, from, to)
		if got.Counts != want || got.Records != want.Records() || got.Options.Isolation != iso {
			t.Fatalf("%s:\ngot  %+v (records %d)\nwant %+v", q, got.Counts, got.Records, want)
		}
	}
	var all CountsJSON
	if err := json.Unmarshal(get(t, base, 200), &all); err != nil {
		t.Fatal(err)
	}
	if want := direct(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}, l.LogStartOffset, l.LogEndOffset-1); all.Counts != want || all.Delivered == 0 || all.Aborted == 0 || all.ControlMarkers == 0 {
		t.Errorf("whole log: got %+v, want %+v (with delivered, aborted and markers)", all.Counts, want)
	}
	for _, q := range []string{"?from=9&to=3", "?from=x", "?isolation=bogus"} {
		get(t, base+q, 400)
	}
}
