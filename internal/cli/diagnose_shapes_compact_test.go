package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// compactedShapes are the rows of TestDiagnoseProductionShapes for
// compacted topics: the log cleaner's work (records removed inside
// batches, batches removed inside a segment, empty headers, delete
// horizons, .txnindex entries kept or dropped with their markers) as
// Cleaner.cleanInto and CleanedTransactionMetadata leave it. A transaction
// the replay of what survives leaves open, but which the cleaner proves
// decided, is never called open or hanging; one above what the cleaner
// reached still is.
func compactedShapes(nowMs int64) []shapeCase {
	old := nowMs - 30*24*3600*1000 // a month: past any transaction timeout
	recent := nowMs - 60_000
	abortEntry := func(pid, first, last, lso int64) []txnindex.AbortedTxn {
		return []txnindex.AbortedTxn{{ProducerID: txnindex.ProducerID(pid), FirstOffset: first, LastOffset: last, LastStableOffset: lso}}
	}
	return []shapeCase{
		{
			// The cleaner discarded producer 7's aborted data (2-4,
			// below its checkpoint 5) and keeps the ABORT marker at 5
			// with its .txnindex entry until a round finds no batch of
			// the transaction: the rebuild sees a marker that closes
			// nothing, and says why.
			name: "CompactedAbortedDataRemovedByTheCleaner",
			dir: func(t *testing.T) string {
				return testfixture.WriteSegsDir(t, "orders", 0, 7, 5, []testfixture.Seg{
					{Batches: []testfixture.Batch{{Base: 0, PID: -1, Ctrl: -1, N: 2, TS: recent}}},
					{Batches: []testfixture.Batch{{Base: 5, PID: 7, Epoch: 1, Txn: true, Ctrl: 0, TS: recent, Coord: 1},
						{Base: 6, PID: -1, Ctrl: -1, N: 1, TS: recent}}, Txn: abortEntry(7, 2, 5, 6)},
				})
			},
			code: exitOK,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				if p.PinnedBy != nil || p.LastStableOffset != 7 || len(p.OpenTransactions) != 0 {
					t.Errorf("LSO %d pinned %+v open %+v", p.LastStableOffset, p.PinnedBy, p.OpenTransactions)
				}
				if c := p.Compaction; c == nil || !c.Compacted || c.CleanerCheckpoint == nil || *c.CleanerCheckpoint != 5 || c.CleanedBelow != 5 {
					t.Errorf("compaction %+v", c)
				}
				if len(p.Mismatches) != 1 || p.Mismatches[0].Kind != "extra_on_disk" || p.Mismatches[0].Explanation != "cleaner_removed_aborted_data" ||
					p.Mismatches[0].Segment != "00000000000000000005.txnindex" {
					t.Errorf("mismatches %+v", p.Mismatches)
				}
			},
			text: []string{"clear: no open transaction", "compacted: the log cleaner has worked on this partition (cleanup.policy includes compact)",
				"cleaner-offset-checkpoint has a line for the partition: the cleaner has cleaned below offset 5",
				"00000000000000000005.txnindex has an entry the log does not imply (version: 0 producerId: 7 firstOffset: 2 lastOffset: 5 lastStableOffset: 6): the cleaner removed the aborted data (offsets 2–4)"},
			never: []string{"STUCK", "hanging", "open transaction 1"},
		},
		{
			// Producer 9's data at 5-6 survives, its marker does not:
			// an ABORT whose .txnindex entry was missing is removed
			// once its delete horizon passes while its data is kept
			// (CleanedTransactionMetadata.onControlBatchRead). The
			// replay leaves it open for a month, but the cleaner
			// cleaned below 20 and never cleans past the LSO: the
			// broker had decided it. Around it the cleaner's other
			// marks: records missing inside batches, a gap inside the
			// segment, a marker kept as an empty control batch.
			name: "CompactedMarkerRemovedAfterDeleteRetention",
			dir: func(t *testing.T) string {
				return testfixture.WriteSegsDir(t, "orders", 0, 40, 20, []testfixture.Seg{
					{Batches: []testfixture.Batch{
						{Base: 0, PID: -1, Ctrl: -1, N: 3, Span: 5, TS: old},
						{Base: 5, PID: 9, Epoch: 1, Txn: true, Ctrl: -1, N: 2, TS: old},
						{Base: 7, PID: -1, Ctrl: -1, N: 1, Span: 3, TS: old},
						{Base: 12, PID: 11, Epoch: 0, Txn: true, Ctrl: 0, Emptied: true, TS: old, Horizon: old + 1000},
					}},
					{Batches: []testfixture.Batch{{Base: 20, PID: -1, Ctrl: -1, N: 20, TS: recent}}},
				})
			},
			code: exitOK,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				if p.PinnedBy != nil || p.LastStableOffset != 40 || len(p.OpenTransactions) != 0 {
					t.Fatalf("LSO %d pinned %+v open %+v", p.LastStableOffset, p.PinnedBy, p.OpenTransactions)
				}
				if len(p.Compacted) != 1 || p.Compacted[0].ProducerID != 9 || p.Compacted[0].FirstOffset != 5 ||
					p.Compacted[0].State != "decided_marker_removed" || p.Compacted[0].PinsLSO ||
					!strings.Contains(p.Compacted[0].Reason, "cleaner-offset-checkpoint 20") {
					t.Errorf("compacted transactions %+v", p.Compacted)
				}
				c := p.Compaction
				if c == nil || c.CleanedBelow != 20 || len(c.Evidence) != 5 {
					t.Fatalf("compaction %+v", c)
				}
				for i, want := range []string{"cleaner-offset-checkpoint", "2 batches with 4 offsets missing inside them", "1 gap of 2 offsets",
					"1 marker with no record left", "1 batch carrying a delete horizon"} {
					if !strings.HasPrefix(c.Evidence[i], want) && !strings.Contains(c.Evidence[i], want) {
						t.Errorf("evidence %d: %q lacks %q", i, c.Evidence[i], want)
					}
				}
			},
			text: []string{"clear: no open transaction",
				"decided, marker removed by the cleaner, transaction 1: producer 9 epoch 1, offsets 5-6",
				"    the replay of the surviving batches finds no marker for it, but the broker decided it: the log cleaner has cleaned up to offset 19 (cleaner-offset-checkpoint 20)",
				"it does not hold the LSO and there is nothing to abort"},
			never: []string{"STUCK", "hanging", "expired", "abort --topic", "open transaction 1"},
		},
		{
			// No cleaner checkpoint and no mark of the cleaner past
			// producer 9's start, but the .txnindex records its ABORT
			// at offset 6, a marker the log no longer holds.
			name: "TxnIndexEntryWhoseMarkerTheCleanerRemoved",
			dir: func(t *testing.T) string {
				return testfixture.WriteSegsDir(t, "orders", 0, 20, -1, []testfixture.Seg{
					{Batches: []testfixture.Batch{
						{Base: 0, PID: -1, Ctrl: -1, N: 2, TS: old},
						{Base: 2, PID: 9, Epoch: 1, Txn: true, Ctrl: -1, N: 2, TS: old},
						{Base: 4, PID: -1, Ctrl: -1, N: 2, TS: old},
					}, Txn: abortEntry(9, 2, 6, 2)},
					{Batches: []testfixture.Batch{{Base: 7, PID: -1, Ctrl: -1, N: 13, TS: recent}}},
				})
			},
			code: exitOK,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				if p.PinnedBy != nil || p.LastStableOffset != 20 || len(p.Compacted) != 1 ||
					!strings.Contains(p.Compacted[0].Reason, "00000000000000000000.txnindex records its ABORT: first offset 2, marker at offset 6") {
					t.Errorf("LSO %d pinned %+v compacted %+v", p.LastStableOffset, p.PinnedBy, p.Compacted)
				}
				if len(p.Mismatches) != 1 || p.Mismatches[0].Explanation != "marker_not_in_log" {
					t.Errorf("mismatches %+v", p.Mismatches)
				}
			},
			text:  []string{"decided, marker removed by the cleaner, transaction 1: producer 9 epoch 1, offsets 2-3", "00000000000000000000.txnindex has an entry the log does not imply", "its ABORT marker at 6 is not in the log"},
			never: []string{"STUCK", "hanging"},
		},
		{
			// The topic is compacted (checkpoint 10, records missing in
			// the first batch), but producer 42's transaction began at
			// 12, where the cleaner has not been: it still hangs.
			name: "CompactedTopicHangingAboveTheCleanerCheckpoint",
			dir: func(t *testing.T) string {
				return testfixture.WriteSegsDir(t, "orders", 0, 30, 10, []testfixture.Seg{
					{Batches: []testfixture.Batch{{Base: 0, PID: -1, Ctrl: -1, N: 3, Span: 5, TS: old}, {Base: 5, PID: -1, Ctrl: -1, N: 5, TS: old}}},
					{Batches: []testfixture.Batch{{Base: 10, PID: -1, Ctrl: -1, N: 2, TS: old}, {Base: 12, PID: 42, Epoch: 3, Txn: true, Ctrl: -1, N: 2, TS: old},
						{Base: 14, PID: -1, Ctrl: -1, N: 16, TS: recent}}},
				})
			},
			code: exitHanging,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				if b := p.PinnedBy; b == nil || b.ProducerID != 42 || b.FirstOffset != 12 || b.State != "late" || p.LastStableOffset != 12 {
					t.Errorf("LSO %d pinned %+v", p.LastStableOffset, b)
				}
				if c := p.Compaction; c == nil || c.CleanedBelow != 10 || len(p.Compacted) != 0 {
					t.Errorf("compaction %+v, compacted %+v", c, p.Compacted)
				}
			},
			text:  []string{"pinned by producer 42 epoch 3's transaction from offset 12 (late; hanging not confirmed)", "compacted: the log cleaner has worked", "--start-offset 12"},
			never: []string{"decided_marker_removed"},
		},
	}
}

