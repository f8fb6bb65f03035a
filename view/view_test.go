package view

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

func TestParseDiagnoseQuery(t *testing.T) {
	wall := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		q    string
		want diagnosis.Options
		err  string
	}{
		{q: "", want: diagnosis.Options{Now: wall, Position: -1}},
		{q: "now=log&position=-7", want: diagnosis.Options{Position: -1}},
		{q: "now=2024-01-02T03:04:05Z&position=42&bootstrap=k:9092", want: diagnosis.Options{
			Now: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Position: 42, Bootstrap: "k:9092"}},
		{q: "now=1700000000123&transaction_timeout=15m&max_transaction_timeout=900000", want: diagnosis.Options{
			Now: time.UnixMilli(1700000000123), Position: -1, TxnTimeout: 15 * time.Minute, MaxTxnTimeout: 15 * time.Minute}},
		{q: "now=yesterday", err: `now "yesterday": want RFC 3339, Unix milliseconds or "log"`},
		{q: "position=x", err: `position "x" is not a number`},
		{q: "transaction_timeout=-5", err: `transaction_timeout "-5": want a positive duration (15m) or milliseconds`},
		{q: "max_transaction_timeout=0s", err: `max_transaction_timeout "0s": want a positive duration`},
		{q: "bootstrap=" + strings.Repeat("b", maxBootstrap+1), err: "bootstrap is too long"},
	} {
		q, err := url.ParseQuery(c.q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseDiagnoseQuery(q, wall)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%.40s: error %v, want %q", c.q, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.q, err)
		case !got.Now.Equal(c.want.Now) || got.Position != c.want.Position || got.Bootstrap != c.want.Bootstrap ||
			got.TxnTimeout != c.want.TxnTimeout || got.MaxTxnTimeout != c.want.MaxTxnTimeout:
			t.Errorf("%s: got %+v, want %+v", c.q, got, c.want)
		}
	}
}

// stuckLog: producer 9's transaction at 2-3 stays open past offset 5.
func stuckLog() *txnindex.Log {
	p := &txnindex.Partition{Topic: "s", LogStartOffset: -1, HighWatermark: -1}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16, ts int64) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2, Attributes: attrs,
			Records: int32(last - base + 1), Size: 100, BaseSequence: -1, CoordinatorEpoch: -1, BaseTimestamp: ts, MaxTimestamp: ts}.Batch())
	}
	add(0, 1, -1, 0, 1000)
	add(2, 3, 9, txnindex.AttrTransactional, 2000)
	add(4, 5, -1, 0, 2000+20*60*1000)
	return txnindex.Build(p)
}

// TestDiagnoseSingleFlight: concurrent callers with one key share one
// computation and one result; the same second is the same key, another
// second or other options are not; the runbook comes with it.
func TestDiagnoseSingleFlight(t *testing.T) {
	l := stuckLog()
	now := time.UnixMilli(10_000_400)
	o := diagnosis.Options{Now: now, Position: -1}
	before := DiagnoseComputations()
	const n = 16
	got := make([]*diagnosis.Diagnosis, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i] = Diagnose(l, o) })
	}
	wg.Wait()
	if c := DiagnoseComputations() - before; c != 1 {
		t.Errorf("%d concurrent callers computed %d diagnoses, want 1", n, c)
	}
	for i := range got {
		if got[i] != got[0] || got[i].PinnedBy == nil {
			t.Fatalf("caller %d: %p (pinned by %v), caller 0: %p", i, got[i], got[i].PinnedBy, got[0])
		}
	}
	d, runbook := DiagnoseRunbook(l, diagnosis.Options{Now: now.Add(500 * time.Millisecond), Position: -1})
	if d != got[0] || runbook != present.Runbook(d) || DiagnoseComputations()-before != 1 {
		t.Errorf("same second: another diagnosis (%d computations) or runbook %q", DiagnoseComputations()-before, runbook)
	}
	if Diagnose(l, diagnosis.Options{Now: now.Add(time.Second), Position: -1}) == got[0] {
		t.Errorf("another second, same diagnosis")
	}
	if Diagnose(l, diagnosis.Options{Now: now, Position: -1, Bootstrap: "x"}) == got[0] {
		t.Errorf("other options, same diagnosis")
	}
	if c := DiagnoseComputations() - before; c != 3 {
		t.Errorf("%d computations, want 3", c)
	}
}
