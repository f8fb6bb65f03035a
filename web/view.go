package web

import (
	"strconv"

	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/txnindex"
)

// IndexView is the index page.
type IndexView struct {
	Sources []SourceView
	Rows    []PartitionRow // every partition, by LSO lag
	Upload  UploadView
	Assets  Assets
}

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

// SourceView is one source on the index page.
type SourceView struct {
	ID, Title  string
	Partitions []PartitionLink
}

// PartitionLink is a link to a timeline.
type PartitionLink struct {
	Label   string
	Href    string
	TestID  string
	Summary string
}

// Assets are the cache-busted asset URLs.
type Assets struct {
	CSS, DiagJS string
	JS          []string // the timeline's scripts (static.TimelineScripts), in load order
	LiveJS      string   // the live tail (static/js/live.js); idle unless the stream says the source is live
	UploadJS    string   // the index page's drop zone (static/js/upload.js)
	// CSSText, JSText and DiagJSText, when set, are the assets themselves,
	// inlined into the page (the static export) instead of linked; JSText
	// holds the timeline's scripts in the order of JS.
	CSSText, DiagJSText string
	JSText              []string
}

// chromeKind is how much of the site surrounds a page.
type chromeKind int

const (
	chromeFull   chromeKind = iota // the server's pages: header with a link home
	chromeStatic                   // an export: header without links, no server
	chromeNone                     // the embed route: the timeline alone, sized to its frame
)

func assets() Assets {
	return Assets{CSS: static.Path("css/app.css"), JS: timelineScriptPaths(), DiagJS: static.Path("js/diagnosis.js"), LiveJS: static.Path("js/live.js"), UploadJS: static.Path("js/upload.js")}
}

func indexView(srcs []Source) IndexView {
	v := IndexView{Assets: assets()}
	for _, s := range srcs {
		sv := SourceView{ID: s.ID, Title: s.Title}
		for _, p := range s.Partitions {
			n := strconv.Itoa(int(p.Partition))
			sv.Partitions = append(sv.Partitions, PartitionLink{
				Label:   p.Topic + "-" + n,
				Href:    PartitionPath(s.ID, p.Topic, p.Partition),
				TestID:  "partition-link-" + s.ID + "-" + p.Topic + "-" + n,
				Summary: p.Summary,
			})
		}
		v.Sources = append(v.Sources, sv)
	}
	return v
}

// TimelineView is the timeline page: the parts drawn in the DOM (lanes,
// markers, summary) and what the script needs to open the stream.
type TimelineView struct {
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
	Pinned               string // sentence about the LSO
	Diag                 *DiagnosisView
	WSPath, APIPath      string
	Assets               Assets
	Chrome               chromeKind
	Data                 string   // the export's embedded data (HTML-safe JSON), or ""
	Problems             []string // what the loader could not read (Source.Problems)
}

// LaneView is one producer lane.
type LaneView struct {
	Index  int
	TestID string
	Label  string // "producer 7"
	Epochs string // txnindex.Producer.EpochLabel: "epoch 0", "epochs 0–2", "epochs 0–3,000 (transactions v2: …)"
	Note   string // "transactional, 3 batches"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// thousands writes n with thin-space thousands separators: 1 000 004.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 10000 {
		return s
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, "\u202f"...)
		}
		out = append(out, s[i])
	}
	return string(out)
}

func timelineView(id, title string, l *txnindex.Log) TimelineView {
	p := strconv.Itoa(int(l.Partition))
	base := "/sources/" + id + "/partitions/" + l.Topic + "/" + p
	v := TimelineView{Source: id, Title: title, Topic: l.Topic, Partition: l.Partition, Name: l.Topic + "-" + p,
		LogStart: l.LogStartOffset, LogEnd: l.LogEndOffset, HWM: l.HighWatermark, LSO: l.LastStableOffset,
		Batches: len(l.Batches), Txns: len(l.Txns), Open: len(l.Open), Segments: len(l.Segments), Gaps: len(l.Gaps),
		WSPath: "/ws/v1" + base, APIPath: "/api/v1" + base, Assets: assets()}
	// One row per lane of txnindex's lane rule, which the stream's lane
	// numbers follow too: none first, then producers in order of first
	// appearance.
	for _, ln := range l.Lanes() {
		pr := ln.Producer
		if pr == nil {
			v.Lanes = append(v.Lanes, LaneView{Index: ln.Index, TestID: "lane-none", Label: "no producer id", Epochs: "non-transactional",
				Note: plural(ln.Batches, "batch", "batches")})
			continue
		}
		kind := "idempotent"
		if pr.Transactional {
			kind = "txn"
		}
		v.Lanes = append(v.Lanes, LaneView{Index: ln.Index, TestID: "lane-" + strconv.FormatInt(int64(pr.ID), 10),
			Label: "producer " + strconv.FormatInt(int64(pr.ID), 10), Epochs: pr.EpochLabel(),
			Note: kind + ", " + plural(ln.Batches, "batch", "batches") + ", " + plural(pr.Txns, "txn", "txns")})
	}
	// The true holder (txnindex.LSOHolder), open or decided with its
	// marker not yet below the high watermark, not the first of Log.Open.
	switch t := l.LSOHolder(); {
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
	case l.LastStableOffset < l.HighWatermark:
		v.Pinned = "LSO trails the high watermark."
	default:
		v.Pinned = "LSO equals the high watermark."
	}
	return v
}

// Summary is the index line of a built partition.
func Summary(l *txnindex.Log) string {
	return plural(len(l.Batches), "batch", "batches") + " · " + plural(len(l.Txns), "transaction", "transactions") +
		" (" + itoa(len(l.Open)) + " open) · LSO " + i64(l.LastStableOffset) + " · HWM " + i64(l.HighWatermark)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }
func itoa(n int) string  { return strconv.Itoa(n) }
