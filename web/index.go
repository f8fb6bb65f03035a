package web

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// The index page's view model: the partitions held back (LSO below the
// high watermark) ranked by lag, then every loaded partition grouped by
// source and topic in natural order (internal topics folded), then the
// demos. A log directory loaded lazily (logindex) lists every partition at
// once and fills in its lag as the background tail scans finish; the page
// shows how far they are and refreshes itself until they are done
// (static/js/index.js).

// Scan is where a lazily loaded partition's tail scan stands.
type Scan struct {
	State     string               // queued, loading, scanned, failed
	Diagnosis *diagnosis.Diagnosis // the tail's, once scanned
	Note      string               // what the scan read, or why it failed
	Internal  bool
}

// LogDirView is a lazily loaded log directory's progress.
type LogDirView struct {
	Root           string
	Scanned, Total int
	Took           time.Duration // once Scanned == Total
	Metadata       []string      // KRaft metadata logs listed apart
	Skipped        int           // directory entries that are not partitions
}

// IndexView is the index page.
type IndexView struct {
	Held      []PartitionRow // partitions of loaded sources whose LSO trails the HWM, by lag
	HeldMore  int            // held-back partitions beyond the cap, listed in their topics only
	Loads     []LoadView     // every loaded source, its partitions by topic
	Demos     []PartitionRow // the demos, by lag
	Scanning  bool           // a log directory's tail scans are still running
	Scanned   int            // tail scans done, over every log directory
	Total     int            // tail scans to do
	Upload    UploadView
	Assets    Assets
	Partition int // every partition listed (loads and demos)
}

// maxHeld caps the ranked list: past a few hundred held-back partitions
// the ranking is the topic groups' job.
const maxHeld = 200

// LoadView is one loaded source (--load PATH, an upload, a live topic).
type LoadView struct {
	ID, Title string
	TestID    string
	Dir       *LogDirView // nil unless a lazily loaded log directory
	Topics    []TopicGroup
}

// TopicGroup is one topic of a source.
type TopicGroup struct {
	Topic    string
	TestID   string // topic-group-<source>-<topic>
	Internal bool   // the broker's own topic (or KRaft's metadata log): folded
	Metadata bool   // KRaft's metadata log
	Open     bool   // drawn unfolded
	Rows     []PartitionRow
	Held     int   // partitions whose LSO trails the HWM
	MaxLag   int64 // the largest lag among them
	Pending  int   // tail scans not done
}

// foldOver folds user topics when a source holds more partitions than
// this: a log.dirs entry of thousands would otherwise be one long list.
const foldOver = 200

func indexRows(srcs []Source, row func(Source, Partition) PartitionRow) IndexView {
	v := IndexView{Assets: assets()}
	loads := map[string]*LoadView{}
	topics := map[string]*TopicGroup{}
	var order []string
	counted := map[string]bool{} // source ids whose progress is added in
	for _, s := range srcs {
		for _, p := range s.Partitions {
			r := row(s, p)
			v.Partition++
			if s.Demo {
				v.Demos = append(v.Demos, r)
				continue
			}
			lv := loads[s.ID]
			if lv == nil {
				lv = &LoadView{ID: s.ID, Title: s.Title, TestID: "load-" + s.ID, Dir: s.Index}
				loads[s.ID] = lv
				order = append(order, s.ID)
			}
			if d := s.Index; d != nil && !counted[s.ID] {
				counted[s.ID] = true
				v.Scanned += d.Scanned
				v.Total += d.Total
			}
			k := s.ID + "\x00" + p.Topic
			g := topics[k]
			if g == nil {
				g = &TopicGroup{Topic: p.Topic, TestID: "topic-group-" + s.ID + "-" + p.Topic, Internal: txnindex.IsInternalTopic(p.Topic) || p.Topic == txnindex.ClusterMetadataTopic,
					Metadata: p.Topic == txnindex.ClusterMetadataTopic}
				topics[k] = g
				lv.Topics = append(lv.Topics, *g)
			}
			g.Rows = append(g.Rows, r)
			if r.LagOffsets > 0 {
				g.Held++
				g.MaxLag = max(g.MaxLag, r.LagOffsets)
				v.Held = append(v.Held, r)
			}
			if r.Scan == "queued" || r.Scan == "loading" {
				g.Pending++
			}
		}
	}
	v.Scanning = v.Scanned < v.Total
	sortByLag(v.Held)
	if len(v.Held) > maxHeld {
		v.HeldMore, v.Held = len(v.Held)-maxHeld, v.Held[:maxHeld]
	}
	for i := range v.Held {
		v.Held[i].TestID = "held-row-" + strings.TrimPrefix(v.Held[i].TestID, "partition-row-")
		v.Held[i].LinkTestID = "held-link-" + strings.TrimPrefix(v.Held[i].LinkTestID, "partition-link-")
	}
	sortByLag(v.Demos)
	for _, id := range order {
		lv := loads[id]
		n := 0
		for i := range lv.Topics {
			g := topics[id+"\x00"+lv.Topics[i].Topic]
			slices.SortStableFunc(g.Rows, func(a, b PartitionRow) int { return cmp.Compare(a.Partition, b.Partition) })
			lv.Topics[i] = *g
			n += len(g.Rows)
		}
		// User topics first, in natural order; the broker's own after.
		slices.SortFunc(lv.Topics, func(a, b TopicGroup) int {
			return cmp.Or(cmp.Compare(boolRank(a.Internal), boolRank(b.Internal)), txnindex.NaturalCompare(a.Topic, b.Topic))
		})
		for i := range lv.Topics {
			lv.Topics[i].Open = !lv.Topics[i].Internal && n <= foldOver
		}
		v.Loads = append(v.Loads, *lv)
	}
	return v
}

