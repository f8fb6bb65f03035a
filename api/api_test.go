package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// builder lays batches out as a broker does: consecutive offsets and
// positions, 78-byte markers.
type builder struct {
	p    txnindex.Partition
	next int64
	pos  int64
}

func newBuilder(topic string) *builder {
	b := &builder{p: txnindex.Partition{Topic: topic, LogStartOffset: -1, HighWatermark: -1}}
	b.p.Segments = []txnindex.Segment{{Name: "00000000000000000000.log"}}
	return b
}

func (b *builder) add(bt txnindex.Batch) {
	bt.Segment = int32(len(b.p.Segments) - 1)
	bt.SetPosition(b.pos)
	bt.SetMagic(2)
	bt.BaseTimestamp, bt.MaxTimestamp = 1_767_225_600_000, 1_767_225_600_000
	b.pos += int64(bt.Size)
	b.p.Segments[len(b.p.Segments)-1].Size = b.pos
	b.p.Batches = append(b.p.Batches, bt)
	b.next = bt.LastOffset() + 1
}

func (b *builder) data(pid txnindex.ProducerID, n int, txn bool) {
	bt := txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, ProducerID: pid, Records: int32(n),
		Size: int32(61 + 24*n), BaseSequence: -1, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch()
	if txn {
		bt.SetAttributes(txnindex.AttrTransactional)
	}
	b.add(bt)
}

func (b *builder) marker(pid txnindex.ProducerID, ct txnindex.ControlType) {
	b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next, ProducerID: pid, Records: 1, Size: 78,
		Attributes: txnindex.AttrTransactional | txnindex.AttrControl, BaseSequence: -1, Control: ct}.Batch())
}

// small is producer 7 aborting [2,8] around producer 8's commits, plus a
// hanging transaction of producer 9 that pins the LSO at 17.
func small() *txnindex.Log {
	b := newBuilder("t")
	b.data(-1, 2, false)
	b.data(7, 3, true)
	b.data(8, 2, true)
	b.data(7, 2, true)
	b.marker(8, txnindex.ControlCommit)
	b.data(-1, 1, false)
	b.marker(7, txnindex.ControlAbort)
	b.data(8, 4, true)
	b.marker(8, txnindex.ControlCommit)
	b.data(9, 2, true) // never ends
	b.data(-1, 1, false)
	return txnindex.Build(&b.p)
}

// large has n batches of three interleaved transactional producers.
func large(n int) *txnindex.Log {
	b := newBuilder("big")
	b.p.Batches = make([]txnindex.Batch, 0, n+4)
	var in [4]int
	for i := 0; len(b.p.Batches) < n; i++ {
		pid := txnindex.ProducerID(1 + i%3)
		switch {
		case i%7 == 0:
			b.data(-1, 1, false)
		case in[pid] == 2:
			ct := txnindex.ControlCommit
			if i%5 == 0 {
				ct = txnindex.ControlAbort
			}
			b.marker(pid, ct)
			in[pid] = 0
		default:
			b.data(pid, 2, true)
			in[pid]++
		}
	}
	return txnindex.Build(&b.p)
}

type fakeCatalog map[string]*txnindex.Log

func (f fakeCatalog) Sources() []Source {
	var out []Source
	for _, id := range []string{"small", "large", "huge"} {
		if l, ok := f[id]; ok {
			out = append(out, Source{ID: id, Title: id + " test log", Partitions: []PartitionRef{{Topic: l.Topic, Partition: l.Partition}}})
		}
	}
	return out
}

func (f fakeCatalog) Log(id, topic string, p int32) (*txnindex.Log, bool) {
	l, ok := f[id]
	if !ok || l.Topic != topic || l.Partition != p {
		return nil, false
	}
	return l, true
}

// server mounts the handlers as internal/cli/routes.go does (with the
// standard mux, which sets the same path values).
func server(t *testing.T, cat fakeCatalog, rs RecordSource, tune func(*API)) (*httptest.Server, *API) {
	t.Helper()
	a := New(cat, rs, view.NewDiagnoser())
	if tune != nil {
		tune(a)
	}
	mux := http.NewServeMux()
	p := "/sources/{id}/partitions/{topic}/{partition}"
	mux.Handle("GET /api/v1/sources", a.Sources())
	mux.Handle("GET /api/v1/sources/{id}/partitions", a.Partitions())
	mux.Handle("GET /api/v1"+p+"/decisions", a.Decisions())
	mux.Handle("GET /api/v1"+p+"/counts", a.Counts())
	mux.Handle("GET /api/v1"+p+"/batches/{offset}", a.Batch())
	mux.Handle("GET /api/v1"+p+"/diagnosis", a.Diagnosis())
	mux.Handle("GET /ws/v1"+p, a.Stream())
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { a.Shutdown(); srv.Close() })
	return srv, a
}

