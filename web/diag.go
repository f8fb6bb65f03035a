package web

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// DiagnosisView is the stuck-LSO panel of the timeline page, built from
// txnindex's Diagnosis.
type DiagnosisView struct {
	LSO, HWM   int64
	LagOffsets int64
	LagMs      int64
	LagTime    string // "20m", on the page's one clock (Clock)
	LagAtLeast bool   // the pinning transaction began before what survives
	// LagUnknown says why LagTime is "unknown": no write time of the
	// pinning transaction is known (seeded from a producer snapshot whose
	// entry carries none). "" otherwise.
	LagUnknown string
	// Clock is the one time every age on the page is measured at (UTC, the
	// page's format), and ClockWhat says whose clock it is: the server's,
	// a demo's own time, the end of a capture.
	Clock, ClockWhat string
	// Bootstrap is the address the commands carry ("" until one is given:
	// they use present.BootstrapVar, with its guard line).
	Bootstrap string
	Commands  bool // some command is shown (the bootstrap field is)
	// TopicUnknown: the commands name TOPIC (a segment read alone), and
	// the topic field is shown beside the bootstrap one.
	TopicUnknown bool
	// Note says what a partition that is not a data partition is (the
	// KRaft metadata log): shown instead of "clear".
	Note string
	// TopicProblem says that Kafka would reject the topic's name
	// (txnindex.TopicNameProblem), whose commands are then a comment
	// that says so; "" for a legal name.
	TopicProblem string
	Stuck        bool   // something pins the LSO below the HWM
	Clear        string // the sentence shown when nothing pins it
	Pinned       *TxnView
	Txns         []TxnView
	// TxnsTotal counts the open transactions, of which Txns lists the
	// first (txnindex.ListCap, or the limit asked for); the More counts
	// are those each list leaves out, said below it.
	TxnsTotal                         int
	TxnsMore, GroupsMore, RemovedMore int
	Lag                               *diagnosis.LagReport // nil without a consumer position
	Position                          int64                // the consumer position the lag split is for; -1 for none
	// Capture is the LSO history of a log assembled from captured fetches.
	Capture *CaptureView
	LSOFrom string // where the LSO comes from: "log" or "capture"
	// Groups are the consumer groups committed on the partition (from
	// __consumer_offsets or OffsetFetch); nil when none was read.
	Groups []GroupView
	// GroupsSource says where the groups were read; JoinNote what the
	// join of the internal topics left out ("" when nothing): the groups
	// and transactional ids shown are then partial.
	GroupsSource, JoinNote string
	// Kinds are the groups by kind, the share groups and the records
	// skipped (groupKindsView); nil when none was read.
	Kinds *GroupKindsView
	// Compaction is the log cleaner's evidence (diagnosis.CompactionReport),
	// nil when the partition shows none; MarkerRemoved are the
	// transactions the replay leaves open but the broker decided, their
	// markers removed by the cleaner (diagnosis.StateMarkerRemoved).
	Compaction    []string
	MarkerRemoved []TxnView
	// Unknown says why the offsets are unknown (no .log segment was
	// read); nil when they are known.
	Unknown *diagnosis.OffsetsUnknownReport
	// Restart is what the next restart of the broker would change
	// (diagnosis.RestartReport); nil when the directory holds no state a
	// restart drops.
	Restart    *RestartView
	Truncation *TruncationView
	// Clients is the sentence on the clients that depart from Kafka's
	// rule (diagnosis.Diagnosis.ClientsLine), "" when none does;
	// ClientsHref the partition's clients page, "" where the page has
	// no server to ask (an exported page).
	Clients, ClientsHref string
	// Unlisted is what read_committed consumers receive of aborted
	// transactions no .txnindex entry lists (present.UnlistedLine), ""
	// when there is none; UnlistedRemedy how the broker lists them again.
	Unlisted, UnlistedRemedy string
	// Rejected says which .txnindex files a broker fails to start with
	// (present.RejectedLine), "" when none; RejectedRemedy how it starts.
	Rejected, RejectedRemedy string
}