// ProgressText is the progress line: "1,234 of 2,000 partitions scanned".
func (v IndexView) ProgressText() string {
	return thousands(v.Scanned) + " of " + thousands(v.Total) + " partitions scanned"
}

// Summary is a topic group's one line.
func (g TopicGroup) Summary() string {
	s := plural(len(g.Rows), "partition", "partitions")
	if g.Held > 0 {
		s += " · " + thousands(g.Held) + " held back (largest lag " + count(g.MaxLag) + ")"
	}
	if g.Pending > 0 {
		s += " · " + strconv.Itoa(g.Pending) + " not scanned yet"
	}
	switch {
	case g.Metadata:
		s += " · KRaft metadata log, not a data partition"
	case g.Internal:
		s += " · internal topic"
	}
	return s
}

// DirSummary is a lazily loaded log directory's line.
func (d *LogDirView) DirSummary() string {
	s := plural(d.Total, "partition", "partitions") + " listed"
	if d.Scanned == d.Total {
		s += ", all ranked in " + d.Took.Round(10*time.Millisecond).String()
	}
	if len(d.Metadata) > 0 {
		s += "; " + strings.Join(d.Metadata, ", ") + " is KRaft metadata (the controllers' log, not a topic's partition): not ranked"
	}
	if d.Skipped > 0 {
		s += "; " + plural(d.Skipped, "other directory", "other directories") + " skipped"
	}
	return s
}

// PartitionRow is one line of the index's partition lists.
type PartitionRow struct {
	TestID      string // partition-row-<source>-<topic>-<partition>
	LinkTestID  string // partition-link-<source>-<topic>-<partition>
	Source      string
	SourceTitle string
	Topic       string
	Partition   int32
	Label       string // topic-partition
	Href        string
	Built       bool   // false: nothing known yet (built when first opened, or its tail not scanned)
	Scan        string // a lazily loaded partition's tail scan: queued, loading, scanned, failed; "" otherwise
	Note        string // what the tail scan read, or why it failed
	LSO, HWM    int64
	LagOffsets  int64
	LagMs       int64  // how long the LSO has been held (Diagnosis.HeldAt), -1 unknown
	LagTime     string // LagMs in words: "20m", "at least 5s", "unknown"
	LagNote     string // why LagTime is a bound or unknown ("" when exact)
	PinnedBy    string // "producer 6 (epoch 0) from 3", "" when clear
	State       string // state of the pinning transaction, "clear" when none
	Open        int    // open transactions
	Summary     string
	// Unlisted, when not "", is what the partition's read_committed
	// consumers receive of aborted transactions no .txnindex entry lists
	// (diagnosis.Diagnosis.UnlistedAborted): a clear LSO hides it.
	Unlisted string
	// Rejected, when not "", says a broker fails to start with one of
	// the partition's .txnindex files (diagnosis.Diagnosis.TxnIndexRejected).
	Rejected string
	// Truncates, when not "", says a restart after an unclean shutdown
	// takes batches from the log (diagnosis.Diagnosis.RecoveryTruncates).
	Truncates string
	// NotData says what a partition that is not a data partition is
	// (the KRaft metadata log, txnindex.MetadataLogNote): its row says so
	// instead of "clear" or an empty partition's numbers.
	NotData string
}

