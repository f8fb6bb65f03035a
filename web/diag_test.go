package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// stuckLog: producer 9's transaction at 2-3 stays open past offset 5.
func stuckLog() *txnindex.Log { return stuckLogWith() }

// stuckLogWith is stuckLog with more batches after it (base, last,
// producer, transactional), each of one record per offset.
func stuckLogWith(more ...[3]int64) *txnindex.Log {
	p := &txnindex.Partition{Topic: "s", LogStartOffset: -1, HighWatermark: -1}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16, ct txnindex.ControlType, ts int64) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2, Attributes: attrs,
			Control: ct, Records: int32(last - base + 1), Size: 100, BaseSequence: -1, BaseTimestamp: ts, MaxTimestamp: ts}.Batch())
	}
	add(0, 1, -1, 0, txnindex.ControlNone, 1000)
	add(2, 3, 9, txnindex.AttrTransactional, txnindex.ControlNone, 2000)
	add(4, 5, -1, 0, txnindex.ControlNone, 2000+20*60*1000)
	for _, b := range more {
		add(b[0], b[1], txnindex.ProducerID(b[2]), txnindex.AttrTransactional, txnindex.ControlNone, 2000+21*60*1000)
	}
	return txnindex.Build(p)
}

// TestOpenTxnOneOffset: an open transaction of one record is listed at
// its offset, "6", not as the range "6–6" (seen on a broker-shaped
// partition's panel: a producer's last transaction of one batch).
func TestOpenTxnOneOffset(t *testing.T) {
	ui := New(builtCatalog{stuck: stuckLogWith([3]int64{6, 6, 11}), clear: testLog()}, view.NewDiagnoser())
	body := serve(t, ui.Timeline(), "/sources/b/partitions/s/0?now=log", 200)
	if !strings.Contains(body, `data-testid="diag-txn-11-6"`) || !strings.Contains(body, `<td class="num">6</td>`) || strings.Contains(body, "6–6") {
		t.Errorf("the open transaction at offset 6 is not listed as 6:\n%s", body)
	}
	if !strings.Contains(body, `<td class="num">2–3</td>`) {
		t.Errorf("the open transaction 2-3 is not listed as 2–3")
	}
}

// builtCatalog has two sources, one not built yet.
type builtCatalog struct{ stuck, clear *txnindex.Log }

func (c builtCatalog) Sources() []Source {
	return []Source{
		{ID: "a", Title: "clear one", Partitions: []Partition{{Topic: "t", Partition: 0}}},
		{ID: "lazy", Title: "not built", Partitions: []Partition{{Topic: "big", Partition: 0}}},
		{ID: "b", Title: "stuck one", Partitions: []Partition{{Topic: "s", Partition: 0}}},
	}
}

func (c builtCatalog) Log(id, topic string, p int32) (*txnindex.Log, bool) {
	switch id + "/" + topic {
	case "a/t":
		return c.clear, true
	case "b/s":
		return c.stuck, true
	case "lazy/big":
		panic("the index built a lazy partition")
	}
	return nil, false
}

func (c builtCatalog) Built(id, topic string, p int32) (*txnindex.Log, bool) {
	if id == "lazy" {
		return nil, false
	}
	return c.Log(id, topic, p)
}

// TestIndexByLag: the stuck partition is in the held-back ranking, the
// clear one and the one not built yet only in their sources' lists, and
// the index builds nothing.
func TestIndexByLag(t *testing.T) {
	ui := New(builtCatalog{stuck: stuckLog(), clear: testLog()}, view.NewDiagnoser())
	body := serve(t, ui.Index(), "/?now=log", 200)
	held := body[strings.Index(body, `data-testid="lag-sorted"`):strings.Index(body, `data-testid="load-a"`)]
	if !strings.Contains(held, `data-testid="held-row-b-s-0"`) || strings.Contains(held, "-a-t-0") || strings.Contains(held, "lazy-big") {
		t.Errorf("held-back list wrong:\n%s", held)
	}
	for _, want := range []string{`data-testid="partition-row-b-s-0"`, `data-testid="partition-row-a-t-0"`, `data-testid="partition-row-lazy-big-0"`,
		`data-lag="4"`, `data-state="expired"`, "producer 9 (epoch 0) from 2", `data-built="false"`, `data-testid="partition-link-lazy-big-0"`, "20m",
		`data-testid="topic-group-b-s"`} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %s", want)
		}
	}
	serve(t, ui.Index(), "/?now=soon", 400)
}