// RestartView is the running broker's LSO against the one after its next
// restart, and why.
type RestartView struct {
	Now, After int64
	Snapshot   string
	Text       string
}

// TruncationView is what an unclean restart's recovery takes from the
// log (diagnosis.TruncationReport): where the log then ends, the LSO now
// and after, in words.
type TruncationView struct {
	Offset, Now, After int64
	Text               string
}

// GroupView is one consumer group's committed offset against the LSO.
type GroupView struct {
	Group     string
	Kind      string // "consumer group (KIP-848)", in words (present.GroupKindWords)
	Committed int64
	Affected  bool   // committed <= LSO
	Blocked   bool   // waiting at the LSO
	What      string // "waiting at the LSO", "3 records to go", "past the LSO"
}

// TxnView is one open transaction in the panel.
type TxnView struct {
	TestID          string // diag-txn-<producer>-<first offset>
	Producer        int64
	Epoch           int16
	First, Last     int64
	Batches         int
	Records         int64
	Age             string // "20m"; "unknown" when AgeUnknown
	AgeUnknown      bool   // no write time of it is known (diagnosis.OpenTxnReport.AgeUnknown)
	State           string // open, expired, hanging, decided_unreplicated (data-state, CSS)
	StateText       string // the state in words: "decided, marker not replicated"
	Reason          string
	AbortCommand    Cmd
	PrintCommand    Cmd
	DiscardRecords  int64
	Ranges          []RangeView
	Pins            bool
	SkewedOrFromSnp string // a note: clock skew, seeded from a snapshot
	Unseen          bool   // known only from the LSO a capture reported
	// TransactionalID, CoordinatorState and HangingRule are what the
	// transaction coordinator says (__transaction_state or
	// DescribeTransactions) and the KIP-664 rule that decided; "" when
	// no coordinator state was read.
	TransactionalID  string
	CoordinatorState string
	HangingRule      string
	// Unreplicated: decided, its marker not yet below the high watermark
	// (diagnosis.StateDecidedUnreplicated). No abort ends it: EndsWhen says
	// what does, CheckCommand shows the replicas.
	Unreplicated    bool
	EndsWhen        string
	CheckCommand    Cmd
	HangingRuleText string // the rule in words
	// ConfirmCommand asks the coordinator whether a late transaction
	// hangs (kafka-transactions.sh find-hanging); empty once coordinator
	// evidence decided. AbortBreaks says what aborting a transaction
	// prepared for a two-phase commit breaks.
	ConfirmCommand Cmd
	AbortBreaks    string
}

// Cmd is a command a copy button copies. Text is what is shown and
// copied: the command txnindex wrote (with present.BootstrapVar for the
// address) with the page's bootstrap put in through present.ShellWord,
// or, while none is set, after present.BootstrapGuard's line, so that
// what is copied always runs. The page's script never rebuilds it: when
// the bootstrap field changes it fetches the panel again and takes Text.
type Cmd struct {
	Text string
}

// cmdFill is what a page puts into the commands: the bootstrap address
// and, for a segment read alone, the topic its field names.
type cmdFill struct{ bootstrap, topic string }

func command(template string, f cmdFill) Cmd {
	text, guards := template, ""
	if present.UsesBootstrapVar(template) {
		if f.bootstrap == "" {
			guards = present.BootstrapGuard + "\n"
		} else {
			text = strings.ReplaceAll(text, present.BootstrapVar, present.ShellWord(f.bootstrap))
		}
	}
	// The topic of a segment read alone is not known: the command names
	// TOPIC, after the guard line that stops it until TOPIC is set, or
	// the topic the page's field gives, quoted (static/js/diagnosis.js
	// fetches the panel again when the field changes).
	if present.UsesTopicVar(template) {
		if f.topic == "" {
			guards += present.TopicGuard + "\n"
		} else {
			text = strings.ReplaceAll(text, present.TopicVar, present.ShellWord(f.topic))
		}
	}
	return Cmd{Text: guards + text}
}

// CaptureView is a capture's LSO history, as txnindex reports it.
type CaptureView = diagnosis.CaptureReport

