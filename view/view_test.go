package view

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/url"
	"path/filepath"
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
	dg := NewDiagnoser()
	const n = 16
	got := make([]*diagnosis.Diagnosis, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i] = dg.Diagnose(l, o) })
	}
	wg.Wait()
	if c := dg.Computations(); c != 1 {
		t.Errorf("%d concurrent callers computed %d diagnoses, want 1", n, c)
	}
	for i := range got {
		if got[i] != got[0] || got[i].PinnedBy == nil {
			t.Fatalf("caller %d: %p (pinned by %v), caller 0: %p", i, got[i], got[i].PinnedBy, got[0])
		}
	}
	d, runbook := dg.DiagnoseRunbook(l, diagnosis.Options{Now: now.Add(500 * time.Millisecond), Position: -1})
	if d != got[0] || runbook != present.Runbook(d) || dg.Computations() != 1 {
		t.Errorf("same second: another diagnosis (%d computations) or runbook %q", dg.Computations(), runbook)
	}
	if dg.Diagnose(l, diagnosis.Options{Now: now.Add(time.Second), Position: -1}) == got[0] {
		t.Errorf("another second, same diagnosis")
	}
	if dg.Diagnose(l, diagnosis.Options{Now: now, Position: -1, Bootstrap: "x"}) == got[0] {
		t.Errorf("other options, same diagnosis")
	}
	if c := dg.Computations(); c != 3 {
		t.Errorf("%d computations, want 3", c)
	}
}

// TestDiagnoseBounded: however many keys are asked for, the cache keeps at
// most diagCacheSize of them (a new second is a new key).
func TestDiagnoseBounded(t *testing.T) {
	l := stuckLog()
	dg := NewDiagnoser()
	for i := range 3 * diagCacheSize {
		dg.Diagnose(l, diagnosis.Options{Now: time.Unix(int64(10_000+i), 0), Position: -1})
		dg.diags.mu.Lock()
		n := len(dg.diags.m)
		dg.diags.mu.Unlock()
		if n > diagCacheSize {
			t.Fatalf("%d keys cached after %d diagnoses, want at most %d", n, i+1, diagCacheSize)
		}
	}
	if c := dg.Computations(); c != 3*diagCacheSize {
		t.Errorf("%d computations for %d keys", c, 3*diagCacheSize)
	}
}

// TestDiagnosePanicRetries: a diagnosis that panics leaves no entry behind,
// so the next caller computes again rather than being served the empty
// diagnosis its waiters were released with.
func TestDiagnosePanicRetries(t *testing.T) {
	dg := NewDiagnoser()
	o := diagnosis.Options{Position: -1}
	for i := range 2 {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("call %d: diagnosing a nil log did not panic", i)
				}
			}()
			dg.Diagnose(nil, o)
		}()
	}
	if c := dg.Computations(); c != 2 {
		t.Errorf("%d computations, want 2: the failed entry was kept", c)
	}
	dg.diags.mu.Lock()
	n := len(dg.diags.m)
	dg.diags.mu.Unlock()
	if n != 0 {
		t.Errorf("%d entries after two failed diagnoses, want 0", n)
	}
}

// TestNoPackageState: view declares no package-level variables, so that
// every cache it has is a Diagnoser's, held and bounded by its owner (a
// server, a command), never shared across them behind their backs.
func TestNoPackageState(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name != "_" {
						t.Errorf("%s: package-level var %s", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
	}
}
