package diagnosis

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// RestartReport is what the next restart of the broker that wrote a
// partition directory would change, when the directory holds state that
// recovery drops: a producer snapshot at the log start (retention moved
// it there), or below it inside its segment (DeleteRecords moved it).
//
// While the broker runs, retention deletes only the snapshots below the
// new log start (ProducerStateManager.deleteSnapshotsBefore), and the
// producer state in memory keeps every open transaction (a producer with
// one never expires: ProducerStateManager.isProducerExpired). When it
// starts, ProducerStateManager.truncateAndReload deletes every snapshot at
// or below the log start. So a snapshot at the log start exists only while
// the broker has not restarted since retention moved the log start there,
// and the transactions it lists that began before the log start are the
// running broker's: they pin its LSO at the log start
// (UnifiedLog.maybeIncrementFirstUnstableOffset clamps the first unstable
// offset to it). The diagnosis reports that running state; this says what
// a restart does to it.
//
// Only a restart after an unclean shutdown forgets them: a clean one first
// writes a snapshot at the log end (UnifiedLog.close takes one), which
// lists them again and survives truncateAndReload.
type RestartReport struct {
	Snapshot       string `json:"snapshot"`        // the snapshot at the log start
	SnapshotOffset int64  `json:"snapshot_offset"` // its offset: the log start, or below it after DeleteRecords
	// LastStableOffset is the LSO the broker would report after a restart
	// that follows an unclean shutdown (replay from the log start without
	// the snapshot).
	LastStableOffset int64 `json:"last_stable_offset"`
	// Transactions are the ones the snapshot alone keeps open, the first
	// ListCap of TransactionsTotal.
	Transactions      []RestartTxn `json:"transactions"`
	TransactionsTotal int          `json:"transactions_total"`
	// Text says it in words: what the restart does, and what that means
	// for the other replicas.
	Text string `json:"text"`
}

// RestartTxn is one transaction the snapshot at the log start keeps open.
type RestartTxn struct {
	ProducerID  txnindex.ProducerID `json:"producer_id"`
	FirstOffset int64               `json:"first_offset"`
	// ReopensAt is where the replay after the restart opens it again: its
	// producer's first transactional batch in the surviving log, which
	// nothing before tells it is part of an older transaction; -1 when it
	// has none there, and the restart forgets it.
	ReopensAt int64 `json:"reopens_at"`
}

// restartReport is the RestartReport of the log, nil when the snapshot it
// was seeded from is not at the log start or keeps no transaction that
// began before it.
func (l plog) restartReport() *RestartReport {
	s := l.Snapshot
	// With remote storage the log start lies below the local segments and
	// the snapshot at the first local offset is kept on startup.
	if s == nil || s.Source != "" || s.Window || s.Offset > l.LogStartOffset || l.LogStartOffset <= 0 || l.Tiered != nil {
		return nil
	}
	first := map[int]int64{}
	r := &RestartReport{Snapshot: s.Name, SnapshotOffset: s.Offset, Transactions: []RestartTxn{}}
	for i := range l.Txns {
		t := &l.Txns[i]
		// Seeded from the snapshot, or begun in the replay below a log
		// start DeleteRecords moved: a restart replays from the log
		// start and knows neither's beginning.
		if t.State != txnindex.TxnOpen || t.FirstOffset >= l.LogStartOffset {
			continue
		}
		first[i] = -1
	}
	l.reopenAll(first)
	for i := range l.Txns {
		if at, ok := first[i]; ok {
			t := &l.Txns[i]
			r.Transactions = append(r.Transactions, RestartTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, ReopensAt: at})
		}
	}
	if len(r.Transactions) == 0 {
		return nil
	}
	r.LastStableOffset = l.lsoWithFirst(first)
	r.Transactions, r.TransactionsTotal = txnindex.CapList(r.Transactions, txnindex.ListCap)
	r.Text = r.words(l.LastStableOffset, l.LogStartOffset)
	return r
}

