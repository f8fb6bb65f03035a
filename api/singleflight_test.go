package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnosisSingleFlight: N concurrent diagnosis requests for one log
// and one second cause one computation, and every caller gets its result.
func TestDiagnosisSingleFlight(t *testing.T) {
	l := large(200_000) // big enough that the callers overlap the computation
	srv, a := server(t, fakeCatalog{"large": l}, nil, nil)
	// A fixed "now" makes the key the same whatever the wall clock does.
	now := time.Now().Add(time.Hour).UnixMilli()
	url := fmt.Sprintf("%s/api/v1/sources/large/partitions/big/0/diagnosis?now=%d", srv.URL, now)
	const n = 32
	var wg sync.WaitGroup
	bodies := make([][]byte, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			bodies[i] = get(t, url, 200)
		}()
	}
	close(start)
	wg.Wait()
	if got := a.diags.Computations(); got != 1 {
		t.Errorf("%d concurrent requests computed %d diagnoses, want 1", n, got)
	}
	for i := range bodies {
		if string(bodies[i]) != string(bodies[0]) {
			t.Fatalf("response %d differs from response 0", i)
		}
	}
	var d DiagnosisJSON
	if err := json.Unmarshal(bodies[0], &d); err != nil || d.Runbook == "" {
		t.Fatalf("diagnosis: %v, runbook %q", err, d.Runbook)
	}
	// The web panel's path, given the same Diagnoser, shares the cache:
	// the same key is a hit.
	o := diagnosis.Options{Now: time.UnixMilli(now), Position: -1}
	if a.diags.Diagnose(l, o) == nil || a.diags.Computations() != 1 {
		t.Errorf("Diagnose after the API: %d computations, want 1", a.diags.Computations())
	}
	// Another second is another key, so ages stay correct to the second.
	o.Now = o.Now.Add(time.Second)
	a.diags.Diagnose(l, o)
	if got := a.diags.Computations(); got != 2 {
		t.Errorf("a second later: %d computations, want 2", got)
	}
}

// TestDecisionsRangeIsSliceOfFull: decisions?from=&to= returns exactly the
// decisions of the full stream that overlap [from, to], for ranges at the
// start, inside, across and past the end of the log, and for options the
// stream cache has not seen yet.
func TestDecisionsRangeIsSliceOfFull(t *testing.T) {
	l := large(5000)
	srv, a := server(t, fakeCatalog{"large": l}, nil, nil)
	base := srv.URL + "/api/v1/sources/large/partitions/big/0/decisions"
	cases := []struct {
		q string
		o Options
	}{
		{"", Options{Position: -1}},
		{"&isolation=read_uncommitted", Options{Isolation: "read_uncommitted", Position: -1}},
		{"&variant=librdkafka&max_bytes=3000", Options{Variant: "librdkafka", MaxBytes: 3000, Position: -1}},
		{"&position=777", Options{Position: 777}},
	}
	for _, c := range cases {
		q := c.q
		o, err := c.o.consume()
		if err != nil {
			t.Fatal(err)
		}
		// The full stream straight from the algorithm, through JSON as the
		// handler sends it.
		var full []DecisionJSON
		for d := range l.Decisions(o) {
			b := appendDecisionJSON(nil, l, &d)
			var dj DecisionJSON
			json.Unmarshal(b, &dj)
			full = append(full, dj)
		}
		if got := ndjson(t, base+"?x=1"+q); !reflect.DeepEqual(got, full) {
			t.Errorf("%s: the unbounded request differs from the full stream (%d vs %d decisions)", q, len(got), len(full))
		}
		if len(full) == 0 {
			t.Fatalf("%s: no decisions", q)
		}
		end := full[len(full)-1].To
		for _, r := range [][2]int64{{0, 0}, {0, 100}, {3, 3}, {1234, 1334}, {end / 2, end/2 + 1}, {end - 5, end + 100}, {end + 1, end + 9}, {-50, 2}} {
			var want []DecisionJSON
			for _, d := range full {
				if d.To >= r[0] && d.From <= r[1] {
					want = append(want, d)
				}
			}
			got := ndjson(t, fmt.Sprintf("%s?from=%d&to=%d%s", base, r[0], r[1], q))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s range %v: got %d decisions, want %d", q, r, len(got), len(want))
			}
		}
	}
	// One encoding per options, however many range requests asked.
	if f := a.cache.fills.Load(); f != 4 {
		t.Errorf("%d encodings for 4 sets of options", f)
	}
}

// TestStreamsShareOneEncoding: many clients streaming one partition at
// once share one encoding, and clients that never read (more of them than
// there are chunk tokens, with a write timeout longer than the readers'
// patience) do not stop the others: a write blocked on its client gives
// its token back (writetokens.go).
func TestStreamsShareOneEncoding(t *testing.T) {
	l := large(200_000) // 6.4 MB per stream: more than loopback buffers absorb
	// A ping waits behind the decisions already queued on the socket: on a
	// loaded machine a reader reaches it later than PongWait after it was
	// sent, and the server then closes the connection (a reset at the
	// reader, after its last decision). The test is about the encoding's
	// sharing, not the keepalive: ping rarely, wait long.
	srv, a := server(t, fakeCatalog{"large": l}, nil, func(a *API) {
		a.WriteWait, a.PongWait, a.PingPeriod = 2*time.Minute, 10*time.Minute, 9*time.Minute
	})
	path := "/ws/v1/sources/large/partitions/big/0"
	for range cap(a.chunkSem) + 2 {
		stuck := dial(t, srv, path) // never reads
		defer stuck.Close()
	}
	want := 0
	for range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		want++
	}
	const clients = 20
	streamAll(t, srv.URL+path, clients, want)
	if f := a.cache.fills.Load(); f != 1 {
		t.Errorf("%d clients on one partition and options: %d encodings, want 1", clients+cap(a.chunkSem)+2, f)
	}
	t.Logf("%d chunks written without a token, %d tokens given back by blocked writes, while %d clients did not read",
		a.chunkUntokened.Load(), a.chunkReleased.Load(), cap(a.chunkSem)+2)
}