func get(t *testing.T, url string, want int) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, b, want)
	}
	return b
}

func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(get(t, url, 200), &v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return v
}

func TestSourcesAndPartitions(t *testing.T) {
	srv, _ := server(t, fakeCatalog{"small": small()}, nil, nil)
	s := getJSON[struct {
		Version int
		Sources []SourceJSON
	}](t, srv.URL+"/api/v1/sources")
	if s.Version != 1 || len(s.Sources) != 1 || s.Sources[0].ID != "small" || s.Sources[0].Partitions[0].Topic != "t" {
		t.Errorf("sources: %+v", s)
	}
	p := getJSON[struct{ Partitions []PartitionJSON }](t, srv.URL+"/api/v1/sources/small/partitions")
	if len(p.Partitions) != 1 || p.Partitions[0].Summary == nil {
		t.Fatalf("partitions: %+v", p)
	}
	m := p.Partitions[0].Summary
	if m.LastStableOffset != 17 || m.HighWatermark != 20 || len(m.Lanes) != 4 || m.Lanes[1].ProducerID != 7 || len(m.Open) != 1 {
		t.Errorf("summary: %+v", m)
	}
	get(t, srv.URL+"/api/v1/sources/nope/partitions", 404)
}

func ndjson(t *testing.T, url string) []DecisionJSON {
	t.Helper()
	var out []DecisionJSON
	sc := bufio.NewScanner(strings.NewReader(string(get(t, url, 200))))
	for sc.Scan() {
		var d DecisionJSON
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out = append(out, d)
	}
	return out
}

// decisionOf decodes the decision of a batch's JSON.
func decisionOf(t *testing.T, raw json.RawMessage) DecisionJSON {
	t.Helper()
	var d DecisionJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decision %s: %v", raw, err)
	}
	return d
}

func TestDecisions(t *testing.T) {
	l := small()
	srv, _ := server(t, fakeCatalog{"small": l}, nil, nil)
	base := srv.URL + "/api/v1/sources/small/partitions/t/0/decisions"
	all := ndjson(t, base)
	want := 0
	for range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		want++
	}
	if len(all) != want {
		t.Fatalf("%d decisions, want %d", len(all), want)
	}
	if d := all[1]; d.From != 2 || d.To != 4 || d.Decision != "aborted" || !strings.Contains(d.Reason, "aborted by marker at 11") || d.Txn == nil || d.Txn.State != "aborted" {
		t.Errorf("offsets 2-4: %+v", d)
	}
	if d := all[len(all)-1]; d.Decision != "pending" || d.Cause != "at_or_above_lso" {
		t.Errorf("last: %+v", d)
	}
	w := ndjson(t, base+"?from=3&to=5")
	if len(w) != 2 || w[0].From != 2 || w[1].From != 5 {
		t.Errorf("window 3-5: %+v", w)
	}
	ru := ndjson(t, base+"?isolation=read_uncommitted&from=2&to=2")
	if len(ru) != 1 || ru[0].Decision != "delivered" {
		t.Errorf("read_uncommitted 2: %+v", ru)
	}
	pos := ndjson(t, base+"?position=5&to=4")
	if len(pos) != 2 || pos[1].Decision != "before_position" {
		t.Errorf("position 5: %+v", pos)
	}
	if mb := ndjson(t, base+"?max_bytes=100"); len(mb) != want {
		t.Errorf("max_bytes=100: %d decisions", len(mb))
	}
	get(t, base+"?isolation=maybe", 400)
	get(t, base+"?max_bytes=0", 400)
	get(t, base+"?position=x", 400)
	get(t, srv.URL+"/api/v1/sources/small/partitions/t/1/decisions", 404)
	get(t, srv.URL+"/api/v1/sources/small/partitions/t/x/decisions", 400)
}

