package txnindex

import (
	"slices"
	"testing"
)

const (
	p1 ProducerID = 1
	p2 ProducerID = 2
	p3 ProducerID = 3
)

// TestReadCommittedEdgeCases states each behaviour as a literal log and the
// verdict of every offset, one letter per offset (see verdictLetter). Every
// case runs for all three consumer variants and several fetch sizes: for
// logs a broker wrote, none of them may change what is delivered.
func TestReadCommittedEdgeCases(t *testing.T) {
	cases := []struct {
		name string
		log  func() *logBuilder
		from int64
		want string // read_committed
		lso  int64  // -1: don't check
	}{
		{
			// p1 txn A (0-1) aborted, p2 txn B (2-3) committed, interleaved.
			name: "InterleavedProducers",
			log: func() *logBuilder {
				return newLog().txn(p1, 1).txn(p2, 1).txn(p1, 1).txn(p2, 1).abort(p1).commit(p2).plain(-1, 2)
			},
			want: "ADAD CC DD", lso: 8,
		},
		{
			name: "TransactionSpanningSegments",
			log: func() *logBuilder {
				return newLog().plain(-1, 1).txn(p1, 2).roll().txn(p1, 2).roll().abort(p1).txn(p2, 1).commit(p2)
			},
			want: "D AA AA C DC", lso: 8,
		},
		{
			// The abort's entry is in segment 2 but its data begins in
			// segment 0; a fetch from segment 1 still finds it because the
			// broker walks forward from the fetch segment.
			name: "AbortFirstOffsetInEarlierSegmentThanFetch",
			log: func() *logBuilder {
				return newLog().txn(p1, 2).roll().plain(-1, 2).txn(p1, 1).roll().abort(p1).plain(-1, 1)
			},
			from: 2, want: "BB DD A C D", lso: 7,
		},
		{
			name: "SeekIntoMiddleOfAbortedTransaction",
			log: func() *logBuilder {
				return newLog().txn(p1, 3).txn(p1, 3).abort(p1).plain(-1, 2)
			},
			from: 4, want: "BBB BAA C DD", lso: 9,
		},
		{
			name: "SeekJustPastAbortMarker",
			log: func() *logBuilder {
				return newLog().txn(p1, 3).abort(p1).plain(-1, 2)
			},
			from: 4, want: "BBB B DD", lso: 6,
		},
		{
			name: "SeekOntoAbortMarker",
			log: func() *logBuilder {
				return newLog().txn(p1, 3).abort(p1).txn(p1, 1).commit(p1)
			},
			from: 3, want: "BBB C DC", lso: 6,
		},
		{
			// txn A (aborted, 0-1), txn B (committed, 3-4), txn C (aborted, 6-7).
			name: "SeveralTransactionsOfOneProducer",
			log: func() *logBuilder {
				return newLog().txn(p1, 2).abort(p1).txn(p1, 2).commit(p1).txn(p1, 2).abort(p1)
			},
			want: "AAC DDC AAC", lso: 9,
		},
		{
			// Fencing bumps the epoch; the marker carries the new epoch.
			// Filtering is by producer id only.
			name: "EpochBump",
			log: func() *logBuilder {
				return newLog().txn(p1, 2).marker(p1, ControlAbort, 1).add(BatchFields{BaseOffset: 3, LastOffset: 3, Magic: 2, ProducerID: p1, ProducerEpoch: 1,
					Attributes: AttrTransactional, Records: 1, CoordinatorEpoch: -1, Control: ControlNone}.Batch()).marker(p1, ControlCommit, 1)
			},
			want: "AA C D C", lso: 5,
		},
		{
			// An aborted transaction with no data: no index entry, no LSO effect.
			name: "AbortWithNoData",
			log: func() *logBuilder {
				return newLog().plain(-1, 1).abort(p1).txn(p1, 1).commit(p1)
			},
			want: "D C DC", lso: 4,
		},
		{
			// p1 aborted 0-1; its non-transactional batch at 2 is delivered
			// although p1 is in the aborted set at that point.
			name: "NonTransactionalBatchFromAbortedProducer",
			log: func() *logBuilder {
				return newLog().txn(p1, 2).plain(p1, 1).abort(p1)
			},
			want: "AA D C", lso: 4,
		},
		{
			name: "CommitMarker",
			log:  func() *logBuilder { return newLog().txn(p1, 3).commit(p1) },
			want: "DDD C", lso: 4,
		},
		{
			// p2 never ends its transaction: the LSO stays at its first
			// offset and nothing from any producer past it is delivered.
			name: "OpenTransactionAtEnd",
			log: func() *logBuilder {
				return newLog().plain(-1, 1).txn(p2, 2).txn(p1, 1).commit(p1).plain(-1, 1)
			},
			want: "D PP P P P", lso: 1,
		},
		{
			// The cleaner removed the aborted data (offsets 1-3) but kept
			// the marker; its index entry was not carried over.
			name: "CompactionRemovedDataKeptMarker",
			log: func() *logBuilder {
				return newLog().plain(-1, 1).skip(3).abort(p1).plain(-1, 1)
			},
			want: "D GGG C D", lso: 6,
		},
		{
			name: "CompactionEmptiedBatches",
			log: func() *logBuilder {
				return newLog().emptied(p1, 2, false).emptied(p1, 1, true).txn(p1, 1).commit(p1)
			},
			want: "GG G DC", lso: 5,
		},
		{
			name: "ReadUncommittedIgnoredByRC", // read_committed side of OpenTransactionAtEnd with a commit first
			log: func() *logBuilder {
				return newLog().txn(p1, 1).commit(p1).txn(p3, 1)
			},
			want: "DC P", lso: 2,
		},
		{
			// Two producers abort transactions that started in the same
			// offset range; the entries are listed in marker order, not
			// first-offset order.
			name: "AbortedListOutOfFirstOffsetOrder",
			log: func() *logBuilder {
				return newLog().txn(p1, 1).txn(p2, 1).abort(p2).abort(p1).txn(p2, 1).commit(p2)
			},
			want: "AA CC DC", lso: 6,
		},
	}
	variants := []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo}
	sizes := []int32{0, 1, 150}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.log().build()
			if tc.lso >= 0 && l.LastStableOffset != tc.lso {
				t.Errorf("LSO = %d, want %d", l.LastStableOffset, tc.lso)
			}
			for _, v := range variants {
				for _, mb := range sizes {
					got := letters(l, ConsumeOptions{From: tc.from, Isolation: ReadCommitted, Variant: v, MaxBytes: mb})
					if got != strip(tc.want) {
						t.Errorf("%s maxBytes=%d:\n got %s\nwant %s", v, mb, got, strip(tc.want))
					}
				}
			}
		})
	}
}

