package txnindex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// delivered is every offset l.Delivered(o) holds.
func delivered(l *Log, o ConsumeOptions) []int64 {
	var out []int64
	for _, r := range l.Delivered(o) {
		for off := r[0]; off <= r[1]; off++ {
			out = append(out, off)
		}
	}
	return out
}

func offsets(from, to int64) (o []int64) {
	for ; from <= to; from++ {
		o = append(o, from)
	}
	return o
}

// TestClientVariantsLiteral: what kafkajs 2.2.4, kafka-go v0.4.50 and
// kafka-python 2.0.2 deliver (read_committed where they can) from literal
// logs. The lists are the real clients' own: internal/difftest's
// TestClientsLiteralScenarios writes these logs to a kfake broker over
// loopback (one batch per data step, two transactional franz-go producers
// and an idempotent one) and reads them back with the real clients
// (kafkajs through node, eachMessage unless EachBatch; kafka-go's Reader;
// kafka-python, Debian's python3-kafka, through python3), and holds the
// same lists. kfake lists only the aborted transactions that begin below
// the end of the data it returns (AbortedToReadEnd).
func TestClientVariantsLiteral(t *testing.T) {
	const a, b ProducerID = 7, 9
	// a's transaction at 0-1, 4, 6 (ABORT at 7), b's at 2-3 (ABORT at 5),
	// a plain record at 8: the aborted list, in marker order, holds b's
	// entry (first offset 2) before a's (0).
	markerOrder := func() *logBuilder {
		return newLog().txn(a, 2).txn(b, 2).txn(a, 1).abort(b).txn(a, 1).abort(a).plain(-1, 1)
	}
	// b's transaction at 0 (ABORT at 4), a's at 1 and 3 (ABORT at 5), a
	// plain record at 2: everything after 2 is filtered out.
	filteredTail := func() *logBuilder {
		return newLog().txn(b, 1).txn(a, 1).plain(-1, 1).txn(a, 1).abort(b).abort(a)
	}
	markers := func() *logBuilder { return newLog().txn(a, 2).commit(a).txn(b, 1).abort(b).plain(-1, 1) }
	snappy := func() *logBuilder {
		lb := markers()
		for i := range lb.p.Batches {
			if !lb.p.Batches[i].IsControl() {
				lb.p.Batches[i] = withCodec(lb.p.Batches[i], CompressionSnappy)
			}
		}
		return lb
	}
	cases := []struct {
		name      string
		log       func() *logBuilder
		from      int64
		maxBytes  int32
		eachBatch bool
		kafkajs   []int64
		kafkago   []int64
		python    []int64
	}{
		{"MarkerOrderedAbortedList", markerOrder, 0, 0, false, []int64{0, 1, 8}, offsets(0, 8), offsets(0, 8)},
		{"SeekIntoTwoOpenAbortedTransactions", markerOrder, 4, 0, false, []int64{4, 8}, offsets(4, 8), offsets(4, 8)},
		{"SeekIntoTwoOpenAbortedTransactionsOneBatchPerFetch", markerOrder, 4, 1, false, []int64{4, 8}, offsets(4, 8), offsets(4, 8)},
		{"OneBatchPerFetchKfakeLists", markerOrder, 0, 1, false, []int64{4, 8}, offsets(0, 8), offsets(0, 8)},
		{"RefetchAfterFilteredTail", filteredTail, 0, 0, false, []int64{2, 3}, offsets(0, 5), offsets(0, 5)},
		{"EachBatchPassesFilteredTail", filteredTail, 0, 0, true, []int64{2}, offsets(0, 5), offsets(0, 5)},
		{"MarkersDelivered", markers, 0, 0, false, []int64{0, 1, 5}, offsets(0, 5), offsets(0, 5)},
		{"SnappyBatchFailsTheFetch", snappy, 0, 0, false, nil, offsets(0, 5), offsets(0, 5)},
	}
	// With codec packages registered kafkajs reads the snappy log as the
	// uncompressed one (not recorded: the harness registers none).
	o := ConsumeOptions{Isolation: ReadCommitted, Variant: VariantKafkaJS, KafkaJSCodecs: true}
	if got := delivered(snappy().build(), o); !slices.Equal(got, []int64{0, 1, 5}) {
		t.Errorf("kafkajs with codecs delivers %v from the snappy log, want [0 1 5]", got)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.log().build()
			o := ConsumeOptions{From: c.from, Isolation: ReadCommitted, MaxBytes: c.maxBytes, EachBatch: c.eachBatch, AbortedToReadEnd: true}
			for _, w := range []struct {
				v    Variant
				want []int64
			}{{VariantKafkaJS, c.kafkajs}, {VariantKafkaGo, c.kafkago}, {VariantKafkaPython, c.python}} {
				o.Variant = w.v
				if got := delivered(l, o); !slices.Equal(got, w.want) {
					t.Errorf("%s delivers %v, the real client %v", w.v, got, w.want)
				}
				// Every offset decided once, in order.
				next := int64(0)
				for d := range l.Decisions(o) {
					if d.From != next || d.To < d.From {
						t.Fatalf("%s: decision [%d,%d] after %d", w.v, d.From, d.To, next)
					}
					next = d.To + 1
				}
				if next != l.LogEndOffset {
					t.Errorf("%s: decisions end at %d, log end %d", w.v, next, l.LogEndOffset)
				}
			}
		})
	}
}