func TestBatch(t *testing.T) {
	l := small()
	srv, _ := server(t, fakeCatalog{"small": l}, nil, nil)
	b := getJSON[BatchJSON](t, srv.URL+"/api/v1/sources/small/partitions/t/0/batches/3")
	if b.BaseOffset != 2 || b.LastOffset != 4 || b.ProducerID != 7 || !b.Transactional || b.Txn == nil || b.Txn.MarkerOffset != 11 {
		t.Errorf("batch 2-4: %+v", b)
	}
	if b.AbortedEntry == nil || b.AbortedEntry.File != "00000000000000000000.txnindex" || b.AbortedEntry.LastOffset != 11 || b.TxnIndexFile != "00000000000000000000.txnindex" {
		t.Errorf("aborted entry: %+v, txnindex %q", b.AbortedEntry, b.TxnIndexFile)
	}
	if d := decisionOf(t, b.Decision); d.Decision != "aborted" || b.RecordList == nil || len(b.RecordList) != 0 || b.RecordsNote == "" {
		t.Errorf("decision %+v, records %v note %q", d, b.RecordList, b.RecordsNote)
	}
	m := getJSON[BatchJSON](t, srv.URL+"/api/v1/sources/small/partitions/t/0/batches/11")
	if m.Control == nil || *m.Control != "ABORT" || decisionOf(t, m.Decision).Decision != "control" {
		t.Errorf("marker 11: %+v", m)
	}
	get(t, srv.URL+"/api/v1/sources/small/partitions/t/0/batches/999", 404)
	get(t, srv.URL+"/api/v1/sources/small/partitions/t/0/batches/x", 400)

	// With a RecordSource the records are returned.
	rs := RecordSourceFunc(func(_ context.Context, src string, _ *txnindex.Log, b *txnindex.Batch) ([]Record, error) {
		if b.BaseOffset == 0 {
			return nil, errors.New("bad CRC")
		}
		return []Record{{Offset: b.BaseOffset, Key: []byte("k"), Value: []byte(src)}}, nil
	})
	srv2, _ := server(t, fakeCatalog{"small": l}, rs, nil)
	r := getJSON[BatchJSON](t, srv2.URL+"/api/v1/sources/small/partitions/t/0/batches/2")
	if len(r.RecordList) != 1 || string(r.RecordList[0].Value) != "small" || r.RecordsNote != "" {
		t.Errorf("records: %+v %q", r.RecordList, r.RecordsNote)
	}
	if e := getJSON[BatchJSON](t, srv2.URL+"/api/v1/sources/small/partitions/t/0/batches/0"); !strings.Contains(e.RecordsNote, "bad CRC") {
		t.Errorf("record error note %q", e.RecordsNote)
	}
}

func TestDiagnosis(t *testing.T) {
	srv, _ := server(t, fakeCatalog{"small": small()}, nil, nil)
	d := getJSON[DiagnosisJSON](t, srv.URL+"/api/v1/sources/small/partitions/t/0/diagnosis?bootstrap=kafka:9092&now=log&position=0")
	if d.Diagnosis == nil || d.Version != Version || d.LastStableOffset != 17 || d.HighWatermark != 20 || d.LSOLagOffsets != 3 ||
		len(d.OpenTransactions) != 1 || d.PinnedBy == nil || d.PinnedBy.ProducerID != 9 || d.Lag == nil || d.Lag.Position != 0 {
		t.Fatalf("diagnosis: %+v", d)
	}
	if !strings.Contains(d.PinnedBy.AbortCommand, "--bootstrap-server kafka:9092 abort --topic t --partition 0") || !strings.Contains(d.Runbook, "STUCK") {
		t.Errorf("abort command %q, runbook %q", d.PinnedBy.AbortCommand, d.Runbook)
	}
	// An hour past the newest write with a 1m/10m timeout: hanging only if
	// the partition moved on past the transaction.
	h := getJSON[DiagnosisJSON](t, srv.URL+"/api/v1/sources/small/partitions/t/0/diagnosis?transaction_timeout=1m&max_transaction_timeout=600000&now=2100-01-01T00:00:00Z")
	if h.PinnedBy == nil || h.PinnedBy.State == diagnosis.StateOpen || !strings.Contains(h.PinnedBy.Reason, "(10m)") {
		t.Errorf("with timeouts: %+v", h.PinnedBy)
	}
	for _, q := range []string{"now=yesterday", "position=x", "max_transaction_timeout=-1s", "transaction_timeout=soon"} {
		get(t, srv.URL+"/api/v1/sources/small/partitions/t/0/diagnosis?"+q, 400)
	}
	get(t, srv.URL+"/api/v1/sources/nope/partitions/t/0/diagnosis", 404)
}