// TestReadUncommitted: everything below the high watermark that is data is
// delivered, aborted or not; markers are still never delivered.
func TestReadUncommitted(t *testing.T) {
	l := newLog().txn(p1, 2).abort(p1).txn(p2, 1).plain(-1, 1).build()
	if got, want := letters(l, ConsumeOptions{Isolation: ReadUncommitted}), "DDCDD"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	// The high watermark from a checkpoint holds back what is above it.
	b := newLog().txn(p1, 2).abort(p1).plain(-1, 2)
	b.p.HighWatermark = 3
	l = b.build()
	if got, want := letters(l, ConsumeOptions{Isolation: ReadUncommitted}), "DDCPP"; got != want {
		t.Errorf("HWM 3: got %s want %s", got, want)
	}
	// Every read_committed decision carries the read_uncommitted verdict.
	for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
		if d.From < 2 && d.Uncommitted != Delivered {
			t.Errorf("offset %d: uncommitted = %v, want delivered", d.From, d.Uncommitted)
		}
	}
}

// TestDecidedButUnreplicatedHoldsLSO: a transaction whose marker is at or
// above the high watermark is still unstable (ProducerStateManager's
// unreplicatedTxns), so it holds the LSO at its first offset.
func TestDecidedButUnreplicatedHoldsLSO(t *testing.T) {
	b := newLog().plain(-1, 1).txn(p1, 2).commit(p1).plain(-1, 1)
	b.p.HighWatermark = 3 // the marker at 3 is not replicated yet
	l := b.build()
	if l.LastStableOffset != 1 {
		t.Fatalf("LSO = %d, want 1", l.LastStableOffset)
	}
	if got, want := letters(l, ConsumeOptions{Isolation: ReadCommitted}), "DPPPP"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

// TestRetentionDeletedEntryFirstOffset: retention removed the segment in
// which p1's aborted transaction began. The .txnindex entry (in the marker's
// segment) still names the old first offset; the batches that remain are
// filtered, and the rebuilt entry's different first offset is reported as a
// benign mismatch.
func TestRetentionDeletedEntryFirstOffset(t *testing.T) {
	b := newLog()
	b.p.Segments[0] = Segment{Name: segName(10), BaseOffset: 10}
	b.next = 10
	b.plain(-1, 1).txn(p1, 2).abort(p1).plain(-1, 1)
	seg := &b.p.Segments[0]
	seg.TxnIndexOnDisk = true
	seg.TxnIndex = []AbortedTxn{{ProducerID: p1, FirstOffset: 4, LastOffset: 13, LastStableOffset: 14}}
	l := b.build()
	if got, want := letters(l, ConsumeOptions{Isolation: ReadCommitted}), "DAACD"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if len(l.Mismatches) != 1 || l.Mismatches[0].Kind != FieldsDiffer || l.Mismatches[0].Note == "" {
		t.Errorf("mismatches = %+v, want one benign fields_differ", l.Mismatches)
	}
	// Seeding from a producer snapshot removes the mismatch.
	b.p.Ongoing = []OngoingTxn{{ProducerID: p1, FirstOffset: 4}}
	l = b.build()
	if len(l.Mismatches) != 0 {
		t.Errorf("with snapshot seed: mismatches = %+v", l.Mismatches)
	}
	// An open transaction whose start was deleted holds the LSO at the log
	// start offset (clamped).
	o := newLog()
	o.p.Segments[0] = Segment{Name: segName(10), BaseOffset: 10}
	o.next = 10
	o.txn(p1, 2).plain(-1, 1)
	o.p.Ongoing = []OngoingTxn{{ProducerID: p1, FirstOffset: 4}}
	if l := o.build(); l.LastStableOffset != 10 {
		t.Errorf("LSO = %d, want 10 (clamped to log start)", l.LastStableOffset)
	}
}

// TestLogStartInsideBatch: DeleteRecords moved the log start into a batch;
// the records below it are never delivered.
func TestLogStartInsideBatch(t *testing.T) {
	b := newLog().plain(-1, 4).plain(-1, 2)
	b.p.LogStartOffset = 2
	l := b.build()
	if got, want := letters(l, ConsumeOptions{From: -1, Isolation: ReadCommitted}), "BBDDDD"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

// TestEmptyVersusAbsentAbortedList follows KafkaApis and LocalLog: null for
// read_uncommitted, an empty list for read_committed at the LSO or with no
// aborts in range. Consumers treat both alike.
func TestEmptyVersusAbsentAbortedList(t *testing.T) {
	l := newLog().txn(p1, 2).abort(p1).plain(-1, 1).txn(p2, 1).build() // LSO 4
	cases := []struct {
		name    string
		req     FetchRequest
		wantNil bool
		wantLen int
		batches int
	}{
		{"ReadUncommittedNull", FetchRequest{Offset: 0, Isolation: ReadUncommitted}, true, 0, 4},
		{"ReadCommittedWithAbort", FetchRequest{Offset: 0, Isolation: ReadCommitted}, false, 1, 3},
		{"ReadCommittedNoAbortInRange", FetchRequest{Offset: 3, Isolation: ReadCommitted}, false, 0, 1},
		{"ReadCommittedAtLSOEmpty", FetchRequest{Offset: 4, Isolation: ReadCommitted}, false, 0, 0},
		{"StrictMaxBytesNull", FetchRequest{Offset: 0, Isolation: ReadCommitted, MaxBytes: 10, StrictMaxBytes: true}, true, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := l.Fetch(tc.req)
			if (r.AbortedTransactions == nil) != tc.wantNil || len(r.AbortedTransactions) != tc.wantLen || len(r.Batches) != tc.batches {
				t.Errorf("aborted=%v (nil=%v) batches=%d; want nil=%v len=%d batches=%d",
					r.AbortedTransactions, r.AbortedTransactions == nil, len(r.Batches), tc.wantNil, tc.wantLen, tc.batches)
			}
		})
	}
	// A consumer given an empty list and one given a null list agree.
	r := l.Fetch(FetchRequest{Offset: 3, Isolation: ReadCommitted})
	for _, list := range [][]AbortedTransaction{nil, {}} {
		r.AbortedTransactions = list
		c := NewConsumer(ReadCommitted, VariantJava, 3)
		var got []Verdict
		c.Process(&r, 3, func(d Decision) bool { got = append(got, d.Verdict); return true })
		if len(got) != 1 || got[0] != Delivered {
			t.Errorf("list %#v: verdicts %v", list, got)
		}
	}
}

// TestFetchOneSegmentAndFirstBatchWhole: a fetch never spans segments, and
// the first batch is returned whole even when larger than MaxBytes (KIP-74).
func TestFetchOneSegmentAndFirstBatchWhole(t *testing.T) {
	l := newLog().plain(-1, 100).plain(-1, 1).roll().plain(-1, 1).build()
	r := l.Fetch(FetchRequest{Offset: 0, MaxBytes: 10, Isolation: ReadCommitted})
	if len(r.Batches) != 1 || r.Batches[0].Records != 100 {
		t.Fatalf("first batch: %+v", r.Batches)
	}
	r = l.Fetch(FetchRequest{Offset: 0, MaxBytes: 1 << 20})
	if len(r.Batches) != 2 || r.Segment != 0 {
		t.Fatalf("one segment: got %d batches from segment %d", len(r.Batches), r.Segment)
	}
	r = l.Fetch(FetchRequest{Offset: 50, MaxBytes: 2100})
	if len(r.Batches) != 1 || r.PartialBytes == 0 {
		t.Fatalf("partial tail: %d batches, %d partial bytes", len(r.Batches), r.PartialBytes)
	}
	if r := l.Fetch(FetchRequest{Offset: 200}); r.Err != FetchOffsetOutOfRange {
		t.Fatalf("past LEO: %v", r.Err)
	}
}

// TestAbortedCollectionStopsAtLSOEntry: the broker stops collecting after the
// first entry whose recorded LSO reaches the upper bound, and never looks at
// segments before the fetch segment.
func TestAbortedCollectionStopsAtLSOEntry(t *testing.T) {
	b := newLog().txn(p1, 1).abort(p1).roll().txn(p2, 1).abort(p2).roll().txn(p3, 1).abort(p3)
	l := b.build()
	r := l.Fetch(FetchRequest{Offset: 2, Isolation: ReadCommitted})
	// Segment 1 is read (offsets 2-3); upper bound = next segment base 4.
	// p2's entry (LSO 4 >= 4) stops the walk before p3's.
	if len(r.AbortedTransactions) != 1 || r.AbortedTransactions[0] != (AbortedTransaction{p2, 2}) {
		t.Fatalf("aborted = %v", r.AbortedTransactions)
	}
}

// TestRebuiltIndexLSO checks the lastStableOffset Kafka records in each
// entry: the first undecided transaction of another producer, else the
// offset after the marker.
func TestRebuiltIndexLSO(t *testing.T) {
	l := newLog().txn(p1, 1).txn(p2, 1).abort(p1).txn(p3, 1).abort(p3).commit(p2).build()
	want := []AbortedTxn{
		{ProducerID: p1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 1},
		{ProducerID: p3, FirstOffset: 3, LastOffset: 4, LastStableOffset: 1},
	}
	got := l.RebuiltIndex[0]
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestIndexMismatches compares a disk .txnindex with the rebuilt one.
func TestIndexMismatches(t *testing.T) {
	b := newLog().txn(p1, 1).abort(p1).txn(p2, 1).abort(p2)
	s := &b.p.Segments[0]
	s.TxnIndexOnDisk = true
	s.TxnIndex = []AbortedTxn{
		{ProducerID: p1, FirstOffset: 0, LastOffset: 1, LastStableOffset: 2}, // matches
		{ProducerID: 9, FirstOffset: 7, LastOffset: 8, LastStableOffset: 9},  // extra
	}
	l := b.build()
	kinds := map[MismatchKind]int{}
	for _, m := range l.Mismatches {
		kinds[m.Kind]++
	}
	if kinds[ExtraOnDisk] != 1 || kinds[MissingOnDisk] != 1 || kinds[FieldsDiffer] != 0 {
		t.Errorf("mismatches %+v", l.Mismatches)
	}
	// The broker serves the disk file: p2's aborted data is delivered,
	// which is what a consumer of this broker really sees.
	if got, want := letters(l, ConsumeOptions{Isolation: ReadCommitted}), "ACDC"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

// TestVariantsDifferOnHostileInput: a transaction whose listed first offset
// lies inside a batch (no broker writes that) separates the clients: Java
// activates on firstOffset <= lastOffset, librdkafka and franz-go need
// baseOffset >= firstOffset.
func TestVariantsDifferOnHostileInput(t *testing.T) {
	b := newLog().txn(p1, 4).abort(p1)
	s := &b.p.Segments[0]
	s.TxnIndexOnDisk = true
	s.TxnIndex = []AbortedTxn{{ProducerID: p1, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5}}
	l := b.build()
	want := map[Variant]string{VariantJava: "AAAAC", VariantLibrdkafka: "DDDDC", VariantFranzGo: "DDDDC"}
	for v, w := range want {
		if got := letters(l, ConsumeOptions{Isolation: ReadCommitted, Variant: v}); got != w {
			t.Errorf("%s: got %s want %s", v, got, w)
		}
	}
}

// TestReasons checks the sentences people read.
func TestReasons(t *testing.T) {
	b := newLog().roll()
	b.p.Segments = b.p.Segments[1:]
	b.p.Segments[0] = Segment{Name: segName(100), BaseOffset: 100}
	b.next = 100
	b.p.Batches = nil
	b.plain(-1, 20).txn(7, 26).abort(7)
	l := b.build()
	var reasons []string
	for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
		reasons = append(reasons, d.Reason())
	}
	want := []string{
		"delivered: non-transactional batch without a producer id",
		"aborted: producer 7 epoch 0, transaction [120,145] aborted by marker at 146, entry in segment 00000000000000000100.txnindex",
		"control: ABORT marker of producer 7 epoch 0 (coordinator epoch 0), removes the producer from the aborted set; never delivered",
	}
	if len(reasons) != len(want) {
		t.Fatalf("reasons %q", reasons)
	}
	for i := range want {
		if reasons[i] != want[i] {
			t.Errorf("reason %d:\n got %q\nwant %q", i, reasons[i], want[i])
		}
	}
}

// TestDelivered: Log.Delivered is the offsets whose decision is delivered,
// adjacent ranges merged, as the per-offset letters show them; the live
// watcher compares it with what kgo delivered from the broker's responses.
func TestDelivered(t *testing.T) {
	l := newLog().plain(-1, 2).txn(7, 3).plain(-1, 1).abort(7).txn(8, 2).commit(8).plain(-1, 2).txn(9, 1).build()
	for _, o := range []ConsumeOptions{
		{From: -1, Isolation: ReadCommitted},
		{From: 4, Isolation: ReadCommitted},
		{From: -1, Isolation: ReadUncommitted},
	} {
		var want [][2]int64
		for off, c := range []byte(letters(l, o)) {
			if c != 'D' {
				continue
			}
			if n := len(want); n > 0 && want[n-1][1]+1 == int64(off) {
				want[n-1][1]++
			} else {
				want = append(want, [2]int64{int64(off), int64(off)})
			}
		}
		if got := l.Delivered(o); !slices.Equal(got, want) || len(want) < 2 {
			t.Errorf("%+v: got %v, want %v (letters %s)", o, got, want, letters(l, o))
		}
	}
}