// reopenAll sets first[ti], for each transaction ti in it, to the offset
// of its first data batch in the log, leaving -1 where it has
// none: one pass over the batches from the log start, not one per
// transaction (a snapshot of 100,000 open producers would make that
// 100,000 passes).
func (l plog) reopenAll(first map[int]int64) {
	if len(first) == 0 {
		return
	}
	for i := l.BatchAtOrAfter(l.LogStartOffset); i < len(l.Batches); i++ {
		b := &l.Batches[i]
		if b.IsControl() || !b.HasProducerID() {
			continue
		}
		ti := l.TxnIndexOf(i)
		if at, ok := first[ti]; ok && at < 0 && b.ProducerID == l.Txns[ti].ProducerID {
			first[ti] = b.BaseOffset
		}
	}
}

// lsoWithFirst is the LSO with the first offsets of the transactions in
// first replaced (-1: the transaction is gone), by the rule of
// ProducerStateManager.firstUnstableOffset and
// UnifiedLog.maybeIncrementFirstUnstableOffset.
func (l plog) lsoWithFirst(first map[int]int64) int64 {
	fu := int64(-1)
	for i := range l.Txns {
		t := &l.Txns[i]
		if t.State != txnindex.TxnOpen && t.MarkerOffset < l.HighWatermark {
			continue
		}
		f := t.FirstOffset
		if v, ok := first[i]; ok {
			f = v
		}
		if f >= 0 && (fu < 0 || f < fu) {
			fu = f
		}
	}
	if fu >= 0 && max(fu, l.LSOFloor()) < l.HighWatermark {
		return max(fu, l.LSOFloor())
	}
	return l.HighWatermark
}

func (r *RestartReport) words(lso, logStart int64) string {
	var who []string
	forgets := 0
	for _, t := range r.Transactions {
		w := fmt.Sprintf("producer %d's transaction from offset %d", t.ProducerID, t.FirstOffset)
		if t.ReopensAt >= 0 {
			w += fmt.Sprintf(" (replay opens it again at offset %d, its first surviving batch)", t.ReopensAt)
		} else {
			forgets++
		}
		who = append(who, w)
	}
	var sb strings.Builder
	if r.SnapshotOffset == logStart {
		fmt.Fprintf(&sb, "%s lies at the log start %d: the broker deletes a snapshot at or below the log start when it starts (ProducerStateManager.truncateAndReload), so the broker that wrote it has not restarted since retention moved the log start there. ",
			r.Snapshot, r.SnapshotOffset)
	} else {
		fmt.Fprintf(&sb, "%s lies below the log start %d, inside its segment: DeleteRecords moved the log start there and deleted no file (UnifiedLog.maybeIncrementLogStartOffset), and the broker deletes a snapshot at or below the log start when it starts (ProducerStateManager.truncateAndReload), so the broker that wrote it has not restarted since. ",
			r.Snapshot, logStart)
	}
	if n := txnindex.More(r.Transactions, r.TransactionsTotal); n > 0 {
		who = append(who, txnindex.Plural(n, "more transaction", "more transactions"))
	}
	fmt.Fprintf(&sb, "It holds %s in memory, and the LSO %d above is the one it reports to every read_committed consumer. ", strings.Join(who, " and "), lso)
	fmt.Fprintf(&sb, "If it restarts after an unclean shutdown (a crash, a lost host), it deletes the snapshot and ")
	switch {
	case forgets == len(r.Transactions):
		sb.WriteString("forgets the transaction")
	case forgets > 0:
		sb.WriteString("forgets some of them")
	default:
		sb.WriteString("forgets where they began")
	}
	if len(r.Transactions) > 1 && forgets == len(r.Transactions) {
		sb.WriteString("s")
	}
	fmt.Fprintf(&sb, " without writing a marker: the LSO becomes %d. A clean shutdown first writes a snapshot at the log end that lists the open transactions again (UnifiedLog.close), and the LSO stays. ", r.LastStableOffset)
	sb.WriteString("Each replica holds its own producer state: a follower that restarted uncleanly since retention reached this offset reports the later LSO if it becomes leader, one that did not reports this one, so the LSO consumers meet can change with the leader. Only an abort writes a marker that every replica applies.")
	return sb.String()
}
