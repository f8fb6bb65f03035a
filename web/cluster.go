package web

// The cluster view (serve --bootstrap without --topic, issue 20): every
// partition of a live cluster by LSO lag, grouped by topic, from the latest
// live.ClusterScan. The page refreshes its table every scan interval
// (static/js/cluster.js fetches the page again and swaps the table in,
// keeping the filter), and each partition links to the route that opens
// the live timeline of its tail.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/static"
)

// ClusterView is the cluster index page.
type ClusterView struct {
	Assets    Assets
	ScriptJS  string
	Bootstrap string
	// Summary is one sentence on the latest scan; Err why the latest scan
	// failed (the table then shows the one before, if any).
	Summary string
	Err     string
	PollMs  int64
	Window  int64 // offsets the live timeline of a partition starts with
	Topics  []ClusterTopicView
	Brokers []string // brokers that did not answer, as "broker N (host:port): error"
}

// ClusterTopicView is one topic's partitions, worst first.
type ClusterTopicView struct {
	Name       string
	Stuck      int
	Partitions []ClusterRowView
}

// ClusterRowView is one partition row.
type ClusterRowView struct {
	Name       string // topic-partition
	Partition  int32
	State      string // hanging, expired, open, unknown, clear
	LSO, HWM   string
	LagOffsets int64
	LagTime    string // "—" when clear
	HeldBy     string // the pinning transaction, in words
	Groups     string // consumer groups waiting behind the LSO
	Href       string // opens the live timeline of the tail
	Note       string // why the offsets are unknown
}

// ClusterPartitionPath is the route that opens the live timeline of a
// partition's tail.
func ClusterPartitionPath(topic string, partition int32) string {
	return "/cluster/" + url.PathEscape(topic) + "/" + strconv.Itoa(int(partition))
}

// ClusterIndex serves the cluster view of the latest scan. latest returns
// the latest successful scan (nil before the first) and the error of the
// latest attempt, if it failed; poll is the scan interval the page
// refreshes at; window is the tail a partition's timeline opens with.
func ClusterIndex(latest func() (*live.ClusterScan, error), bootstrap string, poll time.Duration, window int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := latest()
		v := clusterView(s, err, bootstrap)
		v.PollMs, v.Window = poll.Milliseconds(), window
		render(w, r, ClusterPage(v))
	})
}

func clusterView(s *live.ClusterScan, err error, bootstrap string) ClusterView {
	v := ClusterView{Assets: assets(), ScriptJS: static.Path("js/cluster.js"), Bootstrap: bootstrap}
	if err != nil {
		v.Err = "The latest scan failed: " + err.Error()
	}
	if s == nil {
		v.Summary = "No scan has finished yet."
		return v
	}
	v.Summary = strconv.Itoa(len(s.Partitions)) + " partitions in " + strconv.Itoa(s.Topics) + " topics on " + strconv.Itoa(len(s.Brokers)) +
		" brokers: " + strconv.Itoa(s.Stuck) + " stuck (" + strconv.Itoa(s.Hanging) + " hanging), " + strconv.Itoa(s.Unknown) + " unknown, " +
		strconv.Itoa(s.Clear) + " clear. Scanned at " + s.Time.UTC().Format("15:04:05") + " UTC in " + durText(s.Duration.Milliseconds()) +
		" with " + strconv.Itoa(s.RequestCount) + " requests."
	for _, b := range s.Brokers {
		if b.Err != "" {
			v.Brokers = append(v.Brokers, "broker "+strconv.Itoa(int(b.ID))+" ("+b.Host+":"+strconv.Itoa(int(b.Port))+"): "+b.Err)
		}
	}
	// The scan is ranked; a topic's group starts where its first (worst)
	// partition is, so the topics come worst first too.
	at := map[string]int{}
	for i := range s.Partitions {
		p := &s.Partitions[i]
		k, ok := at[p.Topic]
		if !ok {
			k = len(v.Topics)
			at[p.Topic] = k
			v.Topics = append(v.Topics, ClusterTopicView{Name: p.Topic})
		}
		row := clusterRow(p)
		if p.LSOLagOffsets > 0 {
			v.Topics[k].Stuck++
		}
		v.Topics[k].Partitions = append(v.Topics[k].Partitions, row)
	}
	return v
}

func clusterRow(p *live.PartitionLag) ClusterRowView {
	r := ClusterRowView{Name: p.Topic + "-" + strconv.Itoa(int(p.Partition)), Partition: p.Partition, LagOffsets: p.LSOLagOffsets,
		LSO: i64(p.LastStableOffset), HWM: i64(p.HighWatermark), LagTime: "—", HeldBy: "—", Groups: "—",
		Href: ClusterPartitionPath(p.Topic, p.Partition)}
	switch {
	case p.Err != "":
		r.State, r.LSO, r.HWM, r.Note = "unknown", "?", "?", p.Err
	case p.LSOLagOffsets == 0:
		r.State = "clear"
	case p.PinnedBy != nil:
		r.State = string(p.PinnedBy.State)
	default:
		r.State = "open"
	}
	if p.Hanging {
		r.State = "hanging"
	}
	if p.LSOLagOffsets > 0 {
		r.LagTime = durText(p.LSOLagMs)
	}
	if t := p.PinnedBy; t != nil {
		who := "producer " + strconv.FormatInt(t.ProducerID, 10)
		if t.TransactionalID != "" {
			who = strconv.Quote(t.TransactionalID)
		}
		r.HeldBy = who + " from offset " + i64(t.FirstOffset)
		if t.CoordinatorState != "" {
			r.HeldBy += ", " + t.CoordinatorState
		}
	}
	if len(p.Groups) > 0 {
		gs := make([]string, len(p.Groups))
		for i, g := range p.Groups {
			gs[i] = g.Group
		}
		r.Groups = strings.Join(gs, ", ")
	}
	return r
}
