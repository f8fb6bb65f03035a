package txnindex

import (
	"math"
	"testing"
)

// txnAt appends a transactional data batch of n records from pid at epoch.
func (b *logBuilder) txnAt(pid ProducerID, epoch int16, n int) *logBuilder {
	return b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid, ProducerEpoch: epoch,
		Attributes: AttrTransactional, Records: int32(n), BaseSequence: 0, CoordinatorEpoch: -1, Control: ControlNone}.Batch())
}

// TestTV2 decides transactions v2 logs (KIP-890): data at epoch E, the
// marker at E+1, the next transaction at E+1, retried markers, and the
// epoch overflow to a new producer id. Each case states which transaction
// each marker closes, the read_committed verdicts, the LSO, the rebuilt
// .txnindex (present.TestTV2EpochLabels labels their lanes).
func TestTV2(t *testing.T) {
	const top = math.MaxInt16
	type txn struct {
		pid           ProducerID
		epoch, mEpoch int16
		first, marker int64
		state         TxnState
	}
	cases := []struct {
		name    string
		log     *logBuilder
		txns    []txn
		letters string
		lso     int64
		index   []AbortedTxn
	}{{
		// 0-1 p7@0, 2 p8@5, 3 ABORT p7@1, 4 p7@1, 5 COMMIT p8@6, 6 COMMIT p7@2
		name: "bump per transaction",
		log:  newLog().txnAt(7, 0, 2).txnAt(8, 5, 1).marker(7, ControlAbort, 1).txnAt(7, 1, 1).marker(8, ControlCommit, 6).marker(7, ControlCommit, 2),
		txns: []txn{{7, 0, 1, 0, 3, TxnAborted}, {8, 5, 6, 2, 5, TxnCommitted}, {7, 1, 2, 4, 6, TxnCommitted}},
		// The abort's entry: p8's transaction from 2 was still open.
		letters: "AA D C D C C", lso: 7,
		index: []AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 3, LastStableOffset: 2}},
	}, {
		// A coordinator retrying a marker the leader already wrote gets
		// it appended again (KAFKA-19999): no transaction is open, so
		// it closes nothing, adds no entry and moves no LSO.
		name:    "retried marker",
		log:     newLog().txnAt(7, 3, 2).marker(7, ControlAbort, 4).marker(7, ControlAbort, 4).txnAt(7, 4, 1),
		txns:    []txn{{7, 3, 4, 0, 2, TxnAborted}, {7, 4, -1, 4, -1, TxnOpen}},
		letters: "AA C C P", lso: 4,
		index: []AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}},
	}, {
		// Epoch 32766 is exhausted: the coordinator bumps to 32767 for
		// the marker and completes under the next producer id at epoch
		// 0, whose transaction is open and pins the LSO.
		name:    "epoch overflow",
		log:     newLog().txnAt(7, top-2, 1).marker(7, ControlCommit, top-1).txnAt(7, top-1, 2).marker(7, ControlAbort, top).txnAt(9, 0, 1).plain(-1, 1),
		txns:    []txn{{7, top - 2, top - 1, 0, 1, TxnCommitted}, {7, top - 1, top, 2, 4, TxnAborted}, {9, 0, -1, 5, -1, TxnOpen}},
		letters: "D C AA C P P", lso: 5,
		index: []AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5}},
	}, {
		// Transactions v1: markers at the data's epoch; a fencing bump
		// (KIP-360) is not called transactions v2.
		name:    "transactions v1 for contrast",
		log:     newLog().txnAt(7, 0, 1).marker(7, ControlCommit, 0).txnAt(7, 1, 1).marker(7, ControlAbort, 1),
		txns:    []txn{{7, 0, 0, 0, 1, TxnCommitted}, {7, 1, 1, 2, 3, TxnAborted}},
		letters: "D C A C", lso: 4,
		index: []AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 3, LastStableOffset: 4}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.log.build()
			if len(l.Txns) != len(c.txns) {
				t.Fatalf("%d transactions, want %d: %+v", len(l.Txns), len(c.txns), l.Txns)
			}
			for i, w := range c.txns {
				g := &l.Txns[i]
				if g.ProducerID != w.pid || g.ProducerEpoch != w.epoch || g.MarkerEpoch != w.mEpoch || g.FirstOffset != w.first || g.MarkerOffset != w.marker || g.State != w.state {
					t.Errorf("transaction %d: producer %d epoch %d marker epoch %d, offsets %d..%d, %s; want %+v",
						i, g.ProducerID, g.ProducerEpoch, g.MarkerEpoch, g.FirstOffset, g.MarkerOffset, g.State, w)
				}
				if tv2 := w.state != TxnOpen && w.mEpoch == w.epoch+1; g.TV2() != tv2 {
					t.Errorf("transaction %d: TV2 %v, want %v", i, g.TV2(), tv2)
				}
			}
			if got := letters(l, ConsumeOptions{Isolation: ReadCommitted}); got != strip(c.letters) {
				t.Errorf("read_committed %s, want %s", got, strip(c.letters))
			}
			if l.LastStableOffset != c.lso {
				t.Errorf("LSO %d, want %d", l.LastStableOffset, c.lso)
			}
			if got := l.RebuiltIndex[0]; len(got) != len(c.index) || (len(got) > 0 && got[0] != c.index[0]) {
				t.Errorf("rebuilt index %v, want %v", got, c.index)
			}
		})
	}
}
