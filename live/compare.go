package live

// The engine against the broker: each poll checks what txnindex computes
// for the window against what the broker itself answered (its LSO in
// ListOffsets and in every read_committed Fetch, the aborted-transaction
// lists, and the offsets kgo's read_committed filter delivered from those
// responses). A difference is a mismatch sentence in the update. poll.go
// does the polling that gathers what is compared.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// committedFetch is one read_committed response and the offset it was for.
type committedFetch struct {
	offset int64
	resp   *kmsg.FetchResponseTopicPartition
}

// brokerSaw is what one poll of a partition read from the broker, to be
// checked against the engine.
type brokerSaw struct {
	h1, h2, lso int64 // ListOffsets: the HWM, the LSO (read_committed), the HWM again
	rcs         []committedFetch
	clamped     bool // the window ends below the broker's HWM (still catching up)
}

// compare checks the engine's view of the window against what the broker
// said in this poll, appending to v.Mismatches and setting v.Unsettled when
// a check has to wait for a later poll. logAt is the engine's log of the
// window cut at a high watermark; v.Log is the one at the poll's HWM.
func (w *Watcher) compare(p *partState, v *PartitionView, logAt func(h int64) *txnindex.Log, b brokerSaw) {
	// ListOffsets(read_committed) against the engine at the same HWM.
	if b.h1 == b.h2 && b.h1 <= p.next {
		if e := w.effectiveLSO(logAt(b.h1)); e != b.lso {
			v.Mismatches = append(v.Mismatches, fmt.Sprintf("LSO differs: ListOffsets(read_committed) says %d at high watermark %d, the engine computes %d", b.lso, b.h1, e))
		}
	} else {
		v.Unsettled = true
	}
	// Every read_committed response against the engine at its HWM.
	for _, rc := range b.rcs {
		if rc.resp.HighWatermark > p.next {
			v.Unsettled = true
			continue
		}
		el := logAt(rc.resp.HighWatermark)
		if e := w.effectiveLSO(el); e != rc.resp.LastStableOffset {
			v.Mismatches = append(v.Mismatches, fmt.Sprintf("LSO differs: the read_committed Fetch at %d says %d at high watermark %d, the engine computes %d",
				rc.offset, rc.resp.LastStableOffset, rc.resp.HighWatermark, e))
		}
		if rc.offset < p.start {
			continue // the window moved past it in this poll (trim)
		}
		if m := compareAborted(el, rc, p.start, w.maxBytes); m != "" {
			v.Mismatches = append(v.Mismatches, m)
		}
	}
	// What a read_committed consumer got, offset by offset.
	v.CommittedPosition = p.rcPos
	for _, r := range p.delivered {
		v.Delivered += r[1] - r[0] + 1
	}
	// Both consumers start at the window start; offsets below the
	// committed position are final in both (it never passes the LSO of
	// a log the window holds, or sits at the window start when a trim
	// moved it there, where neither delivers anything below the LSO).
	// A window cut below the HWM could show a transaction open whose
	// marker the broker already applied, so that waits for the catch-up.
	if !b.clamped && p.rcPos <= p.next {
		if m := compareDelivered(v.Log, p.start, p.rcPos, p.delivered); m != "" {
			v.Mismatches = append(v.Mismatches, m)
		}
	} else {
		v.Unsettled = true
	}
}

// effectiveLSO is the engine's LSO, except that a transaction seeded as
// open before the window start holds it below the window, as on the
// broker, whose log starts earlier (txnindex clamps to its log start).
func (w *Watcher) effectiveLSO(l *txnindex.Log) int64 {
	lso := l.LastStableOffset
	if lso != l.LogStartOffset {
		return lso
	}
	for _, ti := range l.Open {
		if t := &l.Txns[ti]; t.FirstOffset < lso {
			lso = t.FirstOffset
		}
	}
	return lso
}

// addOffset appends an offset to merged, ordered ranges.
func addOffset(rs [][2]int64, o int64) [][2]int64 {
	if n := len(rs); n > 0 {
		if o <= rs[n-1][1] {
			return rs // already seen (a refetch)
		}
		if rs[n-1][1]+1 == o {
			rs[n-1][1] = o
			return rs
		}
	}
	return append(rs, [2]int64{o, o})
}

