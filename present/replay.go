package present

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// ReplayLine is the one-line account of r the runbook and decide's header
// print: which segments were read, from which producer snapshot, and what
// was left unread (which --full-replay reads).
func ReplayLine(r *txnindex.ReplayReport) string {
	if r.Mode == txnindex.ReplaySnapshot {
		snap := r.Snapshot
		if r.SnapshotPassed != "" {
			snap += " (" + r.SnapshotPassed + ")"
		}
		crc := ""
		switch {
		case r.CleanShutdown:
			crc = ", no segment cut at a bad CRC: the log directory has .kafka_cleanshutdown, and a broker that shut down cleanly recovers no segment (a batch read whose CRC fails is named below)"
		case r.CRCFrom > 0:
			crc = fmt.Sprintf(", CRCs checked from the recovery point %d on", r.CRCFrom)
		}
		if r.EveryBatchFrom > 0 {
			ps := make([]string, len(r.SpanProducers))
			for i, p := range r.SpanProducers {
				ps[i] = fmt.Sprint(p)
			}
			who := "producer"
			if len(ps) > 1 {
				who = "producers"
			}
			return fmt.Sprintf("segments from offset %d on (%d of %d, %s of %s%s), producer state seeded from %s: %s; up to offset %d only the batches of %s %s, whose transaction is open in it, were kept, every batch from offset %d on; the batches before offset %d were not read, nor the other batches before offset %d replayed (--full-replay reads them)",
				r.FromOffset, r.SegmentsRead, r.Segments, txnindex.Bytes(r.BytesRead), txnindex.Bytes(r.Bytes), crc, snap, r.Reason, r.EveryBatchFrom,
				who, strings.Join(ps, ", "), r.EveryBatchFrom, r.FromOffset, r.EveryBatchFrom)
		}
		return fmt.Sprintf("segments from offset %d on (%d of %d, %s of %s%s), producer state seeded from %s: %s; the batches and .txnindex files before offset %d were not read (--full-replay reads them)",
			r.FromOffset, r.SegmentsRead, r.Segments, txnindex.Bytes(r.BytesRead), txnindex.Bytes(r.Bytes), crc, snap, r.Reason, r.FromOffset)
	}
	return fmt.Sprintf("every segment (%d, %s), full replay: %s", r.Segments, txnindex.Bytes(r.Bytes), r.Reason)
}
