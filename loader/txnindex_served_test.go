package loader

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestTxnIndexServedFollowsTheIndexFile: which aborted transactions the
// broker lists for a segment follows LogLoader. A segment whose .index
// exists is loaded as it is (LogSegment.sanityCheck), its .txnindex too,
// and a .txnindex that does not exist lists nothing (TransactionIndex is
// created with the first aborted transaction, never rebuilt but by a
// recovery); a segment without a .index is recovered, its .txnindex
// rebuilt from the log whatever the file says. Producer 7's transaction
// at 0-1 is aborted by the marker at 2.
func TestTxnIndexServedFollowsTheIndexFile(t *testing.T) {
	listed := []txnindex.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}}
	cases := []struct {
		name           string
		index, time    bool
		txn            []txnindex.AbortedTxn // nil: no file
		raw            []byte                // the .txnindex's bytes, when not txn's
		onDisk, absent bool
		letters        string // Java read_committed, offsets 0-3
		unlisted       int
		refused        bool  // an entry's version is one Kafka refuses,
		refusedAt      int64 // at this byte
	}{
		{name: "index and txnindex listing it", index: true, time: true, txn: listed, onDisk: true, letters: "AACD"},
		{name: "index and an empty txnindex", index: true, time: true, txn: []txnindex.AbortedTxn{}, onDisk: true, letters: "DDCD", unlisted: 1},
		{name: "index without txnindex", index: true, time: true, onDisk: true, absent: true, letters: "DDCD", unlisted: 1},
		{name: "timeindex alone: recovered", time: true, letters: "AACD"},
		{name: "txnindex without index: recovered, rebuilt", txn: []txnindex.AbortedTxn{}, letters: "AACD"},
		{name: "log alone: recovered", letters: "AACD"},
		// TransactionIndex.sanityCheck: an entry whose marker lies
		// below the segment's base is corrupt; the segment is recovered.
		{name: "txnindex entry below the base: recovered", index: true, txn: []txnindex.AbortedTxn{{ProducerID: 9, FirstOffset: -5, LastOffset: -2, LastStableOffset: 0}}, letters: "AACD"},
		// TransactionIndex's iterator throws a KafkaException for an
		// entry whose first byte is above 0, which LogLoader does not
		// catch: no broker starts with the file. The decisions are the
		// recovered segment's, the only one a broker serves.
		{name: "txnindex entry of a version Kafka refuses: no broker starts", index: true, raw: withVersion(listed, 0, 1), letters: "AACD", refused: true},
		{name: "refused version after an entry Kafka reads", index: true, raw: withVersion(append(listed, listed...), 1, 2), letters: "AACD", refused: true, refusedAt: txnindex.AbortedTxnSize},
		{name: "version 0x0001: Kafka reads the first byte, 0", index: true, raw: withVersion16(listed, 0, 1), onDisk: true, letters: "AACD"},
		{name: "refused version without index: recovered", raw: withVersion(listed, 0, 1), letters: "AACD"},
		{name: "entry below the base before a refused one: corrupt, recovered", index: true,
			raw: withVersion([]txnindex.AbortedTxn{{ProducerID: 9, FirstOffset: -5, LastOffset: -2, LastStableOffset: 0}, listed[0]}, 1, 1), letters: "AACD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "orders-0")
			name := fmt.Sprintf("%020d", 0)
			writeFile(t, filepath.Join(dir, name+".log"), concat(dataBatch(t, 0, 7, true, 2), marker(t, 2, 7, false, 1), dataBatch(t, 3, -1, false, 1)))
			if c.index {
				writeFile(t, filepath.Join(dir, name+".index"), indexFile(0))
			}
			if c.time {
				writeFile(t, filepath.Join(dir, name+".timeindex"), nil)
			}
			switch {
			case c.raw != nil:
				writeFile(t, filepath.Join(dir, name+".txnindex"), c.raw)
			case c.txn != nil:
				writeFile(t, filepath.Join(dir, name+".txnindex"), txnindex.EncodeTxnIndex(c.txn))
			}
			if !c.refused {
				c.refusedAt = -1
			}
			p, err := OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			l := p.Build()
			if s := l.Segments[0]; s.TxnIndexOnDisk != c.onDisk || s.TxnIndexAbsent != c.absent {
				t.Errorf("on disk %v, absent %v; want %v, %v", s.TxnIndexOnDisk, s.TxnIndexAbsent, c.onDisk, c.absent)
			}
			at := int64(-1)
			if r := l.Segments[0].TxnIndexRejected; r != nil {
				at = r.Position
			}
			if at != c.refusedAt {
				t.Errorf("refused entry at byte %d, want %d", at, c.refusedAt)
			}
			got := ""
			for d := range l.Decisions(txnindex.ConsumeOptions{Isolation: txnindex.ReadCommitted}) {
				for range d.Offsets() {
					got += map[txnindex.Verdict]string{txnindex.Delivered: "D", txnindex.Aborted: "A", txnindex.Control: "C"}[d.Verdict]
				}
			}
			if got != c.letters {
				t.Errorf("read_committed %s, want %s", got, c.letters)
			}
			n := 0
			if u := l.UnlistedAborted(); u != nil {
				n = u.Transactions
			}
			if n != c.unlisted {
				t.Errorf("%d unlisted aborted transactions, want %d", n, c.unlisted)
			}
		})
	}
}

// withVersion encodes es with entry i's version byte (Kafka reads the
// int16's first byte) set to v.
func withVersion(es []txnindex.AbortedTxn, i int, v byte) []byte {
	b := txnindex.EncodeTxnIndex(es)
	b[i*txnindex.AbortedTxnSize] = v
	return b
}

// withVersion16 encodes es with entry i's int16 version set to v.
func withVersion16(es []txnindex.AbortedTxn, i int, v int16) []byte {
	es = append([]txnindex.AbortedTxn(nil), es...)
	es[i].Version = v
	return txnindex.EncodeTxnIndex(es)
}