// TestIndexGroups: loaded partitions are grouped by source and topic in
// natural order (__consumer_offsets-8 before -39), internal topics after
// the others and folded, demos apart; a lazily loaded one shows its scan.
func TestIndexGroups(t *testing.T) {
	d := &LogDirView{Root: "/data", Scanned: 1, Total: 4, Metadata: []string{"__cluster_metadata-0"}}
	var srcs []Source
	for _, p := range []Partition{{Topic: "__consumer_offsets", Partition: 39}, {Topic: "orders10", Partition: 0}, {Topic: "__consumer_offsets", Partition: 8},
		{Topic: "orders2", Partition: 1, Scan: &Scan{State: "loading"}}} {
		srcs = append(srcs, Source{ID: "load1", Title: "/data (log directory)", Partitions: []Partition{p}, Index: d})
	}
	srcs = append(srcs, Source{ID: "demo", Title: "a demo", Demo: true, Partitions: []Partition{{Topic: "demo-x", Partition: 0}}})
	v := indexRows(srcs, func(s Source, p Partition) PartitionRow { return partitionRow(s, p, nil, -1) })
	if len(v.Loads) != 1 || len(v.Demos) != 1 || v.Total != 4 || v.Scanned != 1 || !v.Scanning {
		t.Fatalf("loads %d demos %d progress %d/%d", len(v.Loads), len(v.Demos), v.Scanned, v.Total)
	}
	var got []string
	for _, g := range v.Loads[0].Topics {
		for _, r := range g.Rows {
			got = append(got, r.Label)
		}
		if g.Internal == g.Open {
			t.Errorf("%s: internal %v, open %v", g.Topic, g.Internal, g.Open)
		}
	}
	if want := "orders2-1 orders10-0 __consumer_offsets-8 __consumer_offsets-39"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
	body := serve(t, New(staticCatalog(srcs), view.NewDiagnoser()).Index(), "/", 200)
	for _, want := range []string{`data-testid="scan-progress"`, "1 of 4 partitions scanned", `data-testid="row-loading"`, `data-testid="demo-section"`,
		"__cluster_metadata-0 is KRaft metadata", `data-testid="index-filter"`, `/static/js/index.js?v=`} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %s", want)
		}
	}
}

// staticCatalog serves sources without logs.
type staticCatalog []Source

func (c staticCatalog) Sources() []Source { return c }
func (c staticCatalog) Log(string, string, int32) (*txnindex.Log, bool) {
	return nil, false
}

func TestTimelineDiagnosis(t *testing.T) {
	ui := New(builtCatalog{stuck: stuckLog(), clear: testLog()}, view.NewDiagnoser())
	body := serve(t, ui.Timeline(), "/sources/b/partitions/s/0?now=log&bootstrap=k:9092&position=0", 200)
	for _, want := range []string{
		`data-testid="diagnosis"`, `data-state="stuck"`, `data-pinned-producer="9"`, `data-pinned-first="2"`, `data-pinned-last="3"`,
		`data-testid="copy-abort-command"`, "kafka-transactions.sh --bootstrap-server k:9092 abort --topic s --partition 0 --start-offset 2",
		`data-testid="discard-range-2-3"`, `href="?from=-2&amp;to=8"`, `data-testid="diag-txn-9-2"`, `data-testid="lag-split"`,
		`/static/js/diagnosis.js?v=`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("timeline lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " onclick=") {
		t.Errorf("inline script in the page")
	}
	clear := serve(t, ui.Timeline(), "/sources/a/partitions/t/0", 200)
	if !strings.Contains(clear, `data-testid="diagnosis-clear"`) || strings.Contains(clear, "data-pinned-producer") || strings.Contains(clear, "copy-abort-command") {
		t.Errorf("a clear partition shows a pin")
	}
	serve(t, ui.Timeline(), "/sources/a/partitions/t/0?max_transaction_timeout=x", 400)
}

func TestSortByLag(t *testing.T) {
	rows := []PartitionRow{{Label: "u"}, {Label: "a", Built: true}, {Label: "c", Built: true, LagOffsets: 3, LagMs: 1},
		{Label: "b", Built: true, LagOffsets: 3, LagMs: 9}, {Label: "d", Built: true, LagOffsets: 7}}
	sortByLag(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Label)
	}
	if strings.Join(got, "") != "dbcau" {
		t.Errorf("order %v, want d b c a u", got)
	}
}

