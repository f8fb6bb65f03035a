package present

import (
	"math"
	"strconv"

	"github.com/txnscope/txnscope/txnindex"
)

// Lane is one producer's lane of the timeline, the unit the stream
// numbers: lane 0 holds the batches without a producer id (non-idempotent
// writes and magic 0/1 entries); lane i+1 holds the batches of
// l.Producers[i], so producers keep their order of first appearance. The
// stream's per-decision lane number (package api), the meta message's lane
// list and the page's rows (package web, static/js/timeline-lanes.js) all
// follow this one rule.
//
// The page does not draw a row per lane: since Kafka 3.0 every producer is
// idempotent by default (KIP-679, enable.idempotence=true), so a busy
// partition holds hundreds of producer ids that never write a transaction.
// Row says where the lane is drawn by default (LaneRows).
type Lane struct {
	Index int
	// Producer is the lane's producer, nil for lane 0. It points into
	// l.Producers; the log is read-only, so callers must not modify it.
	Producer *txnindex.Producer
	// Batches is the lane's batch count (Producer.Batches, or for lane 0
	// the batches without a producer id).
	Batches int
	// Folded: the lane is drawn in the one "non-transactional" row with
	// the others like it: lane 0 and every producer that wrote no
	// transactional batch (idempotent producers). A transactional producer
	// has a row of its own (up to LaneCap of them).
	Folded bool
	// Label names the lane for people: "producer 7", "no producer id", or
	// the scenario's name for the producer ("orders (producer 7)"). A
	// producer id too long to show whole is cut to its first digits and a
	// suffix long enough to tell it from every other lane's
	// ("producer 8070…24917"); ID has the whole id.
	Label string
	// Row is the lane's default row on the page (LaneRows), -1 when the
	// lane is empty and drawn nowhere.
	Row int
}

// LaneCap is how many producers get a row of their own by default: the
// rest are folded into one "N more producers" row, and the page's filter
// picks which producers get the rows.
const LaneCap = 12

// LaneRowKind says what a timeline row holds.
type LaneRowKind uint8

// Kinds of rows, in the order the page draws them.
const (
	// RowNonTransactional: lane 0 and every idempotent producer.
	RowNonTransactional LaneRowKind = iota
	// RowProducer: one transactional producer.
	RowProducer
	// RowMore: the transactional producers past LaneCap.
	RowMore
)

// LaneRow is one row of the page by default: the lanes drawn in it.
type LaneRow struct {
	Kind    LaneRowKind
	Lanes   []int // Lane.Index of each lane drawn in the row
	Batches int
}

// Lanes returns the timeline lanes of l: lane 0 first, then one per
// producer in order of first appearance, with their labels and default
// rows. It walks the batches once to count lane 0.
func Lanes(l *txnindex.Log) []Lane {
	none := 0
	for i := range l.Batches {
		if !l.Batches[i].HasProducerID() {
			none++
		}
	}
	out := make([]Lane, 0, len(l.Producers)+1)
	out = append(out, Lane{Index: 0, Batches: none, Folded: true, Label: "no producer id"})
	ids := make([]txnindex.ProducerID, len(l.Producers))
	for i := range l.Producers {
		ids[i] = l.Producers[i].ID
	}
	short := shortIDs(ids)
	for i := range l.Producers {
		p := &l.Producers[i]
		label := "producer " + short[i]
		if n := l.ProducerNames[p.ID]; n != "" {
			label = n + " (" + label + ")"
		}
		out = append(out, Lane{Index: i + 1, Producer: p, Batches: p.Batches, Folded: !p.Transactional, Label: label})
	}
	rows := LaneRows(out)
	for i := range out {
		out[i].Row = -1
	}
	for r, row := range rows {
		for _, ln := range row.Lanes {
			out[ln].Row = r
		}
	}
	return out
}

