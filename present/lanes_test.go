package present

import (
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// TestLanes: lane 0 counts the batches without a producer id, then one lane
// per producer in order of first appearance, whatever order their ids are
// in; every batch is on exactly one lane.
func TestLanes(t *testing.T) {
	l := testfixture.NewLog().Plain(-1, 2).Txn(7, 3).Plain(9, 1).Commit(7).Plain(-1, 1).Txn(8, 1).Txn(7, 1).Build()
	lanes := Lanes(l)
	type lane struct {
		pid     txnindex.ProducerID
		batches int
	}
	want := []lane{{txnindex.NoProducerID, 2}, {7, 3}, {9, 1}, {8, 1}}
	if len(lanes) != len(want) {
		t.Fatalf("%d lanes, want %d: %+v", len(lanes), len(want), lanes)
	}
	total := 0
	for i, ln := range lanes {
		pid := txnindex.NoProducerID
		if ln.Producer != nil {
			pid = ln.Producer.ID
		}
		if ln.Index != i || pid != want[i].pid || ln.Batches != want[i].batches {
			t.Errorf("lane %d: index %d producer %d batches %d, want producer %d batches %d", i, ln.Index, pid, ln.Batches, want[i].pid, want[i].batches)
		}
		if (i == 0) != (ln.Producer == nil) {
			t.Errorf("lane %d: producer %v", i, ln.Producer)
		}
		total += ln.Batches
	}
	if total != len(l.Batches) {
		t.Errorf("lanes hold %d batches, the log %d", total, len(l.Batches))
	}
}

// TestLaneRows: idempotent producers (every producer since Kafka 3.0,
// KIP-679) fold with lane 0 into one row, each transactional producer has
// its own up to LaneCap, the rest share a "more" row, and empty lanes have
// none.
func TestLaneRows(t *testing.T) {
	b := testfixture.NewLog()
	for i := range 300 {
		b.Plain(txnindex.ProducerID(1000+i), 1)
	}
	for p := range txnindex.ProducerID(LaneCap + 3) {
		b.Txn(10+p, 2).Commit(10 + p)
	}
	l := b.Build()
	lanes := Lanes(l)
	rows := LaneRows(lanes)
	if len(rows) != 1+LaneCap+1 {
		t.Fatalf("%d rows, want %d", len(rows), LaneCap+2)
	}
	if rows[0].Kind != RowNonTransactional || len(rows[0].Lanes) != 300 || rows[0].Batches != 300 {
		t.Errorf("row 0: %v %d lanes %d batches, want the 300 idempotent producers (lane 0 is empty)", rows[0].Kind, len(rows[0].Lanes), rows[0].Batches)
	}
	for r := 1; r <= LaneCap; r++ {
		if p := lanes[rows[r].Lanes[0]].Producer; rows[r].Kind != RowProducer || len(rows[r].Lanes) != 1 || p.ID != txnindex.ProducerID(10+r-1) {
			t.Errorf("row %d: %+v", r, rows[r])
		}
	}
	past := 0
	for _, p := range l.Producers[300+LaneCap:] {
		past += p.Batches
	}
	if more := rows[LaneCap+1]; more.Kind != RowMore || len(more.Lanes) != 3 || more.Batches != past || past == 0 {
		t.Errorf("more row %+v, want the 3 producers past the cap with their %d batches", more, past)
	}
	if lanes[0].Row != -1 || lanes[1].Row != 0 || lanes[301].Row != 1 || lanes[len(lanes)-1].Row != LaneCap+1 {
		t.Errorf("rows of lanes 0, 1, 301, last: %d %d %d %d", lanes[0].Row, lanes[1].Row, lanes[301].Row, lanes[len(lanes)-1].Row)
	}
	for _, ln := range lanes[1:] {
		if ln.Folded == ln.Producer.Transactional {
			t.Errorf("lane %d (producer %d, transactional %v) folded %v", ln.Index, ln.Producer.ID, ln.Producer.Transactional, ln.Folded)
		}
	}
}

// TestLaneLabels: long producer ids are cut to a prefix and the shortest
// suffix no other id shares, so two lanes never read alike; a name the
// input gives is shown with the id.
func TestLaneLabels(t *testing.T) {
	l := testfixture.NewLog().Plain(8070450532247928000, 1).Plain(8070450532247924917, 1).Plain(8070450532247953281, 1).
		Txn(24917, 1).Commit(24917).Txn(7, 1).Commit(7).Build()
	l.ProducerNames = map[txnindex.ProducerID]string{7: "orders"}
	got := map[txnindex.ProducerID]string{}
	for _, ln := range Lanes(l)[1:] {
		got[ln.Producer.ID] = ln.Label
	}
	want := map[txnindex.ProducerID]string{
		8070450532247928000: "producer 8070…28000",
		// 24917 is a whole id too: the suffix grows past it.
		8070450532247924917: "producer 8070…924917",
		8070450532247953281: "producer 8070…53281",
		24917:               "producer 24917",
		7:                   "orders (producer 7)",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("producer %d: label %q, want %q", id, got[id], w)
		}
	}
}
