package txnindex

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ClientDeparturesMaxBatches bounds the batches the diagnosis decides to
// count what the clients deliver: past it, the counts cover the first
// batches only and say so (ClientsReport.Capped). The three
// clients' passes over the 1M-batch demo take about 0.2 s together.
const ClientDeparturesMaxBatches = 2_000_000

// clientsMaxBatches is ClientDeparturesMaxBatches, lowered by a test.
var clientsMaxBatches = ClientDeparturesMaxBatches

// ClientDeparture is what one client that departs from Kafka's rule
// (Variant.Client) delivers, asked for read_committed, that a Java
// consumer does not: records of aborted transactions, COMMIT and ABORT
// markers handed to the application as records, and records of
// transactions still open (read past the LSO).
type ClientDeparture struct {
	Client             string `json:"client"`
	AbortedDelivered   int64  `json:"aborted_delivered"`
	ControlDelivered   int64  `json:"control_delivered"`
	UndecidedDelivered int64  `json:"undecided_delivered"`
}

// ClientsReport is, per client variant (kafkajs, kafka-go, kafka-python,
// in Variants' order), what it delivers over the offsets From to To that
// Kafka's rule skips. Capped: the log has more than
// ClientDeparturesMaxBatches batches, and only the first were decided.
type ClientsReport struct {
	From    int64             `json:"from"`
	To      int64             `json:"to"`
	Capped  bool              `json:"capped,omitempty"`
	Clients []ClientDeparture `json:"clients"`
}

// any reports whether the client departs at all.
func (c *ClientDeparture) any() bool {
	return c.AbortedDelivered+c.ControlDelivered+c.UndecidedDelivered > 0
}

// clientsMemo keeps a log's client departures: a built log does not
// change, and the diagnosis is recomputed every second.
type clientsMemo struct {
	once sync.Once
	r    *ClientsReport
}

// ClientDepartures counts, for each client variant, what it delivers from
// the offsets a full read of l holds (from where every batch was kept, on
// a log seeded from a producer snapshot) that a read_committed Java
// consumer from there does not; nil when no client departs. Capped when
// the log has more than ClientDeparturesMaxBatches batches. Computed once
// per log Build made; the report is shared: callers must not modify it.
func (l *Log) ClientDepartures() *ClientsReport {
	m := l.clients
	if m == nil {
		return l.clientDepartures()
	}
	m.once.Do(func() { m.r = l.clientDepartures() })
	return m.r
}

func (l *Log) clientDepartures() *ClientsReport {
	if len(l.Batches) == 0 || len(l.Txns) == 0 && !l.hasControl() {
		return nil
	}
	from := l.LogStartOffset
	if l.Replay.seeded() {
		from = max(from, l.Replay.everyFrom())
	}
	last := len(l.Batches) - 1
	r := &ClientsReport{From: from, Capped: last >= clientsMaxBatches}
	if r.Capped {
		last = clientsMaxBatches - 1
	}
	r.To = l.Batches[last].LastOffset()
	departs := false
	for _, v := range Variants {
		if !v.Client() {
			continue
		}
		c := ClientDeparture{Client: v.String()}
		ab, ct, un := NewCounts(r.From, r.To), NewCounts(r.From, r.To), NewCounts(r.From, r.To)
		for d := range l.Decisions(ConsumeOptions{From: from, Isolation: ReadCommitted, Variant: v, MaxBytes: DefaultMaxBytes}) {
			if d.From > r.To {
				break
			}
			switch {
			case d.Cause == CauseAbortedDelivered:
				ab.Add(&d)
			case d.Cause == CauseControlDelivered:
				ct.Add(&d)
			case d.Verdict == Delivered && d.Txn != nil && d.Txn.State == TxnOpen && d.Batch != nil && d.Batch.IsTransactional():
				un.Add(&d)
			}
		}
		c.AbortedDelivered, c.ControlDelivered, c.UndecidedDelivered = ab.Delivered, ct.Delivered, un.Delivered
		departs = departs || c.any()
		r.Clients = append(r.Clients, c)
	}
	if !departs {
		return nil
	}
	return r
}

// hasControl reports whether l holds a control batch.
func (l *Log) hasControl() bool {
	for i := range l.Batches {
		if l.Batches[i].IsControl() {
			return true
		}
	}
	return false
}

// ClientsLine is the diagnosis's sentence on the clients that depart from
// Kafka's rule, "" when none does: "kafka-go and kafka-python would
// deliver 102 aborted records and 14 control markers from this partition;
// kafkajs 3 aborted records; the Java consumer, librdkafka and franz-go
// none of them". Clients that deliver the same are named together, those
// that deliver most first.
func (d *Diagnosis) ClientsLine() string {
	r := d.ClientDepartures
	if r == nil {
		return ""
	}
	type group struct {
		names []string
		c     ClientDeparture
	}
	var groups []group
	none := []string{"the Java consumer", "librdkafka", "franz-go"}
	for _, c := range r.Clients {
		if !c.any() {
			none = append(none, c.Client)
			continue
		}
		name, c := c.Client, c
		c.Client = ""
		i := 0
		for i < len(groups) && groups[i].c != c {
			i++
		}
		if i == len(groups) {
			groups = append(groups, group{c: c})
		}
		groups[i].names = append(groups[i].names, name)
	}
	// The clients that deliver most first.
	slices.SortStableFunc(groups, func(x, y group) int {
		return cmp.Compare(y.c.AbortedDelivered+y.c.ControlDelivered+y.c.UndecidedDelivered, x.c.AbortedDelivered+x.c.ControlDelivered+x.c.UndecidedDelivered)
	})
	where := "from this partition"
	switch {
	case r.Capped:
		where = fmt.Sprintf("from offsets %d to %d (the first %s of the partition; the rest was not counted)", r.From, r.To, Plural(clientsMaxBatches, "batch", "batches"))
	case r.From > d.LogStartOffset || r.To < d.LogEndOffset-1:
		where = fmt.Sprintf("from offsets %d to %d (those read)", r.From, r.To)
	}
	var parts []string
	for i, g := range groups {
		var what []string
		if g.c.AbortedDelivered > 0 {
			what = append(what, Plural(g.c.AbortedDelivered, "aborted record", "aborted records"))
		}
		if g.c.ControlDelivered > 0 {
			what = append(what, Plural(g.c.ControlDelivered, "control marker", "control markers"))
		}
		if g.c.UndecidedDelivered > 0 {
			what = append(what, Plural(g.c.UndecidedDelivered, "record", "records")+" of transactions still open")
		}
		p := andList(g.names) + " " + andList(what)
		if i == 0 {
			p = andList(g.names) + " would deliver " + andList(what) + " " + where
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ") + "; " + andList(none) + " none of them"
}

// andList joins words as a sentence lists them: "a", "a and b", "a, b and c".
func andList(ws []string) string {
	if n := len(ws); n > 1 {
		return strings.Join(ws[:n-1], ", ") + " and " + ws[n-1]
	}
	return strings.Join(ws, "")
}

// runbookClients writes ClientsLine and the command that shows each offset.
func (d *Diagnosis) runbookClients(sb *strings.Builder) {
	line := d.ClientsLine()
	if line == "" {
		return
	}
	fmt.Fprintf(sb, "\n  clients that depart from Kafka's rule, asked for read_committed from the start: %s\n", line)
	fmt.Fprintf(sb, "    each offset, client by client, and why: txnscope decide --compare-variants with the same input\n")
}
