package web

// The cluster view (serve --bootstrap without --topic): every
// partition of a live cluster by LSO lag, grouped by topic, from the latest
// live.ClusterScan. The page refreshes its table every scan interval
// (static/js/cluster.js fetches the page again and swaps the table in,
// keeping the filter), and each partition links to the route that opens
// the live timeline of its tail.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/pathname"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/txnindex"
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
	Window  string // offsets the live timeline of a partition starts with
	Topics  []ClusterTopicView
	Brokers []string // brokers that did not answer, as "broker N (host:port): error"
}

// ClusterTopicView is one topic's partitions, worst first.
type ClusterTopicView struct {
	Name       string
	Stuck      int
	Partitions []ClusterRowView
}

// Sum is the topic's partitions and stuck ones in words.
func (t ClusterTopicView) Sum() string {
	return plural(len(t.Partitions), "partition", "partitions") + ", " + thousands(t.Stuck) + " stuck"
}

// ClusterRowView is one partition row.
type ClusterRowView struct {
	Name       string // topic-partition
	Partition  int32
	State      string // hanging, expired, open, unknown, clear
	StateWords string // what the state means, for its badge's title
	LSO, HWM   string
	LagOffsets int64
	Lag        string // LagOffsets as every count is written (txnindex.Count)
	LagTime    string // "—" when clear
	HeldBy     string // the pinning transaction, in words
	Groups     string // consumer groups waiting behind the LSO
	Href       string // opens the live timeline of the tail
	Note       string // why the offsets are unknown
}

// ClusterPartitionPath is the route that opens the live timeline of a
// partition's tail.
func ClusterPartitionPath(topic string, partition int32) string {
	return "/cluster/" + pathname.Segment(topic) + "/" + strconv.Itoa(int(partition))
}

// ClusterIndex serves the cluster view of the latest scan. latest returns
// the latest successful scan (nil before the first) and the error of the
// latest attempt, if it failed; poll is the scan interval the page
// refreshes at; window is the tail a partition's timeline opens with.
func ClusterIndex(latest func() (*live.ClusterScan, error), bootstrap string, poll time.Duration, window int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := latest()
		v := clusterView(s, err, bootstrap)
		v.PollMs, v.Window = poll.Milliseconds(), txnindex.Count(window)
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
	unknown := ""
	if s.Unknown > 0 {
		unknown = thousands(s.Unknown) + " unknown, "
	}
	v.Summary = plural(len(s.Partitions), "partition", "partitions") + " in " + plural(s.Topics, "topic", "topics") + " on " +
		plural(len(s.Brokers), "broker", "brokers") + ": " + thousands(s.Stuck) + " stuck (" + thousands(s.Hanging) + " hanging), " + unknown +
		thousands(s.Clear) + " clear. Scanned at " + s.Time.UTC().Format("15:04:05") + " UTC in " + durText(s.Duration.Milliseconds()) +
		" with " + plural(s.RequestCount, "request", "requests") + "."
	for _, b := range s.Brokers {
		if b.Err != "" {
			// The scan's error already names the broker.
			why := strings.TrimPrefix(b.Err, "broker "+strconv.Itoa(int(b.ID))+" unreachable: ")
			v.Brokers = append(v.Brokers, "Broker "+strconv.Itoa(int(b.ID))+" at "+b.Host+":"+strconv.Itoa(int(b.Port))+
				" did not answer ("+why+"): the partitions it leads are unknown until it does.")
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

// clusterStateWords explains each state of a row (its badge's title).
var clusterStateWords = map[string]string{
	"hanging": "A hanging transaction holds the LSO: no coordinator will end it; only kafka-transactions.sh abort will.",
	"expired": "The transaction holding the LSO is older than its timeout; its coordinator still tracks it and should abort it.",
	"open":    "An open transaction holds the LSO, within its timeout.",
	"unknown": "The offsets could not be read.",
	"clear":   "Nothing holds the LSO: read_committed consumers read up to the high watermark.",
}

// coordinatorWords says a transaction state as DescribeTransactions
// names it (TransactionState.java, txnindex.TxnStatus) in words.
var coordinatorWords = map[string]string{
	"Empty":             "its coordinator has no transaction open",
	"Ongoing":           "still open at its coordinator",
	"PrepareCommit":     "its coordinator is committing it",
	"PrepareAbort":      "its coordinator is aborting it",
	"CompleteCommit":    "its coordinator committed it",
	"CompleteAbort":     "its coordinator aborted it",
	"Dead":              "its coordinator expired the transactional id",
	"PrepareEpochFence": "its coordinator is fencing the producer",
}

func clusterRow(p *live.PartitionLag) ClusterRowView {
	r := ClusterRowView{Name: p.Topic + "-" + strconv.Itoa(int(p.Partition)), Partition: p.Partition, LagOffsets: p.LSOLagOffsets,
		Lag: txnindex.Count(p.LSOLagOffsets), LSO: i64(p.LastStableOffset), HWM: i64(p.HighWatermark), LagTime: "—", HeldBy: "—", Groups: "—",
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
	r.StateWords = clusterStateWords[r.State]
	if p.LSOLagOffsets > 0 {
		r.LagTime = durText(p.LSOLagMs)
	}
	if t := p.PinnedBy; t != nil {
		who := "producer " + strconv.FormatInt(t.ProducerID, 10)
		if t.TransactionalID != "" {
			who = strconv.Quote(t.TransactionalID)
		}
		r.HeldBy = who + " from offset " + i64(t.FirstOffset)
		if t.Hanging {
			// Whatever ListTransactions said of the id (Ongoing, say),
			// KIP-664's rule found the coordinator will not end it
			// here: "still open at its coordinator" would contradict
			// the badge.
			r.HeldBy += ", which its coordinator will not end"
		} else if w := coordinatorWords[t.CoordinatorState]; w != "" {
			r.HeldBy += ", " + w
		} else if t.CoordinatorState != "" {
			r.HeldBy += ", coordinator state " + t.CoordinatorState
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
