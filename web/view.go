package web

import (
	"strconv"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/txnindex"
)

// UploadView is the index page's drop zone.
type UploadView struct {
	MaxBytes int64  // 0: uploads are disabled, no drop zone
	Limit    string // MaxBytes for people: "256 MiB"
}

func uploadView(max int64) UploadView {
	if max <= 0 {
		return UploadView{}
	}
	return UploadView{MaxBytes: max, Limit: FormatBytes(max)}
}

// FormatBytes writes n in binary units, as the size flags are usually
// given: 256 MiB, 1.5 GiB, 900 B (one decimal where it is not whole).
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + " " + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}

// Assets are the cache-busted asset URLs.
type Assets struct {
	CSS, DiagJS string
	JS          []string // the timeline's scripts (static.TimelineScripts), in load order
	LiveJS      string   // the live tail (static/js/live.js); idle unless the stream says the source is live
	UploadJS    string   // the index page's drop zone (static/js/upload.js)
	IndexJS     string   // the index page's filter and refresh (static/js/index.js)
	HeadJS      []string // run in <head> on every page: the number and duration formats (static/js/format.js), the light or dark theme and its toggle (theme.js)
	// CSSText, JSText and DiagJSText, when set, are the assets themselves,
	// inlined into the page (the static export) instead of linked; JSText
	// holds the timeline's scripts in the order of JS.
	CSSText, DiagJSText string
	JSText, HeadJSText  []string
}

// chromeKind is how much of the site surrounds a page.
type chromeKind int

const (
	chromeFull   chromeKind = iota // the server's pages: header with a link home
	chromeStatic                   // an export: header without links, no server
	chromeNone                     // the embed route: the timeline alone, sized to its frame
)

func assets() Assets {
	return Assets{CSS: static.Path("css/app.css"), JS: timelineScriptPaths(), DiagJS: static.Path("js/diagnosis.js"), LiveJS: static.Path("js/live.js"), UploadJS: static.Path("js/upload.js"), IndexJS: static.Path("js/index.js"), HeadJS: headScriptPaths()}
}

// TimelineView is the timeline page: the parts drawn in the DOM (lanes,
// markers, summary) and what the script needs to open the stream.
type TimelineView struct {
	// OffsetsUnknown: no .log segment was read (txnindex.Log.NoSegment):
	// the summary says the offsets are unknown instead of printing 0s.
	OffsetsUnknown bool
	// Tiered: older segments are in remote storage (KIP-405); LogStart is
	// then the partition's and LocalStart the first local offset.
	Tiered               bool
	LocalStart           int64
	Source, Title, Topic string
	Path                 string // the full path of a loaded source: the title's tooltip only
	Partition            int32
	Name                 string // topic-partition
	Lanes                []LaneView
	LogStart, LogEnd     int64
	HWM, LSO             int64
	Batches, Txns, Open  int
	Segments             int
	Gaps                 int
	// SegmentsOf, when above 0, is how many segments the partition has
	// while Segments were read (a tail view: TailRead).
	SegmentsOf      int
	tail            bool
	Pinned          string // sentence about the LSO
	Diag            *DiagnosisView
	DiagFirst       bool   // the diagnosis above the timeline (an export of a stuck partition)
	ExportNote      string // what an export leaves out, or ""
	WSPath, APIPath string
	Assets          Assets
	Chrome          chromeKind
	Data            string        // the export's embedded data (HTML-safe JSON), or ""
	Problems        []string      // what the loader could not read (Source.Problems)
	Origin          string        // the server's scheme://host, for the embed snippet (lessonLinks); "" in an export
	Strip           *SegmentStrip // a partition directory's segments (segments.go); nil for other sources
}

// LaneView is one row of the timeline: a transactional producer's lane, the
// non-transactional row (lane 0 and the idempotent producers) or the
// "N more producers" row.
type LaneView struct {
	Index  int    // the lane's number in the stream; the first lane's for a row of several
	TestID string // "lane-7", "lane-none" (non-transactional), "lane-more"
	Label  string // "producer 7", "orders (producer 7)", "non-transactional", "3 more producers"
	Epochs string // present.EpochLabel: "epoch 0", "epochs 0–2", "epochs 0–3000 (transactions v2: …)"
	Note   string // "txn, 3 batches, 1 txn"
	Title  string // the tooltip: the whole producer id
}