func TestDurText(t *testing.T) {
	// 335 days and 17.7 hours: whole hours passed, as txnindex's reasons
	// print them (a rounded 18h beside a reason's 17h contradicted it).
	for ms, want := range map[int64]string{-5: "0s", 0: "0s", 850: "850ms", 1_200_030: "20m", 29_008_509_248: "335d 17h"} {
		if got := durText(ms); got != want {
			t.Errorf("durText(%d) = %q, want %q", ms, got, want)
		}
	}
}

// TestPagesShareTheDiagnoser: the timeline page, its panel and the index
// diagnose through the Diagnoser the UI was given, which the diagnosis API
// is given too: one computation per (log, options, second), however many
// of them ask, and what the pages computed the API serves without
// computing again.
func TestPagesShareTheDiagnoser(t *testing.T) {
	dg := view.NewDiagnoser()
	l := stuckLog()
	ui := New(builtCatalog{stuck: l, clear: testLog()}, dg)
	q := "?now=10000400"
	serve(t, ui.Timeline(), "/sources/b/partitions/s/0"+q, 200)
	serve(t, ui.DiagnosisPanel(), "/sources/b/partitions/s/0"+q, 200)
	serve(t, ui.Timeline(), "/sources/b/partitions/s/0?now=10000900", 200)
	if c := dg.Computations(); c != 1 {
		t.Errorf("the page twice and its panel in one second: %d computations, want 1", c)
	}
	serve(t, ui.Index(), "/"+q, 200)
	c := dg.Computations()
	if c != 2 {
		t.Errorf("the index: %d computations, want 2 (its clear partition's)", c)
	}
	if d := dg.Diagnose(l, diagnosis.Options{Now: time.UnixMilli(10_000_400), Position: -1}); d.PinnedBy == nil || dg.Computations() != c {
		t.Errorf("the API recomputed the pages' diagnosis (%d computations, want %d)", dg.Computations(), c)
	}
}

