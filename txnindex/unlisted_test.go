package txnindex

import (
	"slices"
	"strings"
	"testing"
)

// TestUnlistedAbortedTransactions: a segment whose .txnindex file is gone
// while its .index remains (TxnIndexAbsent) lists no aborted transaction,
// as the broker serves it: Kafka's read_committed rule delivers the aborted
// records, the decision says why, the log sums them (UnlistedAborted), and
// no client departs from Kafka's rule by delivering them too. With the file
// listing them, the same log has no such records and kafka-go departs.
func TestUnlistedAbortedTransactions(t *testing.T) {
	build := func(listed bool) *Log {
		b := newLog().txn(p1, 2).abort(p1).txn(p2, 1).abort(p2).plain(-1, 1)
		s := &b.p.Segments[0]
		s.TxnIndexOnDisk = true
		if listed {
			s.TxnIndex = []AbortedTxn{
				{ProducerID: p1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3},
				{ProducerID: p2, FirstOffset: 3, LastOffset: 4, LastStableOffset: 5},
			}
		} else {
			s.TxnIndexAbsent = true
		}
		return b.build()
	}
	cases := []struct {
		name             string
		listed           bool
		letters          string // Java, read_committed
		unlisted         *UnlistedAborted
		kafkaGoAborted   int64
		kafkaJSAborted   int64
		mismatches       int
		explain          MismatchExplanation
		reasonAtOffset0  string
		kafkaGoControls  int64
		kafkaPythonAbort int64
	}{{
		name: "file missing", listed: false, letters: "DDCDCD",
		unlisted:   &UnlistedAborted{Transactions: 2, Records: 3, FirstOffset: 0, Indexes: []string{"00000000000000000000.txnindex"}, Missing: []string{"00000000000000000000.txnindex"}},
		mismatches: 2, explain: ExplainIndexFileMissing,
		reasonAtOffset0: "transaction [0,1] aborted by marker at 2, but no .txnindex entry lists it",
		kafkaGoControls: 2,
	}, {
		name: "file lists them", listed: true, letters: "AACAC" + "D",
		kafkaGoAborted: 3, kafkaJSAborted: 0, kafkaGoControls: 2, kafkaPythonAbort: 3,
		reasonAtOffset0: "aborted: producer",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := build(c.listed)
			if got := letters(l, ConsumeOptions{Isolation: ReadCommitted}); got != c.letters {
				t.Errorf("java read_committed %s, want %s", got, c.letters)
			}
			u := l.UnlistedAborted()
			switch {
			case (u == nil) != (c.unlisted == nil):
				t.Errorf("unlisted %+v, want %+v", u, c.unlisted)
			case u != nil && (u.Transactions != c.unlisted.Transactions || u.Records != c.unlisted.Records || u.FirstOffset != c.unlisted.FirstOffset ||
				!slices.Equal(u.Indexes, c.unlisted.Indexes) || !slices.Equal(u.Missing, c.unlisted.Missing)):
				t.Errorf("unlisted %+v, want %+v", *u, *c.unlisted)
			}
			if len(l.Mismatches) != c.mismatches {
				t.Errorf("%d mismatches, want %d: %+v", len(l.Mismatches), c.mismatches, l.Mismatches)
			}
			for _, m := range l.Mismatches {
				if m.Explanation != c.explain {
					t.Errorf("mismatch %+v, want explanation %s", m, c.explain)
				}
			}
			for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
				if d.From == 0 && !strings.Contains(d.Reason(), c.reasonAtOffset0) {
					t.Errorf("offset 0: %q, want …%q…", d.Reason(), c.reasonAtOffset0)
				}
			}
			r := l.clientDepartures()
			got := map[string]ClientDeparture{}
			if r != nil {
				for _, cd := range r.Clients {
					got[cd.Client] = cd
				}
			}
			if g := got["kafka-go"]; g.AbortedDelivered != c.kafkaGoAborted || g.ControlDelivered != c.kafkaGoControls {
				t.Errorf("kafka-go departs with %+v, want %d aborted, %d control", g, c.kafkaGoAborted, c.kafkaGoControls)
			}
			if g := got["kafkajs"]; g.AbortedDelivered != c.kafkaJSAborted {
				t.Errorf("kafkajs departs with %+v, want %d aborted", g, c.kafkaJSAborted)
			}
			if g := got["kafka-python"]; g.AbortedDelivered != c.kafkaPythonAbort {
				t.Errorf("kafka-python departs with %+v, want %d aborted", g, c.kafkaPythonAbort)
			}
		})
	}
}

// TestAbortedDeliveredBeforeItsEntry: an entry whose first offset lies past
// the transaction's first batch (a copy, a hand-made file: no broker writes
// it) lets Kafka's rule deliver that batch, and the reason names the entry.
func TestAbortedDeliveredBeforeItsEntry(t *testing.T) {
	b := newLog().txn(p1, 1).txn(p1, 1).abort(p1)
	s := &b.p.Segments[0]
	s.TxnIndexOnDisk = true
	s.TxnIndex = []AbortedTxn{{ProducerID: p1, FirstOffset: 1, LastOffset: 2, LastStableOffset: 3}}
	l := b.build()
	if got, want := letters(l, ConsumeOptions{Isolation: ReadCommitted}), "DAC"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
		if d.From == 0 && !strings.Contains(d.Reason(), "transaction [0,1] aborted by marker at 2, but its .txnindex entry, first offset 1, put the producer in the aborted set only from there") {
			t.Errorf("offset 0: %q", d.Reason())
		}
	}
	if u := l.UnlistedAborted(); u != nil {
		t.Errorf("unlisted %+v: the transaction is listed", *u)
	}
}

// TestCapturedResponseWithoutItsAbortedList: a captured read_committed
// response that carries an aborted transaction's data without listing it
// (a broker that cut the list) is delivered by the consumer that got it, and
// the reason blames the response, not a .txnindex.
func TestCapturedResponseWithoutItsAbortedList(t *testing.T) {
	l := newLog().txn(p1, 2).abort(p1).plain(-1, 1).build()
	resp := FetchResponse{HighWatermark: 4, LastStableOffset: 4, AbortedTransactions: []AbortedTransaction{}, Batches: l.Batches, FirstBatch: 0}
	fetches := []CapturedFetch{{Offset: 0, Isolation: ReadCommitted, Response: resp}}
	var got []string
	for d := range Replay(fetches, ReadCommitted, VariantJava, l) {
		got = append(got, d.Verdict.String()+": "+d.Reason())
	}
	if len(got) == 0 || !strings.HasPrefix(got[0], "delivered") || !strings.Contains(got[0], "transaction [0,1] aborted by marker at 2, but the fetch response's aborted list did not list it") {
		t.Errorf("decisions %q", got)
	}
}
