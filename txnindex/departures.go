package txnindex

import "sync"

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
	// Decided is how many batches were decided: all of them, or
	// ClientDeparturesMaxBatches when Capped.
	Decided int `json:"-"`
}

// Any reports whether the client departs at all.
func (c *ClientDeparture) Any() bool {
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
	if l.Replay.Seeded() {
		from = max(from, l.Replay.EveryFrom())
	}
	last := len(l.Batches) - 1
	r := &ClientsReport{From: from, Capped: last >= clientsMaxBatches}
	if r.Capped {
		last = clientsMaxBatches - 1
	}
	r.To, r.Decided = l.Batches[last].LastOffset(), last+1
	// The clients' passes read the built log and nothing else: they run
	// side by side, one goroutine each, on the cores the diagnosis has.
	var clients []Variant
	for _, v := range Variants {
		if v.Client() {
			clients = append(clients, v)
			r.Clients = append(r.Clients, ClientDeparture{Client: v.String()})
		}
	}
	var wg sync.WaitGroup
	for i, v := range clients {
		wg.Go(func() { l.countDepartures(v, from, r.To, &r.Clients[i]) })
	}
	wg.Wait()
	departs := false
	for i := range r.Clients {
		departs = departs || r.Clients[i].Any()
	}
	if !departs {
		return nil
	}
	return r
}

// countDepartures decides the offsets from..to as client v does, asked
// for read_committed, and counts into c what it delivers that Kafka's rule
// skips.
func (l *Log) countDepartures(v Variant, from, to int64, c *ClientDeparture) {
	ab, ct, un := NewCounts(from, to), NewCounts(from, to), NewCounts(from, to)
	for d := range l.Decisions(ConsumeOptions{From: from, Isolation: ReadCommitted, Variant: v, MaxBytes: DefaultMaxBytes}) {
		if d.From > to {
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