// TestDiagnosisPanelOfCapture: for a log assembled from a read_committed
// capture, the panel names the unseen pinner at the broker's LSO, says the
// LSO came from the capture, and lists what the broker reported over time.
func TestDiagnosisPanelOfCapture(t *testing.T) {
	p := &txnindex.Partition{Topic: "c", LogStartOffset: -1, HighWatermark: 9}
	p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: 0, LastOffset: 3, ProducerID: -1, Magic: 2, Records: 4, Size: 100,
		BaseSequence: -1, BaseTimestamp: 1000, MaxTimestamp: 1000}.Batch())
	l := txnindex.Build(p)
	for i, lso := range []int64{4, 4, 4} {
		l.Fetches = append(l.Fetches, txnindex.CapturedFetch{Offset: min(int64(i)*4, 4), Time: 1_000 + int64(i)*30*60_000, Isolation: txnindex.ReadCommitted,
			Response: txnindex.FetchResponse{LastStableOffset: lso, HighWatermark: 6 + int64(i), AbortedTransactions: []txnindex.AbortedTransaction{}}})
	}
	v := diagnosisView(present.Diagnose(l, diagnosis.Options{Position: 4}), "k:9092", clockLog)
	var sb strings.Builder
	if err := diagnosisPanel(v).Render(t.Context(), &sb); err != nil {
		t.Fatal(err)
	}
	html := sb.String()
	for _, want := range []string{
		`data-testid="pinned-unseen"`, "a transaction the capture did not see", "<strong>offset 4</strong>",
		`data-testid="diag-lso" data-source="capture"`, "reported by the broker in the capture",
		`data-testid="capture-history" data-isolation="read_committed"`, `data-testid="capture-run-2" data-lso="4"`,
		`data-testid="capture-position" data-passed="false"`, "never got past offset 4",
		"--start-offset 4", `data-state="hanging"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("panel lacks %q", want)
		}
	}
	if strings.Contains(html, "producer -1") {
		t.Errorf("the panel names producer -1")
	}
}

// TestBannerAndPanelNameTheTrueHolder: producer 7's transaction (2-3) is
// committed at offset 5, but the high watermark is 5, so the marker is not
// replicated and the transaction still holds the LSO at 2. Producer 8's
// open transaction (from 4), the first of Log.Open, does not hold it: the
// banner and the panel name producer 7.
func TestBannerAndPanelNameTheTrueHolder(t *testing.T) {
	p := &txnindex.Partition{Topic: "t", LogStartOffset: -1, HighWatermark: 5, HighWatermarkSource: "replication-offset-checkpoint"}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16, ct txnindex.ControlType) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2,
			Attributes: attrs, Control: ct, Records: int32(last - base + 1), Size: 100, BaseSequence: -1, BaseTimestamp: 1000, MaxTimestamp: 1000}.Batch())
	}
	add(0, 1, -1, 0, txnindex.ControlNone)
	add(2, 3, 7, txnindex.AttrTransactional, txnindex.ControlNone)
	add(4, 4, 8, txnindex.AttrTransactional, txnindex.ControlNone)
	add(5, 5, 7, txnindex.AttrTransactional|txnindex.AttrControl, txnindex.ControlCommit)
	add(6, 7, -1, 0, txnindex.ControlNone)
	l := txnindex.Build(p)
	if l.LastStableOffset != 2 || len(l.Open) != 1 || l.Txns[l.Open[0]].ProducerID != 8 {
		t.Fatalf("LSO %d, open %v", l.LastStableOffset, l.Open)
	}
	v := timelineView("demo", "demo", l)
	if !strings.Contains(v.Pinned, "producer 7 from offset 2, decided (COMMIT marker at offset 5) but not yet below the high watermark 5") {
		t.Errorf("banner %q", v.Pinned)
	}
	d := diagnosisView(present.Diagnose(l, diagnosis.Options{Position: -1}), "", clockLog)
	if d.Pinned == nil || d.Pinned.Producer != 7 || d.Pinned.State != string(diagnosis.StateDecidedUnreplicated) ||
		!d.Pinned.Unreplicated || !strings.Contains(d.Pinned.EndsWhen, "the high watermark passes the marker at 5") || d.Pinned.AbortCommand.Text != "" || d.Clear != "" {
		t.Errorf("panel %+v pinned %+v", d, d.Pinned)
	}
}

// TestPanelCompactedMarkerRemoved: on a compacted partition (the cleaner
// has cleaned below 6) producer 9's data at 2-3 survives without a marker.
// The replay leaves it open, but the cleaner never cleans past the LSO, so
// the broker had decided it: the panel is clear, says the topic is
// compacted and lists the transaction as decided_marker_removed, not among
// the open ones.
func TestPanelCompactedMarkerRemoved(t *testing.T) {
	p := &txnindex.Partition{Topic: "t", LogStartOffset: -1, HighWatermark: 10, HighWatermarkSource: "replication-offset-checkpoint",
		CleanerOffset: 6, CleanerOffsetKnown: true}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2,
			Attributes: attrs, Records: int32(last - base + 1), Size: 100, BaseSequence: -1, BaseTimestamp: 1000, MaxTimestamp: 1000}.Batch())
	}
	add(0, 1, -1, 0)
	add(2, 3, 9, txnindex.AttrTransactional)
	add(4, 9, -1, 0)
	l := txnindex.Build(p)
	if l.LastStableOffset != 2 || len(l.Open) != 1 {
		t.Fatalf("replay: LSO %d, open %v", l.LastStableOffset, l.Open)
	}
	if b := timelineView("demo", "demo", l).Pinned; !strings.Contains(b, "leaves the transaction of producer 9 from offset 2 open, but the log cleaner removed its marker") {
		t.Errorf("banner %q", b)
	}
	v := diagnosisView(present.Diagnose(l, diagnosis.Options{Position: -1}), "", clockLog)
	if v.Stuck || v.LSO != 10 || len(v.Txns) != 0 || len(v.MarkerRemoved) != 1 || v.MarkerRemoved[0].State != string(diagnosis.StateMarkerRemoved) ||
		len(v.Compaction) != 1 || !strings.Contains(v.Compaction[0], "cleaned below offset 6") {
		t.Fatalf("panel %+v", v)
	}
	var sb strings.Builder
	if err := diagnosisPanel(v).Render(t.Context(), &sb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-testid="diag-compaction"`, `data-testid="diag-txn-9-2" data-state="decided_marker_removed"`,
		"Compacted topic:", `data-testid="diagnosis-clear"`} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("panel lacks %s:\n%s", want, sb.String())
		}
	}
	if strings.Contains(sb.String(), `data-testid="open-transactions"`) {
		t.Errorf("the transaction is listed as open:\n%s", sb.String())
	}
}