// LagString is the data-lag attribute: the LSO lag in offsets.
func (r PartitionRow) LagString() string { return i64(r.LagOffsets) }

// Name is what the filter box matches: topic-partition, lower case.
func (r PartitionRow) Name() string { return strings.ToLower(r.Label) }

func partitionRow(s Source, p Partition, d *diagnosis.Diagnosis, nowMs int64) PartitionRow {
	n := itoa(int(p.Partition))
	r := PartitionRow{TestID: "partition-row-" + s.ID + "-" + p.Topic + "-" + n, LinkTestID: "partition-link-" + s.ID + "-" + p.Topic + "-" + n,
		Source: s.ID, SourceTitle: s.Title, Topic: p.Topic, Partition: p.Partition, Label: p.Topic + "-" + n,
		Href: PartitionPath(s.ID, p.Topic, p.Partition), Summary: p.Summary}
	if p.Scan != nil {
		r.Scan, r.Note = p.Scan.State, p.Scan.Note
	}
	if d == nil {
		return r
	}
	r.Built, r.LSO, r.HWM, r.LagOffsets, r.Open = true, d.LastStableOffset, d.HighWatermark, d.LSOLagOffsets, d.OpenCount()
	r.LagMs, _ = d.HeldAt(nowMs)
	r.LagTime, r.LagNote = rowLag(d, nowMs)
	r.State = "clear"
	if u := d.UnlistedAborted; u != nil {
		r.Unlisted = txnindex.Plural(u.Records, "aborted record", "aborted records") + " delivered"
	}
	if t := d.RecoveryTruncates; t != nil {
		r.Truncates = "a crash truncates it at " + txnindex.Count(t.Offset)
	}
	if len(d.TxnIndexRejected) > 0 {
		r.Rejected = "broker cannot load"
	}
	if d.Note != "" {
		r.State, r.NotData = stateNotData, d.Note
		return r
	}
	if t := d.PinnedBy; t != nil {
		r.PinnedBy = "producer " + i64(int64(t.ProducerID)) + " (epoch " + itoa(int(t.ProducerEpoch)) + ") from " + i64(t.FirstOffset)
		if t.Unseen {
			r.PinnedBy = "a transaction the capture did not see, from " + i64(t.FirstOffset)
		}
		r.State = string(t.State)
	}
	return r
}

// rowLag is a row's "LSO held for": Diagnosis.HeldAt on the row's clock
// (nowMs), the one measure the partition page, its diagnosis panel and the
// CLI give. A lazy partition's tail was diagnosed when it was scanned; its
// pinner's write times are measured again against the clock of now.
func rowLag(d *diagnosis.Diagnosis, nowMs int64) (text, note string) {
	p := d.PinnedBy
	if p == nil {
		return "—", ""
	}
	ms, atLeast := d.HeldAt(nowMs)
	switch {
	case ms < 0:
		return "unknown", "no write of the pinning transaction was read, and the producer snapshot gives no time for it"
	case p.Unseen:
		return "at least " + durText(ms), "how long the captured responses reported this LSO: the capture did not see the pinning transaction's writes"
	case atLeast && p.FirstTimestamp >= 0:
		return "at least " + durText(ms), "the pinning transaction began before the log start: its first write that survives is later than its first"
	case atLeast:
		return "at least " + durText(ms), "since the pinning transaction's last write, by the producer snapshot: its first write was not read"
	}
	return durText(ms), ""
}

// stateNotData is a row's state for a partition that is not a data
// partition (PartitionRow.NotData).
const stateNotData = "not-data"

// stateText is a row's state in words, as the partition page says it
// ("decided, marker not replicated", never decided_unreplicated); the
// identifier stays in data-state and the badge's class.
func stateText(state string) string {
	switch state {
	case "clear", "unknown":
		return state
	case stateNotData:
		return "not a data partition"
	}
	return present.StateWords(diagnosis.OpenTxnState(state))
}

// sortByLag orders rows by LSO lag, largest first: offsets, then time;
// partitions not built yet (lag unknown) come last.
func sortByLag(rows []PartitionRow) {
	slices.SortStableFunc(rows, func(a, b PartitionRow) int {
		if a.Built != b.Built {
			if a.Built {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.LagOffsets, a.LagOffsets), cmp.Compare(b.LagMs, a.LagMs),
			cmp.Compare(a.Source, b.Source), txnindex.NaturalCompare(a.Label, b.Label))
	})
}