// msClock renders a capture time of day, UTC, to the millisecond; "—"
// when the capture has no timestamps.
func msClock(ms int64) string {
	if ms == 0 {
		return "—"
	}
	return time.UnixMilli(ms).UTC().Format("15:04:05.000")
}

func boolText(b bool) string { return strconv.FormatBool(b) }

// RangeView is one discarded offset range, a link that moves the timeline there.
type RangeView struct {
	From, To int64
	Label    string // "3–5"
	Href     string // "?from=..&to=.." (the page without script still follows it)
	ViewFrom int64
	ViewTo   int64
	TestID   string
}

// durText is ms for a reader, in the one duration format
// (txnindex.Duration): "850ms", "20m", "335d 17h".
func durText(ms int64) string { return txnindex.DurationMs(ms) }

// txnSpan is an open transaction's offsets: first to last, or, for one
// whose data retention deleted all of (a producer snapshot remembers its
// first offset, no batch of it survives), its first offset alone.
func txnSpan(t TxnView) string {
	if t.Last < t.First {
		return "from " + i64(t.First) + " (its data deleted)"
	}
	return span(t.First, t.Last)
}

func rangeView(r txnindex.OffsetRange) RangeView {
	n := r.To - r.From + 1
	pad := max(n/2, 4)
	v := RangeView{From: r.From, To: r.To, ViewFrom: r.From - pad, ViewTo: r.To + 1 + pad,
		TestID: "discard-range-" + i64(r.From) + "-" + i64(r.To)}
	v.Label = span(r.From, r.To)
	q := url.Values{}
	q.Set("from", i64(v.ViewFrom))
	q.Set("to", i64(v.ViewTo))
	v.Href = "?" + q.Encode()
	return v
}

func txnView(t *diagnosis.OpenTxnReport, bootstrap cmdFill) TxnView {
	v := TxnView{TestID: "diag-txn-" + i64(int64(t.ProducerID)) + "-" + i64(t.FirstOffset), Producer: int64(t.ProducerID),
		Epoch: t.ProducerEpoch, First: t.FirstOffset, Last: t.LastOffset, Batches: t.Batches, Records: t.Records,
		Age: durText(t.AgeMs), AgeUnknown: t.AgeUnknown, State: string(t.State), StateText: present.StateWords(t.State), Reason: t.Reason,
		AbortCommand: command(t.AbortCommand, bootstrap), PrintCommand: command(t.Discards.PrintCommand, bootstrap),
		DiscardRecords: t.Discards.Records, Pins: t.PinsLSO, Unseen: t.Unseen,
		TransactionalID: t.TransactionalID, CoordinatorState: t.CoordinatorState, HangingRule: t.HangingRule,
		HangingRuleText: present.RuleWords(t.HangingRule),
		Unreplicated:    t.State == diagnosis.StateDecidedUnreplicated, EndsWhen: t.EndsWhen, CheckCommand: command(t.CheckCommand, bootstrap),
		ConfirmCommand: command(t.ConfirmCommand, bootstrap), AbortBreaks: t.AbortBreaks}
	if t.State == diagnosis.StateLate && t.HangingRule == "" {
		v.StateText = "late, hanging not confirmed"
	} else if t.State == diagnosis.StateLate {
		v.StateText = "late, not hanging"
	}
	if t.Unseen {
		v.TestID = "diag-txn-unseen-" + i64(t.FirstOffset)
	}
	if t.AgeUnknown {
		v.Age = "unknown" // not "0ms": its AgeMs is 0 for want of a time
	}
	for _, r := range t.Discards.Ranges {
		v.Ranges = append(v.Ranges, rangeView(r))
	}
	switch {
	case v.Unreplicated:
		// Its reason and "To end it" (EndsWhen) say it all.
	case t.StartEvidence != "":
		v.SkewedOrFromSnp = t.StartEvidence
	case t.Seeded && t.BeganBeforeLogStart:
		v.SkewedOrFromSnp = "begun before the log start (from the producer snapshot)"
	case t.Seeded:
		// A load that read only the log's tail (a partition page's first
		// view, diagnose from a snapshot) seeds the transactions open
		// before its first offset read: the log start may be far below.
		v.SkewedOrFromSnp = "begun before the offsets read (from the producer snapshot)"
	case t.ClockSkew:
		v.SkewedOrFromSnp = "timestamps ahead of the clock"
	}
	return v
}

