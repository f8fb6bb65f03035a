package txnindex

import "fmt"

// SnapshotInfo is the producer-state .snapshot a partition's replay was
// seeded from, the way broker recovery uses it: ProducerStateManager
// .loadFromSnapshot loads every entry of the newest snapshot (dropping only
// producers with no ongoing transaction idle past producer.id.expiration.ms,
// so a transaction's entry is never dropped), puts each entry with a
// currentTxnFirstOffset into ongoingTxns, and the log is then replayed from
// the snapshot's offset. The first offset, last write time, epoch and
// coordinator epoch of a transaction that began before the log start exist
// nowhere else once retention deleted its segment.
type SnapshotInfo struct {
	Name      string // the file name, e.g. 00000000000000000620.snapshot
	Offset    int64  // the exclusive end offset it covers
	Producers map[ProducerID]SnapshotProducer
	// Source, when set, names where the entries come from instead of
	// "producer snapshot <Name>": live mode reads the leader's producer
	// state with DescribeProducers, whose answer is the ProducerStateEntry
	// a .snapshot persists (UnifiedLog.activeProducers: epoch,
	// lastTimestamp, coordinatorEpoch, currentTxnFirstOffset).
	Source string
	// Window: the batches replayed start where a live window began, above
	// the log start, so what lies before them was not read rather than
	// deleted by retention.
	Window bool
}

// Label names the evidence in a sentence: "producer snapshot <Name>", or
// Source.
func (s *SnapshotInfo) Label() string {
	if s.Source != "" {
		return s.Source
	}
	return "producer snapshot " + s.Name
}

// SnapshotProducer is one producer's entry of a snapshot.
type SnapshotProducer struct {
	Epoch                 int16
	LastOffset            int64
	Timestamp             int64 // the producer's last write time (ms)
	CoordinatorEpoch      int32 // of the producer's last marker
	CurrentTxnFirstOffset int64 // -1 when no transaction is open
}

// applySnapshot completes the seeded transactions with what the snapshot
// knows and replay cannot: the last write time (the snapshot's Timestamp,
// unless a later batch of the transaction survives, which ProducerStateEntry
// .update would take) and keeps the snapshot for the coordinator epochs.
func (l *Log) applySnapshot(p *Partition) {
	l.Snapshot = p.Snapshot
	if len(p.Ongoing) == 0 {
		return
	}
	ts := make(map[ProducerID]int64, len(p.Ongoing))
	for _, s := range p.Ongoing {
		if s.LastTimestamp > 0 {
			ts[s.ProducerID] = s.LastTimestamp
		}
	}
	for i := range l.Txns {
		t := &l.Txns[i]
		if v, ok := ts[t.ProducerID]; t.Seeded && ok && v > t.LastTimestamp {
			t.LastTimestamp = v
		}
	}
}

// CoordinatorEpochEvidence is the coordinator epoch an explicit abort of
// pid's transaction must carry, and where it comes from. The broker fences
// a marker whose coordinator epoch is below the producer's current one
// (ProducerAppendInfo.appendEndTxnMarker: TransactionCoordinatorFenced), so
// it is the largest known: the snapshot entry's and every marker's of that
// producer in the log. With neither, kafka-transactions.sh's 0.
func (l *Log) CoordinatorEpochEvidence(pid ProducerID) (int32, string) {
	ce, src := int32(-1), ""
	snap := "no producer snapshot was read"
	if s := l.Snapshot; s != nil {
		e, ok := s.Producers[pid]
		switch {
		case !ok:
			snap = "no entry for it in " + s.Label()
		case e.CoordinatorEpoch < 0:
			// -1 until a marker of the producer's lands: the
			// broker's entry starts so (ProducerStateEntry.empty).
			snap = "its entry in " + s.Label() + " has none (-1: no marker of it yet)"
		default:
			ce, src = e.CoordinatorEpoch, s.Label()
		}
	}
	// The first of the producer's markers with the largest epoch, as
	// Build's replay found it (a walk of the batches in offset order).
	if m, ok := l.markerCE[pid]; ok && m[0] > ce {
		b := &l.Batches[m[1]]
		ce, src = m[0], fmt.Sprintf("%s marker at offset %d", b.Control(), b.BaseOffset)
	}
	if ce < 0 {
		return 0, "none: no marker of this producer in the log, and " + snap + "; 0, as kafka-transactions.sh uses"
	}
	return ce, src
}

// LSOHolder is the transaction that holds the LSO below the high
// watermark: the one whose first offset, clamped to the log start as
// UnifiedLog.maybeIncrementFirstUnstableOffset clamps it, is the LSO,
// whether still open or decided with its marker at or above the high
// watermark (ProducerStateManager keeps such a transaction in
// unreplicatedTxns until the high watermark passes its marker). nil when
// the LSO is the high watermark.
func (l *Log) LSOHolder() *Txn {
	if l.LastStableOffset >= l.HighWatermark {
		return nil
	}
	var best *Txn
	for i := range l.Txns {
		t := &l.Txns[i]
		if t.State != TxnOpen && t.MarkerOffset < l.HighWatermark {
			continue
		}
		if max(t.FirstOffset, l.LSOFloor()) == l.LastStableOffset && (best == nil || t.FirstOffset < best.FirstOffset) {
			best = t
		}
	}
	return best
}