// TestDiagnosisPanelMetadataLog: the KRaft metadata log's panel says what
// it is, never "clear".
func TestDiagnosisPanelMetadataLog(t *testing.T) {
	d := &diagnosis.Diagnosis{Topic: txnindex.ClusterMetadataTopic, HighWatermark: 5, LastStableOffset: 5, Note: txnindex.MetadataLogNote(txnindex.ClusterMetadataTopic),
		OpenTransactions: []diagnosis.OpenTxnReport{}}
	var b strings.Builder
	if err := diagnosisPanel(diagnosisView(d, "", clockServer)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "not a data partition") || !strings.Contains(s, "KRaft cluster metadata log") || strings.Contains(s, `data-testid="diagnosis-clear"`) {
		t.Errorf("panel:\n%s", s)
	}
}

// TestSeededLagNotZero: a pinning transaction seeded from a producer
// snapshot has no first write time (its first batches were not read). Its
// age and the LSO's lag are shown as what is known, a lower bound from
// the snapshot's last write, or "unknown" with the reason when nothing
// bounds them, never as "0ms": on the index row and on the panel.
func TestSeededLagNotZero(t *testing.T) {
	seeded := func(last, lagMs int64) *diagnosis.Diagnosis {
		p := diagnosis.OpenTxnReport{ProducerID: 7, FirstOffset: 0, LastOffset: -1, FirstTimestamp: -1, LastTimestamp: last, Seeded: true,
			PinsLSO: true, State: diagnosis.StateOpen, AgeUnknown: last < 0}
		d := &diagnosis.Diagnosis{Topic: "t0", HighWatermark: 54, LSOLagOffsets: 54, LSOLagMs: lagMs, LSOLagAtLeast: true, Now: 1_767_225_700_000,
			OpenTransactions: []diagnosis.OpenTxnReport{p}}
		d.PinnedBy = &d.OpenTransactions[0]
		d.LSOHeldMs, d.LSOHeldAtLeast = d.HeldAt(d.Now)
		return d
	}
	src, part := Source{ID: "load1"}, Partition{Topic: "t0"}
	for _, tt := range []struct {
		d    *diagnosis.Diagnosis
		want string
	}{
		// Held at least since the last write the snapshot gives, measured
		// on the row's clock (the diagnosis's Now here).
		{seeded(1_767_225_600_000, 5000), "at least " + durText(100_000)},
		{seeded(1_767_225_650_000, 0), "at least " + durText(50_000)},
		{seeded(-1, 0), "unknown"},
	} {
		r := partitionRow(src, part, tt.d, tt.d.Now)
		if r.LagTime != tt.want || r.LagNote == "" {
			t.Errorf("row lag %q (%q), want %q", r.LagTime, r.LagNote, tt.want)
		}
	}

	var b strings.Builder
	if err := diagnosisPanel(diagnosisView(seeded(-1, 0), "", clockServer)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "0ms") || !strings.Contains(s, `data-testid="diag-lag-unknown"`) || !strings.Contains(s, "its last write time is unknown") {
		t.Errorf("panel of a transaction with no known time:\n%s", s)
	}
}

// TestSeededStartWords: a transaction seeded from a producer snapshot
// began before the log start only when its first offset is below it; one
// seeded because only the log's tail was read (a partition page's first
// view) began before the offsets read, which the panel says instead.
func TestSeededStartWords(t *testing.T) {
	for _, tt := range []struct {
		name         string
		before       bool
		want, absent string
	}{
		{"below the log start", true, "begun before the log start", "offsets read"},
		{"read from the tail", false, "begun before the offsets read", "log start"},
	} {
		p := diagnosis.OpenTxnReport{ProducerID: 7, FirstOffset: 8051570, LastOffset: 8051570, LastTimestamp: 1_767_225_600_000, Seeded: true,
			BeganBeforeLogStart: tt.before, PinsLSO: true, State: diagnosis.StateHanging}
		d := &diagnosis.Diagnosis{Topic: "t0", HighWatermark: 10081019, LastStableOffset: 8051570, LSOLagOffsets: 2029449, Now: 1_767_225_700_000,
			OpenTransactions: []diagnosis.OpenTxnReport{p}}
		d.PinnedBy = &d.OpenTransactions[0]
		var b strings.Builder
		if err := diagnosisPanel(diagnosisView(d, "", clockServer)).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); !strings.Contains(s, tt.want) || strings.Contains(s, "begun before the "+tt.absent) {
			t.Errorf("%s: want %q, not %q, in the panel:\n%s", tt.name, tt.want, "begun before the "+tt.absent, s)
		}
	}
}