// exitStatusShapes complete the table's exit statuses: 0 for a clear
// partition and for one held by a transaction that ends without an
// operator (open within its timeout), 1 for an input that cannot be read
// (the error on stderr names it). 3 (hanging) and the decided-unreplicated
// 0 are rows above; 2 (bad usage) is TestUsage's.
func exitStatusShapes(recent int64) []shapeCase {
	return []shapeCase{
		{
			name: "ClearPartitionExitsZero",
			dir: func(t *testing.T) string {
				return testfixture.WriteShapeDir(t, "orders", 0, 6, []testfixture.Batch{
					{Base: 0, PID: 8, Epoch: 1, Txn: true, Ctrl: -1, N: 3, TS: recent},
					{Base: 3, PID: 8, Epoch: 1, Txn: true, Ctrl: 1, TS: recent, Coord: 1},
					{Base: 4, PID: -1, Ctrl: -1, N: 2, TS: recent},
				}, 0, nil)
			},
			code: exitOK,
			check: func(t *testing.T, d diagJSON) {
				if p := d.Partitions[0]; p.PinnedBy != nil || p.LastStableOffset != 6 || p.Compaction != nil || len(p.Mismatches) != 0 {
					t.Errorf("%+v", p)
				}
			},
			text:  []string{"clear: no open transaction; read_committed consumers can read to the high watermark"},
			never: []string{"STUCK", "compacted"},
		},
		{
			// Held, but by a transaction within transaction.timeout.ms:
			// its coordinator ends it; no alert.
			name: "OpenWithinTimeoutExitsZero",
			dir: func(t *testing.T) string {
				return testfixture.WriteShapeDir(t, "orders", 0, 6, []testfixture.Batch{
					{Base: 0, PID: -1, Ctrl: -1, N: 3, TS: recent},
					{Base: 3, PID: 8, Epoch: 1, Txn: true, Ctrl: -1, N: 3, TS: recent + 50_000},
				}, 0, nil)
			},
			code: exitOK,
			check: func(t *testing.T, d diagJSON) {
				if b := d.Partitions[0].PinnedBy; b == nil || b.State != "open" || b.FirstOffset != 3 {
					t.Errorf("pinned by %+v", b)
				}
			},
			text: []string{"STUCK: the LSO has been held for", "3 offsets behind", "(open)"},
		},
		{
			name: "UnreadableInputExitsOne",
			dir: func(t *testing.T) string {
				p := filepath.Join(t.TempDir(), "notes.bin")
				testfixture.WriteFile(t, p, []byte("this is not a Kafka log, a capture or dump-log text\n"))
				if _, err := os.Stat(p); err != nil {
					t.Fatal(err)
				}
				return p
			},
			code:   exitFailure,
			stderr: true,
		},
	}
}