func withCodec(b Batch, c Compression) Batch {
	f := b.Fields()
	f.Attributes |= int16(c)
	return f.Batch()
}

// TestKafkaJSApacheKafkaLists: the aborted list Apache Kafka's broker sends
// reaches past the returned data to its offset index's bound (the log end
// for a log this small), so with one batch per fetch the first fetch's list
// already holds b's entry ahead of a's, and a's first batch leaks, unlike
// against kfake (TestClientVariantsLiteral's OneBatchPerFetchKfakeLists).
// Predicted from kafkajs's and the broker's source; no Apache Kafka broker
// runs here.
func TestKafkaJSApacheKafkaLists(t *testing.T) {
	l := newLog().txn(7, 2).txn(9, 2).txn(7, 1).abort(9).txn(7, 1).abort(7).plain(-1, 1).build()
	o := ConsumeOptions{Isolation: ReadCommitted, Variant: VariantKafkaJS, MaxBytes: 1}
	if got, want := strip(letters(l, o)), strip("DD AA D C A C D"); got != want {
		t.Errorf("kafkajs, one batch per fetch from Apache Kafka: %s, want %s", got, want)
	}
}

// TestClientReasons: each departure from Kafka's rule says which client
// does what and why.
func TestClientReasons(t *testing.T) {
	l := newLog().txn(7, 2).txn(9, 2).txn(7, 1).abort(9).txn(7, 1).abort(7).plain(-1, 1).build()
	cases := []struct {
		name string
		v    Variant
		iso  Isolation
		off  int64
		want []string
	}{
		{"KafkaGoReadingUncommittedDepartsOnlyWithMarkers", VariantKafkaGo, ReadUncommitted, 0, []string{"kafka-go: delivered: read_uncommitted returns every data record"}},
		{"KafkaJSLeakNamesTheEntryAhead", VariantKafkaJS, ReadCommitted, 0, []string{"kafkajs delivers this aborted record", "fetch from offset 0 one entry per record", "producer 7's entry (first offset 0) was still waiting behind one entry, producer 9's (first offset 2)"}},
		{"KafkaJSSkipNamesItsEntry", VariantKafkaJS, ReadCommitted, 2, []string{"kafkajs skips it", "producer 9's entry (first offset 2)"}},
		{"KafkaGoIgnoresTheList", VariantKafkaGo, ReadCommitted, 0, []string{"kafka-go delivers this aborted record", "never uses it"}},
		{"KafkaGoHandsOverMarkers", VariantKafkaGo, ReadCommitted, 5, []string{"kafka-go hands this ABORT marker (key 00000000) of producer 9"}},
		{"KafkaPythonReadsUncommitted", VariantKafkaPython, ReadCommitted, 2, []string{"kafka-python delivers this aborted record", "no read_committed"}},
		{"KafkaPythonHandsOverMarkers", VariantKafkaPython, ReadCommitted, 7, []string{"kafka-python hands this ABORT marker", "2.0.6 skips them"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for d := range l.Decisions(ConsumeOptions{Isolation: c.iso, Variant: c.v}) {
				if d.From <= c.off && c.off <= d.To {
					r := d.Reason()
					for _, w := range c.want {
						if !strings.Contains(r, w) {
							t.Errorf("reason %q lacks %q", r, w)
						}
					}
					return
				}
			}
			t.Fatalf("no decision for %d", c.off)
		})
	}
}

