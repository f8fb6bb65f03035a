package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// openProducersDir writes a log dir whose partition's producer snapshot
// holds n producers, each with a transaction open from before the log
// start (the snapshot is all that remembers them), and one plain batch
// after it. It returns the log dir and the snapshot's size.
func openProducersDir(t *testing.T, n int) (string, int64) {
	t.Helper()
	const start, now = int64(1_000_000), int64(1_767_225_600_000)
	snap := make([]testfixture.Snap, n)
	for i := range snap {
		snap[i] = testfixture.Snap{PID: int64(1000 + i), Epoch: 0, LastSeq: 0, LastOffset: int64(i), TS: now - int64(i)*1000,
			CoordEpoch: -1, CurrentTxnFirstOffset: int64(i)}
	}
	dir := testfixture.WriteShapeDir(t, "snap", start, start+1, []testfixture.Batch{{Base: start, PID: -1, Ctrl: -1, N: 1, TS: now}}, start, snap)
	st, err := os.Stat(filepath.Join(dir, "snap-0", fmt.Sprintf("%020d.snapshot", start)))
	if err != nil {
		t.Fatal(err)
	}
	return dir, st.Size()
}

// diagnosesJSON is what TestDiagnoseListCaps reads of diagnose's JSON.
type diagnosesJSON struct {
	Partitions []struct {
		Open     []json.RawMessage `json:"open_transactions"`
		Total    int               `json:"open_transactions_total"`
		PinnedBy *struct {
			ProducerID int64 `json:"producer_id"`
		} `json:"pinned_by"`
		AfterRestart *struct {
			Transactions []json.RawMessage `json:"transactions"`
			Total        int               `json:"transactions_total"`
		} `json:"after_restart"`
	} `json:"partitions"`
}

// TestDiagnoseListCaps: a producer snapshot of 100,000 open producers (a
// 4.6 MB file) is diagnosed with the first txnindex.ListCap transactions
// in detail and the rest counted, in JSON and in the runbook, in memory a
// small multiple of the file; --limit lists more, up to
// txnindex.MaxListLimit. (Every transaction was reported in full: 1.2 GB
// of memory and 167 MB of JSON.)
func TestDiagnoseListCaps(t *testing.T) {
	const n = 100_000
	dir, size := openProducersDir(t, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, out, errOut := runArgs(t, "diagnose", "--format", "json", "--now", "2026-01-01T01:00:00Z", dir)
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("snapshot of %d bytes: diagnose allocated %d bytes, printed %d bytes of JSON", size, alloc, len(out))
	if code != exitHanging && code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var ds diagnosesJSON
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds.Partitions) != 1 {
		t.Fatalf("JSON: %v (%d diagnoses)", err, len(ds.Partitions))
	}
	d := ds.Partitions[0]
	if len(d.Open) != txnindex.ListCap || d.Total != n {
		t.Errorf("%d open transactions listed of %d, want %d of %d", len(d.Open), d.Total, txnindex.ListCap, n)
	}
	if d.PinnedBy == nil || d.PinnedBy.ProducerID != 1000 {
		t.Errorf("pinned by %+v, want producer 1000 (the earliest first offset)", d.PinnedBy)
	}
	if r := d.AfterRestart; r == nil || len(r.Transactions) != txnindex.ListCap || r.Total != n {
		t.Errorf("after_restart %+v: want %d transactions listed of %d", r, txnindex.ListCap, n)
	}
	if len(out) > 2<<20 {
		t.Errorf("%d bytes of JSON: more than 2 MiB for %d listed transactions", len(out), txnindex.ListCap)
	}
	if alloc > 40*size {
		t.Errorf("diagnose allocated %d bytes for a snapshot of %d: more than 40 times", alloc, size)
	}

	code, text, _ := runArgs(t, "diagnose", "--now", "2026-01-01T01:00:00Z", dir)
	if want := "… and 99,900 more open transactions"; !strings.Contains(text, want) || code == exitUsage {
		t.Errorf("the runbook does not say %q:\n%s", want, text[max(len(text)-600, 0):])
	}
	if got := strings.Count(text, "open transaction "); got != txnindex.ListCap {
		t.Errorf("the runbook details %d open transactions, want %d", got, txnindex.ListCap)
	}

	_, out, _ = runArgs(t, "diagnose", "--format", "json", "--limit", "1000", dir)
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds.Partitions[0].Open) != 1000 || ds.Partitions[0].Total != n {
		t.Errorf("--limit 1000: %v, %+v", err, ds.Partitions)
	}
	for _, bad := range []string{"0", "-1", "10001"} {
		if code, _, errOut := runArgs(t, "diagnose", "--limit", bad, dir); code != exitUsage || !strings.Contains(errOut, "--limit") {
			t.Errorf("--limit %s: exit %d, %q", bad, code, errOut)
		}
	}
}