// LaneRows lays lanes out as the page draws them by default: the
// non-transactional row first (when any of its lanes holds a batch), then
// a row per transactional producer in order of first appearance, up to
// LaneCap, then one row for the rest. A lane without batches is drawn
// nowhere.
func LaneRows(lanes []Lane) []LaneRow {
	var folded, more LaneRow
	folded.Kind, more.Kind = RowNonTransactional, RowMore
	var own []LaneRow
	for _, ln := range lanes {
		switch {
		case ln.Batches == 0:
		case ln.Folded:
			folded.Lanes = append(folded.Lanes, ln.Index)
			folded.Batches += ln.Batches
		case len(own) < LaneCap:
			own = append(own, LaneRow{Kind: RowProducer, Lanes: []int{ln.Index}, Batches: ln.Batches})
		default:
			more.Lanes = append(more.Lanes, ln.Index)
			more.Batches += ln.Batches
		}
	}
	var rows []LaneRow
	if len(folded.Lanes) > 0 {
		rows = append(rows, folded)
	}
	rows = append(rows, own...)
	if len(more.Lanes) > 0 {
		rows = append(rows, more)
	}
	return rows
}

// shortIDLen is the longest producer id a label shows whole: kfake's and
// librdkafka's random 19-digit ids, and Kafka's after many
// InitProducerId, are cut so that the lane's label fits its column.
const shortIDLen = 10

// shortIDs writes each id for a label: whole up to shortIDLen digits,
// otherwise its first 4 digits, "…" and the shortest suffix (at least 5
// digits) that no other id's label ends with, so that two labels never
// read alike ("8070…24917", "8070…53281").
func shortIDs(ids []txnindex.ProducerID) []string {
	out := make([]string, len(ids))
	var long []int
	for i, id := range ids {
		out[i] = strconv.FormatInt(int64(id), 10)
		if len(out[i]) > shortIDLen {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		return out
	}
	// Suffixes of every id, short ones included: a label "…24917" must not
	// read like the whole id 24917 either. One count per length keeps
	// this linear in the producers (a live partition may hold thousands).
	full := append([]string(nil), out...)
	done := make([]bool, len(ids))
	for k := 5; k <= 19; k++ {
		seen := make(map[string]int, len(ids))
		for _, s := range full {
			if len(s) >= k {
				seen[s[len(s)-k:]]++
			}
		}
		left := false
		for _, i := range long {
			s := full[i]
			if done[i] || len(s) < k+5 {
				continue
			}
			if seen[s[len(s)-k:]] == 1 {
				out[i] = s[:4] + "…" + s[len(s)-k:]
				done[i] = true
				continue
			}
			left = true
		}
		if !left {
			break
		}
	}
	return out
}

// EpochLabel names the epochs a producer's lane spans. A producer id is one
// lane whatever its epochs: under transactions v2 (KIP-890) the coordinator
// bumps the epoch before every marker, so a busy producer climbs through
// thousands of epochs with no fencing at all, and a bare "epochs 0–3000"
// would read as 3000 restarts. The label says which it is:
//
//	epoch 4
//	epochs 0–2                                   (bumps without markers: fencing, KIP-360)
//	epochs 0–3000 (transactions v2: one bump per transaction)
//	epochs 32700–32767 (transactions v2: one bump per transaction; epoch 32767 exhausted the producer id, its transactional id went on under a new one)
//
// The last: a transactions v2 marker at epoch 32767 (Short.MaxValue) is
// written after the coordinator allocated the next producer id
// (TransactionCoordinator: isProducerEpochExhausted at epoch >= 32766),
// and completes the transaction under that new id at epoch 0
// (TransactionMetadata.prepareComplete), which is another lane.
func EpochLabel(p *txnindex.Producer) string {
	if p.FirstEpoch == p.LastEpoch {
		return "epoch " + strconv.Itoa(int(p.FirstEpoch))
	}
	s := "epochs " + strconv.Itoa(int(p.FirstEpoch)) + "–" + strconv.Itoa(int(p.LastEpoch))
	if p.TV2Markers == 0 {
		return s
	}
	s += " (transactions v2: one bump per transaction"
	if p.LastEpoch == math.MaxInt16 {
		s += "; epoch 32767 exhausted the producer id, its transactional id went on under a new one"
	}
	return s + ")"
}