// TestKafkaJSCompactedBatchUnpredictable: which offsets of a compacted
// batch kept a record decides how many aborted-list entries kafkajs
// moves; the log does not say, so those offsets and the rest are
// unpredictable rather than guessed.
func TestKafkaJSCompactedBatchUnpredictable(t *testing.T) {
	lb := newLog().txn(7, 2).txn(9, 2).abort(9).abort(7)
	f := lb.p.Batches[0].Fields()
	f.Records = 1 // two offsets, one record left
	lb.p.Batches[0] = f.Batch()
	l := lb.build()
	o := ConsumeOptions{Isolation: ReadCommitted, Variant: VariantKafkaJS}
	if got, want := letters(l, o), "UUUUUU"; got != want {
		t.Errorf("kafkajs over a compacted batch: %s, want %s", got, want)
	}
	for d := range l.Decisions(o) {
		if d.Cause != CauseClientUnpredictable || !strings.Contains(d.Reason(), "does not say") {
			t.Errorf("[%d,%d]: %v %q", d.From, d.To, d.Cause, d.Reason())
		}
	}
}

// TestReplayClientVariants: replaying the fetches a client variant's own
// pass makes (their offsets, from the decisions' FetchOffset, answered by
// the same broker emulation) delivers what the pass does, for each client,
// including the refetches of kafkajs's filtered tails.
func TestReplayClientVariants(t *testing.T) {
	logs := map[string]*Log{
		"MarkerOrder":  newLog().txn(7, 2).txn(9, 2).txn(7, 1).abort(9).txn(7, 1).abort(7).plain(-1, 1).build(),
		"FilteredTail": newLog().txn(9, 1).txn(7, 1).plain(-1, 1).txn(7, 1).abort(9).abort(7).plain(-1, 2).build(),
	}
	for name, l := range logs {
		for _, v := range []Variant{VariantKafkaJS, VariantKafkaGo, VariantKafkaPython} {
			for _, mb := range []int32{1, DefaultMaxBytes} {
				o := ConsumeOptions{Isolation: ReadCommitted, Variant: v, MaxBytes: mb}
				var fetches []CapturedFetch
				iso := ReadCommitted
				if v == VariantKafkaPython {
					iso = ReadUncommitted
				}
				for d := range l.Decisions(o) {
					if d.FetchOffset >= 0 && (len(fetches) == 0 || fetches[len(fetches)-1].Offset != d.FetchOffset) {
						fetches = append(fetches, CapturedFetch{Offset: d.FetchOffset, Isolation: iso,
							Response: l.Fetch(FetchRequest{Offset: d.FetchOffset, MaxBytes: mb, Isolation: iso})})
					}
				}
				want := delivered(l, o)
				var got []int64
				for d := range Replay(fetches, iso, v, l) {
					if d.Verdict == Delivered {
						for off := d.From; off <= d.To; off++ {
							got = append(got, off)
						}
					}
					if d.Variant != v {
						t.Fatalf("%s %s: replayed decision of %s", name, v, d.Variant)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s %d bytes: replay of %d fetches delivers %v, the pass %v", name, v, mb, len(fetches), got, want)
				}
			}
		}
	}
}

// randomClientLog is a random interleaving of three producers'
// transactions (committed, aborted), plain records and segment rolls.
func randomClientLog(r *rand.Rand) *Log {
	lb := newLog()
	open := map[ProducerID]bool{}
	for range 4 + r.IntN(14) {
		p := ProducerID(1 + r.IntN(3))
		switch op := r.IntN(10); {
		case op < 5:
			lb.txn(p, 1+r.IntN(2))
			open[p] = true
		case op < 8 && open[p]:
			if r.IntN(2) == 0 {
				lb.commit(p)
			} else {
				lb.abort(p)
			}
			open[p] = false
		case op >= 8:
			lb.plain(-1, 1)
		}
		if r.IntN(8) == 0 {
			lb.roll()
		}
	}
	for _, p := range []ProducerID{1, 2, 3} {
		if open[p] {
			lb.abort(p)
		}
	}
	return lb.build()
}

// TestKafkaJSOnlyOverDelivers: on random logs, from the start and a random
// seek, with one-batch, small and 1 MiB fetches, eachMessage and
// eachBatch, kafkajs delivers every record Kafka's rule delivers (it only
// leaks, never skips a committed record), kafka-go and kafka-python
// deliver every record below the LSO, and each client variant decides
// every offset once, in order. Why kafkajs cannot skip a committed record:
// the list is in marker order and every record at or past the head's
// first offset moves one entry, so by the i-th ABORT marker of the list
// at least i entries have moved (each entry's first offset is below its
// marker); a producer's entry has therefore moved by the time its own
// marker removes it again, and no later committed transaction of it finds
// it in the set.
func TestKafkaJSOnlyOverDelivers(t *testing.T) {
	leaked := 0
	for seed := range 3000 {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		l := randomClientLog(r)
		for _, mb := range []int32{1, 200, 0} {
			from := int64(r.IntN(int(l.LogEndOffset) + 1))
			for _, eb := range []bool{false, true} {
				o := ConsumeOptions{From: from, Isolation: ReadCommitted, MaxBytes: mb, EachBatch: eb}
				o.Variant = VariantJava
				java := delivered(l, o)
				for _, v := range []Variant{VariantKafkaJS, VariantKafkaGo, VariantKafkaPython} {
					o.Variant = v
					got := delivered(l, o)
					for _, x := range java {
						if _, ok := slices.BinarySearch(got, x); !ok {
							t.Fatalf("seed %d, %d bytes from %d, eachBatch %v: %s skips %d, which Kafka's rule delivers\njava %v\n%s %v", seed, mb, from, eb, v, x, java, v, got)
						}
					}
					if v == VariantKafkaJS {
						leaked += len(got) - len(java)
					} else if want := l.LogEndOffset - max(from, 0); int64(len(got)) != want {
						t.Fatalf("seed %d from %d: %s delivers %d offsets, want all %d", seed, from, v, len(got), want)
					}
					next := int64(0)
					for d := range l.Decisions(o) {
						if d.From != next || d.To < d.From {
							t.Fatalf("seed %d: %s decision [%d,%d] after %d", seed, v, d.From, d.To, next)
						}
						next = d.To + 1
					}
				}
			}
		}
	}
	if leaked == 0 {
		t.Fatal("kafkajs never leaked: the logs prove nothing")
	}
	t.Logf("kafkajs leaked %d aborted records over the runs", leaked)
}

// TestCompareRows: Log.Compare yields a row per offset and one per gap,
// in a window when asked, each with every variant's decision and the
// departures from the first variant's (Kafka's rule).
func TestCompareRows(t *testing.T) {
	l := newLog().txn(7, 2).txn(9, 2).txn(7, 1).abort(9).txn(7, 1).abort(7).skip(3).plain(-1, 1).build()
	o := ConsumeOptions{Isolation: ReadCommitted}
	type row struct {
		from, to int64
		deps     string // the departures of Variants, "-" for none
	}
	rows := func(from, to int64) (out []row) {
		l.Compare(o, Variants, from, to, func(r *CompareRow) bool {
			deps := make([]string, len(r.Departures))
			for i, d := range r.Departures {
				deps[i] = d
				if d == "" {
					deps[i] = "-"
				}
			}
			out = append(out, row{r.From, r.To, strings.Join(deps, " ")})
			return true
		})
		return out
	}
	const (
		none    = "- - - - - -"
		leak    = "- - - aborted_delivered aborted_delivered aborted_delivered"
		skipped = "- - - - aborted_delivered aborted_delivered"
		marker  = "- - - - control_delivered control_delivered"
	)
	want := []row{{0, 0, leak}, {1, 1, leak}, {2, 2, skipped}, {3, 3, skipped}, {4, 4, skipped}, {5, 5, marker},
		{6, 6, skipped}, {7, 7, marker}, {8, 10, none}, {11, 11, none}}
	if got := rows(0, -1); !slices.Equal(got, want) {
		t.Errorf("whole log:\n got %v\nwant %v", got, want)
	}
	if got := rows(7, 9); !slices.Equal(got, []row{{7, 7, marker}, {8, 9, none}}) {
		t.Errorf("window 7-9: %v", got)
	}
	if got := rows(9, 20); !slices.Equal(got, []row{{9, 10, none}, {11, 11, none}}) {
		t.Errorf("window 9-20: %v", got)
	}
}

// TestKafkaJSStuckOnEmptiedBatches: a fetch that returns only batches the
// cleaner emptied gives kafkajs no record, so it resolves no offset
// (runner.js handleBatch) and fetches the same offset forever; with larger
// fetches the response holds a record past them and it moves on.
// Predicted from kafkajs's source: kfake cannot write emptied batches.
func TestKafkaJSStuckOnEmptiedBatches(t *testing.T) {
	l := newLog().txn(7, 2).commit(7).emptied(8, 2, false).abort(8).plain(-1, 1).build()
	for _, c := range []struct {
		maxBytes int32
		want     string
	}{{1, "DDC PP P P"}, {0, "DDC GG C D"}} {
		o := ConsumeOptions{Isolation: ReadCommitted, Variant: VariantKafkaJS, MaxBytes: c.maxBytes}
		if got := letters(l, o); got != strip(c.want) {
			t.Errorf("%d bytes: %s, want %s", c.maxBytes, got, strip(c.want))
		}
	}
	for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted, Variant: VariantKafkaJS, MaxBytes: 1}) {
		if d.From >= 3 && (d.Cause != CauseClientNoRecord || !strings.Contains(d.Reason(), "never gets past offset 3")) {
			t.Errorf("[%d,%d]: %v %q", d.From, d.To, d.Cause, d.Reason())
		}
	}
}