// diagnosisView is the panel of d, whose commands carry
// present.BootstrapVar (diagnosed with no bootstrap); bootstrap, when set,
// is put into them. clock says whose time d.Now is (clockServer, …).
func diagnosisView(d *diagnosis.Diagnosis, bootstrap, clock string) *DiagnosisView {
	return diagnosisViewFor(d, cmdFill{bootstrap: bootstrap}, clock)
}

// diagnosisViewFor is diagnosisView with the topic the page's field names
// for a segment read alone.
func diagnosisViewFor(d *diagnosis.Diagnosis, fill cmdFill, clock string) *DiagnosisView {
	bootstrap := fill.bootstrap
	v := &DiagnosisView{LSO: d.LastStableOffset, HWM: d.HighWatermark, LagOffsets: d.LSOLagOffsets, LagMs: d.LSOLagMs,
		Stuck: d.PinnedBy != nil, Lag: d.Lag, Position: -1, Capture: d.Capture, LSOFrom: d.LastStableOffsetSource,
		Bootstrap: bootstrap, ClockWhat: clock}
	if d.Capture != nil {
		v.ClockWhat = clockCapture
	}
	v.Clock = "—"
	if d.Now > 0 {
		v.Clock = utcText(d.Now)
	}
	v.LagMs, v.LagAtLeast = d.LSOHeldMs, d.LSOHeldAtLeast
	v.LagTime = durText(v.LagMs)
	if p := d.PinnedBy; p != nil && d.LSOHeldMs < 0 {
		v.LagTime, v.LagAtLeast = "unknown", false
		v.LagUnknown = "no write of the pinning transaction was read, and the producer snapshot gives no time for it"
	}
	if d.Lag != nil {
		v.Position = d.Lag.Position
	}
	for i := range d.OpenTransactions {
		v.Txns = append(v.Txns, txnView(&d.OpenTransactions[i], fill))
	}
	v.TxnsTotal, v.TxnsMore = d.OpenCount(), txnindex.More(d.OpenTransactions, d.OpenTransactionsTotal)
	v.GroupsMore = txnindex.More(d.ConsumerGroups, d.ConsumerGroupsTotal)
	v.RemovedMore = txnindex.More(d.MarkerRemoved, d.MarkerRemovedTotal)
	if d.PinnedBy != nil {
		p := txnView(d.PinnedBy, fill)
		v.Pinned = &p
	}
	v.Commands = v.Pinned != nil || len(v.Txns) > 0
	v.Note = d.Note
	if d.TopicNameProblem != "" {
		v.TopicProblem = "Topic name Kafka would reject: " + txnindex.TextWord(d.Topic) + ": " + d.TopicNameProblem + ". No command is given for it: a real broker has no such topic."
	}
	v.Groups = groupViews(d.ConsumerGroups)
	v.GroupsSource, v.JoinNote = d.GroupsSource, d.JoinNote
	v.Kinds = groupKindsView(d)
	if c := d.Compaction; c != nil {
		v.Compaction = c.Evidence
	}
	for i := range d.MarkerRemoved {
		v.MarkerRemoved = append(v.MarkerRemoved, txnView(&d.MarkerRemoved[i], fill))
	}
	v.Unknown = d.OffsetsUnknown
	v.Clients = present.ClientsLine(d)
	v.Unlisted, v.UnlistedRemedy = present.UnlistedLine(d), present.UnlistedRemedy(d)
	v.Rejected, v.RejectedRemedy = present.RejectedLine(d), present.RejectedRemedy(d)
	v.TopicUnknown = d.TopicUnknown && v.Commands
	if r := d.AfterRestart; r != nil {
		v.Restart = &RestartView{Now: d.LastStableOffset, After: r.LastStableOffset, Snapshot: r.Snapshot, Text: r.Text}
	}
	if r := d.RecoveryTruncates; r != nil {
		v.Truncation = &TruncationView{Offset: r.Offset, Now: d.LastStableOffset, After: r.LastStableOffset, Text: r.Text}
	}
	switch {
	case v.Stuck:
	case d.LastStableOffset < d.HighWatermark:
		// Never "clear" while read_committed consumers are held below the HWM.
		v.Clear = "The LSO trails the high watermark, and no transaction found here holds it."
	case len(d.OpenTransactions) == 0:
		v.Clear = "No open transaction: read_committed consumers can read to the high watermark."
	default:
		v.Clear = "Open transactions exist, but none holds the LSO below the high watermark."
	}
	return v
}