// compareDelivered checks the offsets the engine's read_committed consumer
// delivers from the window start (txnindex's Log.Delivered) against the
// offsets kgo.ProcessFetchPartition returned from the broker's own
// responses, below the committed position both reached.
func compareDelivered(l *txnindex.Log, from, upto int64, got [][2]int64) string {
	var want [][2]int64
	for _, r := range l.Delivered(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
		if r[0] >= upto {
			break
		}
		want = append(want, [2]int64{r[0], min(r[1], upto-1)})
	}
	if slices.Equal(want, got) {
		return ""
	}
	return fmt.Sprintf("delivered offsets differ from %d to %d: the engine delivers %s, kgo's read_committed filter on the broker's responses delivered %s",
		from, upto, fmtRanges(want), fmtRanges(got))
}

func fmtRanges(rs [][2]int64) string {
	if len(rs) == 0 {
		return "nothing"
	}
	s := ""
	for i, r := range rs {
		if i == 8 {
			s += fmt.Sprintf(" ... (%d ranges)", len(rs))
			break
		}
		if i > 0 {
			s += ","
		}
		if r[0] == r[1] {
			s += fmt.Sprint(r[0])
		} else {
			s += fmt.Sprintf("%d-%d", r[0], r[1])
		}
	}
	return s
}

// compareAborted checks a read_committed response's aborted-transaction
// list against the engine's emulated Fetch at the same offset, as sets of
// (producer id, first offset). Only entries that start inside the returned
// data are compared: the rest cannot change what a consumer receives, and
// brokers legitimately differ there (Kafka bounds the list by the offset
// index entry after the read, LocalLog.collectAbortedTransactions, which
// may reach past the data). A broker entry that starts before the window
// start is matched on producer id alone, the engine not holding its start.
func compareAborted(l *txnindex.Log, rc committedFetch, start int64, maxBytes int32) string {
	bs, _ := loader.ParseRecordSet(rc.resp.RecordBatches, "")
	if len(bs) == 0 {
		return ""
	}
	end := bs[len(bs)-1].NextOffset()
	type key struct {
		pid   int64
		first int64
	}
	broker := map[key]bool{}
	for _, a := range rc.resp.AbortedTransactions {
		if a.FirstOffset < end {
			k := key{a.ProducerID, a.FirstOffset}
			if a.FirstOffset < start {
				k.first = -1
			}
			broker[k] = true
		}
	}
	engine := map[key]bool{}
	r := l.Fetch(txnindex.FetchRequest{Offset: rc.offset, MaxBytes: maxBytes, Isolation: txnindex.ReadCommitted})
	for _, a := range r.AbortedTransactions {
		if a.FirstOffset < end {
			k := key{int64(a.ProducerID), a.FirstOffset}
			if a.FirstOffset < start || broker[key{k.pid, -1}] && !broker[k] {
				k.first = -1
			}
			engine[k] = true
		}
	}
	var missing, extra []string
	for k := range broker {
		if !engine[k] {
			missing = append(missing, fmt.Sprintf("(producer %d, first offset %d)", k.pid, k.first))
		}
	}
	for k := range engine {
		if !broker[k] {
			extra = append(extra, fmt.Sprintf("(producer %d, first offset %d)", k.pid, k.first))
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	slices.Sort(missing)
	slices.Sort(extra)
	m := fmt.Sprintf("aborted-transaction list differs for the read_committed Fetch at %d (data to %d): broker only %v, engine only %v",
		rc.offset, end, missing, extra)
	if len(extra) > 0 {
		// The broker lists what its .txnindex holds: an entry the log's
		// markers imply and the response lacks is an entry the leader's
		// file lacks, and the consumer delivers that transaction's data.
		m += "; the leader's .txnindex lacks the engine's entries (a lost file or entry), so read_committed consumers receive those transactions' records: `txnscope diagnose` of its partition directory says which file"
	}
	return m
}