// laneViews returns the default rows of lanes (present.LaneRows), labelled
// as timeline-lanes.js labels them.
func laneViews(lanes []present.Lane) []LaneView {
	var out []LaneView
	for _, row := range present.LaneRows(lanes) {
		first := lanes[row.Lanes[0]]
		switch row.Kind {
		case present.RowNonTransactional:
			n := len(row.Lanes)
			what := plural(n, "idempotent producer", "idempotent producers")
			if first.Producer == nil {
				what = plural(n-1, "idempotent producer", "idempotent producers") + " + no producer id"
				if n == 1 {
					what = "no producer id"
				}
			}
			out = append(out, LaneView{Index: first.Index, TestID: "lane-none", Label: "non-transactional", Epochs: what,
				Note: plural(row.Batches, "batch", "batches"), Title: "non-transactional: " + what + " (fold or expand them with the producers box)"})
		case present.RowMore:
			out = append(out, LaneView{Index: first.Index, TestID: "lane-more", Label: plural(len(row.Lanes), "more producer", "more producers"),
				Epochs: "transactional, past the first " + itoa(present.LaneCap), Note: plural(row.Batches, "batch", "batches"),
				Title: "type a producer id or name in the producers box to give it a row"})
		default:
			pr := first.Producer
			id := strconv.FormatInt(int64(pr.ID), 10)
			out = append(out, LaneView{Index: first.Index, TestID: "lane-" + id, Label: first.Label, Epochs: present.EpochLabel(pr),
				Note:  "txn, " + plural(first.Batches, "batch", "batches") + ", " + plural(pr.Txns, "txn", "txns"),
				Title: "producer " + id})
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// thousands writes n as every number on the pages and in the CLI is
// written (txnindex.Count): 1,000,004.
func thousands(n int) string { return txnindex.Count(int64(n)) }

// count is a count in the one number format: thousands separated.
func count(n int64) string { return txnindex.Count(n) }

func timelineView(id, title string, l *txnindex.Log) TimelineView {
	p := strconv.Itoa(int(l.Partition))
	base := PartitionPath(id, l.Topic, l.Partition)
	v := TimelineView{Source: id, Title: title, Topic: l.Topic, Partition: l.Partition, Name: l.Topic + "-" + p,
		LogStart: l.LogStartOffset, LogEnd: l.LogEndOffset, HWM: l.HighWatermark, LSO: l.LastStableOffset,
		Batches: len(l.Batches), Txns: len(l.Txns), Open: len(l.Open), Segments: len(l.Segments), Gaps: len(l.Gaps),
		WSPath: "/ws/v1" + base, APIPath: "/api/v1" + base, Assets: assets()}
	// The rows of the lane rule (present.Lanes, LaneRows), which the
	// stream's lane numbers and timeline-lanes.js follow too.
	v.Lanes = laneViews(present.Lanes(l))
	// The true holder (txnindex.LSOHolder), open or decided with its
	// marker not yet below the high watermark, not the first of Log.Open.
	v.OffsetsUnknown = l.NoSegment
	if t := l.Tiered; t != nil {
		v.Tiered, v.LocalStart, v.LogStart = true, l.LogStartOffset, min(t.LogStartOffset, l.LogStartOffset)
	}
	switch t := l.LSOHolder(); {
	case l.NoSegment:
		v.Pinned = "No .log segment was read: the offsets are unknown (the diagnosis says what the other files show)."
	case t != nil && diagnosis.MarkerRemovedEvidence(l, t) != "":
		// The replay leaves it open; the cleaner shows the broker
		// decided it (the diagnosis lists it as decided_marker_removed).
		v.Pinned = "LSO " + strconv.FormatInt(l.LastStableOffset, 10) + " here is the replay's: it leaves the transaction of producer " +
			strconv.FormatInt(int64(t.ProducerID), 10) + " from offset " + strconv.FormatInt(t.FirstOffset, 10) +
			" open, but the log cleaner removed its marker and the broker had decided it; the diagnosis does not count it."
	case t != nil && t.State == txnindex.TxnOpen:
		v.Pinned = "LSO " + strconv.FormatInt(l.LastStableOffset, 10) + " is pinned by the open transaction of producer " +
			strconv.FormatInt(int64(t.ProducerID), 10) + " from offset " + strconv.FormatInt(t.FirstOffset, 10) +
			"; read_committed consumers stop there."
	case t != nil:
		marker := "ABORT"
		if t.State == txnindex.TxnCommitted {
			marker = "COMMIT"
		}
		v.Pinned = "LSO " + strconv.FormatInt(l.LastStableOffset, 10) + " is held by the transaction of producer " +
			strconv.FormatInt(int64(t.ProducerID), 10) + " from offset " + strconv.FormatInt(t.FirstOffset, 10) +
			", decided (" + marker + " marker at offset " + strconv.FormatInt(t.MarkerOffset, 10) +
			") but not yet below the high watermark " + strconv.FormatInt(l.HighWatermark, 10) + "; read_committed consumers stop there."
	case captureHeld(l) != "":
		v.Pinned = captureHeld(l)
	case l.LastStableOffset < l.HighWatermark:
		v.Pinned = "LSO trails the high watermark."
	default:
		v.Pinned = "LSO equals the high watermark."
	}
	return v
}

// captureHeld is the banner of a capture whose broker said the LSO trails
// the high watermark though the captured batches imply no holder (a
// read_committed fetch never returns the batches at or above the LSO):
// the header's numbers are the batches', the broker's word is the last
// response's (the diagnosis' capture evidence reads the same fields).
func captureHeld(l *txnindex.Log) string {
	for i := len(l.Fetches) - 1; i >= 0; i-- {
		r := &l.Fetches[i].Response
		if r.Err != txnindex.FetchOK || r.LastStableOffset < 0 {
			continue
		}
		if r.LastStableOffset >= r.HighWatermark {
			return ""
		}
		return "The broker reported LSO " + strconv.FormatInt(r.LastStableOffset, 10) + " below its high watermark " +
			strconv.FormatInt(r.HighWatermark, 10) + " in the last captured response: read_committed consumers stop at " +
			strconv.FormatInt(r.LastStableOffset, 10) + "; the captured batches end at offset " + strconv.FormatInt(l.LogEndOffset, 10) + "."
	}
	return ""
}

// Summary is the index line of a built partition.
func Summary(l *txnindex.Log) string {
	return plural(len(l.Batches), "batch", "batches") + " · " + plural(len(l.Txns), "transaction", "transactions") +
		" (" + itoa(len(l.Open)) + " open) · LSO " + i64(l.LastStableOffset) + " · HWM " + i64(l.HighWatermark)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }
func itoa(n int) string  { return strconv.Itoa(n) }

// readTail makes the summary of a tail view say what it counts: the
// segments read of all (the tail's log lists the others with no batches,
// not counted). Its gaps are already the tail's: the offsets below it were
// not read, and its log, a seeded replay, has no gap there
// (logindex.ScanTail, loader.OpenPartitionTail).
func (v *TimelineView) readTail(t *TailRead) {
	v.tail, v.Segments, v.SegmentsOf = true, t.Read, t.Total
}