// BuiltCatalog is a Catalog that can hand out a partition's log only if it
// has been built already. The index diagnoses built partitions only, so
// that opening it never builds a large lazy one; without this interface it
// takes a partition with a Summary to be built.
type BuiltCatalog interface {
	Built(id, topic string, partition int32) (*txnindex.Log, bool)
}

func (u *UI) builtLog(s Source, p Partition) *txnindex.Log {
	if b, ok := u.cat.(BuiltCatalog); ok {
		if l, ok := b.Built(s.ID, p.Topic, p.Partition); ok {
			return l
		}
		return nil
	}
	if p.Summary == "" {
		return nil
	}
	l, _ := u.cat.Log(s.ID, p.Topic, p.Partition)
	return l
}

// DiagnosisPanel serves /sources/{id}/partitions/{topic}/{partition}/diagnosis:
// the panel alone, as an HTML fragment, so that the timeline page can
// replace it when the consumer position changes (static/js/diagnosis.js)
// without a reload. The query is view.ParseDiagnoseQuery's.
func (u *UI) DiagnosisPanel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
		if err != nil {
			http.Error(w, "partition is not a number", http.StatusBadRequest)
			return
		}
		l, ok := u.cat.Log(r.PathValue("id"), r.PathValue("topic"), int32(p))
		if !ok {
			http.Error(w, "no such partition", http.StatusNotFound)
			return
		}
		o, bootstrap, clock, err := u.diagnoseOptions(r, r.PathValue("id"))
		topic := topicName(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v := diagnosisViewFor(u.diags.Diagnose(l, o), cmdFill{bootstrap, topic}, clock)
		v.ClientsHref = clientsHref(r.PathValue("id"), r.PathValue("topic"), int32(p))
		render(w, r, diagnosisPanel(v))
	})
}

// groupViews lists the groups, the affected (committed <= LSO) first.
func groupViews(gs []txnindex.GroupPosition) []GroupView {
	if gs == nil {
		return nil
	}
	out := []GroupView{}
	for _, g := range gs {
		v := GroupView{Group: g.Group, Kind: present.GroupKindWords(g.Kind), Committed: g.Offset, Affected: g.BehindLSO, Blocked: g.Blocked}
		switch {
		case g.Blocked:
			v.What = "blocked: waiting at the LSO"
		case g.BehindLSO && g.RecordsToLSO >= 0:
			v.What = plural(int(g.RecordsToLSO), "record", "records") + " to receive, then waits at the LSO"
		case g.BehindLSO:
			v.What = txnindex.Plural(g.OffsetsToLSO, "offset", "offsets") + " below the LSO"
		default:
			v.What = "past the LSO (read_uncommitted): not held"
		}
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b GroupView) int {
		return cmp.Compare(boolRank(!a.Affected), boolRank(!b.Affected))
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// topicName is the topic the page's field names for a segment read alone
// (?topic_name=), at most as long as Kafka's longest topic name.
func topicName(r *http.Request) string {
	t := strings.TrimSpace(r.URL.Query().Get("topic_name"))
	if len(t) > txnindex.MaxTopicNameLength {
		t = t[:txnindex.MaxTopicNameLength]
	}
	return t
}

// clientsHref is the clients page of a partition.
func clientsHref(id, topic string, p int32) string {
	return "/sources/" + id + "/partitions/" + topic + "/" + i64(int64(p)) + "/clients"
}

// maxListLimit is the most entries a list of the diagnosis API holds
// (its limit= parameter), said under a list that leaves some out.
const maxListLimit = txnindex.MaxListLimit
