package loader

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// emptiedBatch is a transactional data batch the log cleaner kept as an
// empty header over offsets base..last (recordsCount 0): the producer's
// last data batch, kept for its producer state.
func emptiedBatch(t testing.TB, base, last, pid int64) []byte {
	rb := kmsg.RecordBatch{FirstOffset: base, LastOffsetDelta: int32(last - base), PartitionLeaderEpoch: 3, FirstTimestamp: 1000,
		MaxTimestamp: 1000, ProducerID: pid, ProducerEpoch: 1, FirstSequence: 0, Attributes: txnindex.AttrTransactional}
	return batch(t, rb, codecNone, nil)
}

// TestCompactionMismatchesExplained: on logs shaped by the log cleaner and
// by retention, every difference between a segment's .txnindex on disk and
// the one rebuilt from the surviving batches carries its explanation, and
// the cleaner is credited only below cleaner-offset-checkpoint when the
// partition has a line there. The logs are kmsg-encoded segments with their
// .index and .txnindex files and the log-dir checkpoints, read by
// OpenPartition.
func TestCompactionMismatchesExplained(t *testing.T) {
	type seg struct {
		base    int64
		batches [][]byte
		txn     []txnindex.AbortedTxn // nil: no .txnindex file (none on disk: the broker creates it lazily)
	}
	entry := func(pid, first, last, lso int64) []txnindex.AbortedTxn {
		return []txnindex.AbortedTxn{{ProducerID: txnindex.ProducerID(pid), FirstOffset: first, LastOffset: last, LastStableOffset: lso}}
	}
	cases := []struct {
		name     string
		segs     func(t *testing.T) []seg
		cleaner  int64 // cleaner-offset-checkpoint line; -1 none
		logStart int64 // log-start-offset-checkpoint line; -1 none
		recovery int64 // recovery-point-offset-checkpoint line; 0 none
		unlisted int   // aborted transactions no entry lists (Log.UnlistedAborted)
		kind     txnindex.MismatchKind
		explain  txnindex.MismatchExplanation
		note     string
	}{{
		// Segment 0 was cleaned: p7's aborted data at 2-4 is gone; its
		// ABORT marker (segment 5, dirty) and entry remain.
		name: "cleaner removed the aborted data",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 2)}, nil},
				{5, [][]byte{marker(t, 5, 7, false, 1), dataBatch(t, 6, -1, false, 1)}, entry(7, 2, 5, 6)}}
		},
		cleaner: 5, logStart: -1, kind: txnindex.ExtraOnDisk, explain: txnindex.ExplainCleanerRemovedData,
		note: "the cleaner removed the aborted data (offsets 2–4) (below the cleaner checkpoint 5)",
	}, {
		name: "cleaner removed the aborted data, no checkpoint line",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 2)}, nil},
				{5, [][]byte{marker(t, 5, 7, false, 1), dataBatch(t, 6, -1, false, 1)}, entry(7, 2, 5, 6)}}
		},
		cleaner: -1, logStart: -1, kind: txnindex.ExtraOnDisk, explain: txnindex.ExplainCleanerRemovedData,
		note: "no cleaner-offset-checkpoint line for this partition",
	}, {
		// The same loss above the cleaner's checkpoint is not its work.
		name: "data missing above the cleaner checkpoint",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 2)}, nil},
				{5, [][]byte{marker(t, 5, 7, false, 1), dataBatch(t, 6, -1, false, 1)}, entry(7, 2, 5, 6)}}
		},
		cleaner: 2, logStart: -1, kind: txnindex.ExtraOnDisk, explain: txnindex.ExplainUnknown,
		note: "at or above the cleaner checkpoint 2",
	}, {
		// The cleaner removed 2-3 and kept p7's last data batch, 4, as
		// an empty header: the rebuild begins the transaction there.
		name: "emptied batch kept for producer state",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 2), emptiedBatch(t, 4, 4, 7)}, nil},
				{5, [][]byte{marker(t, 5, 7, false, 1), dataBatch(t, 6, -1, false, 1)}, entry(7, 2, 5, 6)}}
		},
		cleaner: 5, logStart: -1, kind: txnindex.FieldsDiffer, explain: txnindex.ExplainEmptiedBatch,
		note: "kept the batch at 4 as an empty header",
	}, {
		// The transaction's first batches were in the cleaned segment,
		// its later ones in the dirty one.
		name: "cleaner removed the first batches",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 2)}, nil},
				{4, [][]byte{dataBatch(t, 4, 7, true, 2), marker(t, 6, 7, false, 1)}, entry(7, 2, 6, 7)}}
		},
		cleaner: 4, logStart: -1, kind: txnindex.FieldsDiffer, explain: txnindex.ExplainCleanerRemovedData,
		note: "the cleaner removed the transaction's first batches (offsets 2–3) (below the cleaner checkpoint 4)",
	}, {
		// p8's transaction began at 1 and held the LSO when p7 aborted
		// at 4; the cleaner compacted offset 1 away, so the rebuild sees
		// p8 begin at 5, after the marker.
		name: "cleaner moved the LSO holder",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 1)}, nil},
				{2, [][]byte{dataBatch(t, 2, 7, true, 2), marker(t, 4, 7, false, 1), dataBatch(t, 5, 8, true, 1), marker(t, 6, 8, true, 1)}, entry(7, 2, 4, 1)}}
		},
		cleaner: 2, logStart: -1, kind: txnindex.FieldsDiffer, explain: txnindex.ExplainCleanerShiftedLSO,
		note: "began at 1; the cleaner removed that batch (below the cleaner checkpoint 2), so the rebuild sees it begin later and records 5",
	}, {
		// Retention deleted segment 0 with the start of p7's
		// transaction; the marker at 10 closes nothing that survives.
		name: "retention removed the segment (marker survives)",
		segs: func(t *testing.T) []seg {
			return []seg{{10, [][]byte{marker(t, 10, 7, false, 1), dataBatch(t, 11, -1, false, 1)}, entry(7, 5, 10, 11)}}
		},
		cleaner: -1, logStart: 10, kind: txnindex.ExtraOnDisk, explain: txnindex.ExplainRetention,
		note: "the transaction began at 5, before the log start 10",
	}, {
		name: "retention removed the segment (data survives)",
		segs: func(t *testing.T) []seg {
			return []seg{{10, [][]byte{dataBatch(t, 10, 7, true, 1), marker(t, 11, 7, false, 1)}, entry(7, 5, 11, 12)}}
		},
		cleaner: -1, logStart: 10, kind: txnindex.FieldsDiffer, explain: txnindex.ExplainRetention,
		note: "the transaction began at 5, before the first batch still in the log (10)",
	}, {
		// An index file without the entry: the broker appends the
		// marker before the index entry.
		name: "index behind the log",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, 7, true, 2), marker(t, 2, 7, false, 1)}, []txnindex.AbortedTxn{}}}
		},
		cleaner: -1, logStart: -1, kind: txnindex.MissingOnDisk, explain: txnindex.ExplainRecovery,
		note:     "so a copy taken between the two lacks it; a restart after an unclean shutdown rebuilds it only if the segment holds or follows the recovery point (this partition has no recovery-point-offset-checkpoint line)",
		unlisted: 1,
	}, {
		// The same in the segment holding the recovery point: the
		// recovery after an unclean shutdown rebuilds its index.
		name: "index behind the log, segment holding the recovery point",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, 7, true, 2), marker(t, 2, 7, false, 1)}, []txnindex.AbortedTxn{}}}
		},
		cleaner: -1, logStart: -1, recovery: 3, kind: txnindex.MissingOnDisk, explain: txnindex.ExplainRecovery,
		note: "a restart after an unclean shutdown rebuilds it (the segment holds or follows the recovery point 3); a clean one does not", unlisted: 1,
	}, {
		// A segment wholly before the recovery point is never
		// recovered (LogLoader.recoverLog from the floor segment of the
		// recovery point): the entry stays lost.
		name: "entry lost before the recovery point",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, 7, true, 2), marker(t, 2, 7, false, 1)}, []txnindex.AbortedTxn{}},
				{3, [][]byte{dataBatch(t, 3, -1, false, 1)}, nil}}
		},
		cleaner: -1, logStart: -1, recovery: 4, kind: txnindex.MissingOnDisk, explain: txnindex.ExplainEntryLost,
		note: "no restart rebuilds it: the segment lies before the recovery point 4", unlisted: 1,
	}, {
		// No .txnindex file beside the .index: LogSegment.sanityCheck
		// passes, nothing rebuilds it, the broker lists nothing.
		name: "txnindex file missing",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, 7, true, 2), marker(t, 2, 7, false, 1)}, nil},
				{3, [][]byte{dataBatch(t, 3, -1, false, 1)}, nil}}
		},
		cleaner: -1, logStart: -1, recovery: 4, kind: txnindex.MissingOnDisk, explain: txnindex.ExplainIndexFileMissing,
		note: "there is no 00000000000000000000.txnindex, though the segment's .index is there: the broker lists none of the segment's aborted transactions, so read_committed consumers receive their records; no restart rebuilds it", unlisted: 1,
	}, {
		name: "marker not in the log",
		segs: func(t *testing.T) []seg {
			return []seg{{0, [][]byte{dataBatch(t, 0, -1, false, 2), dataBatch(t, 4, -1, false, 1)}, entry(7, 0, 3, 4)}}
		},
		cleaner: -1, logStart: -1, kind: txnindex.ExtraOnDisk, explain: txnindex.ExplainMarkerGone,
		note: "its ABORT marker at 3 is not in the log",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "compacted-0")
			for _, s := range c.segs(t) {
				name := fmt.Sprintf("%020d", s.base)
				writeFile(t, filepath.Join(dir, name+".log"), concat(s.batches...))
				writeFile(t, filepath.Join(dir, name+".index"), indexFile(s.base))
				if s.txn != nil {
					writeFile(t, filepath.Join(dir, name+".txnindex"), txnindex.EncodeTxnIndex(s.txn))
				}
			}
			line := func(v int64) []byte { return []byte(fmt.Sprintf("0\n1\ncompacted 0 %d\n", v)) }
			if c.cleaner >= 0 {
				writeFile(t, filepath.Join(root, CleanerOffsetCheckpoint), line(c.cleaner))
			}
			if c.logStart >= 0 {
				writeFile(t, filepath.Join(root, LogStartOffsetCheckpoint), line(c.logStart))
			}
			if c.recovery > 0 {
				writeFile(t, filepath.Join(root, RecoveryPointOffsetCheckpoint), line(c.recovery))
			}
			p, err := OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Damage) != 0 {
				t.Fatalf("damage %v", p.Damage)
			}
			l := p.Build()
			if l.CleanerOffsetKnown != (c.cleaner >= 0) || (c.cleaner >= 0 && l.CleanerOffset != c.cleaner) {
				t.Errorf("cleaner offset %d known %v, want %d", l.CleanerOffset, l.CleanerOffsetKnown, c.cleaner)
			}
			if len(l.Mismatches) != 1 {
				t.Fatalf("%d mismatches, want 1: %+v", len(l.Mismatches), l.Mismatches)
			}
			m := l.Mismatches[0]
			if m.Kind != c.kind || m.Explanation != c.explain || !strings.Contains(m.Note, c.note) {
				t.Errorf("%s, %s: %q\nwant %s, %s: …%q…", m.Kind, m.Explanation, m.Note, c.kind, c.explain, c.note)
			}
			got := 0
			if u := l.UnlistedAborted(); u != nil {
				got = u.Transactions
			}
			if got != c.unlisted {
				t.Errorf("%d unlisted aborted transactions, want %d", got, c.unlisted)
			}
			if l.RecoveryPointKnown != (c.recovery > 0) || c.recovery > 0 && l.RecoveryPoint != c.recovery {
				t.Errorf("recovery point %d known %v, want %d", l.RecoveryPoint, l.RecoveryPointKnown, c.recovery)
			}
		})
	}
}
