package scenario

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// tv2Scenario: two transactions v2 producers; "a" starts two epochs short
// of exhaustion, so its third marker (epoch 32767) moves it to a new
// producer id (1002, one above the declared ones) at epoch 0, whose
// transaction stays open and pins the LSO.
const tv2Scenario = `
producer a transactional tv2 id 1000 epoch 32764
producer b transactional tv2 id 1001
begin a
send a 2
begin b
send b
abort a      # marker at 32765, while b is open
send b 2
commit b     # marker at epoch 1
begin a
send a
commit a     # 32766
begin a
send a
abort a      # 32767: the producer id is exhausted
begin a
send a 3     # producer 1002, epoch 0: open
begin b
send b
abort b      # marker at epoch 2
`

// TestTV2Scenario: a scenario of transactions v2 producers builds markers
// one epoch above their data and the epoch overflow to a new producer id;
// read back through the loader, its .txnindex files agree with the
// engine's rebuild, the snapshot keeps the exhausted producer id at epoch
// 32767, the lanes are labelled as transactions v2 and read_committed
// deliveries equal kgo.ProcessFetchPartition's.
func TestTV2Scenario(t *testing.T) {
	s, err := Parse(strings.NewReader(tv2Scenario), "tv2.txn")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkIndexAgrees(t, s, b)
	type hdr struct {
		pid     txnindex.ProducerID
		epoch   int16
		control txnindex.ControlType
	}
	var got []hdr
	for _, bt := range b.Log.Batches {
		got = append(got, hdr{bt.ProducerID, bt.ProducerEpoch, bt.Control()})
	}
	N, C, A := txnindex.ControlNone, txnindex.ControlCommit, txnindex.ControlAbort
	want := []hdr{{1000, 32764, N}, {1001, 0, N}, {1000, 32765, A}, {1001, 0, N}, {1001, 1, C}, {1000, 32765, N}, {1000, 32766, C},
		{1000, 32766, N}, {1000, 32767, A}, {1002, 0, N}, {1001, 1, N}, {1001, 2, A}}
	if !slices.Equal(got, want) {
		t.Fatalf("batches (producer, epoch, control)\n%v\nwant\n%v", got, want)
	}
	if s.Producers[0].ID != 1000 || s.Producers[0].Epoch != 32764 {
		t.Errorf("Build changed the parsed producer: %+v", s.Producers[0])
	}

	dir := t.TempDir()
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	p, err := loader.OpenPartition(filepath.Join(dir, b.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Damage) != 0 {
		t.Fatalf("damage: %v", p.Damage)
	}
	l := p.Build()
	if len(l.Mismatches) != 0 {
		t.Errorf("mismatches: %+v", l.Mismatches)
	}
	// The open transaction of the new producer id pins the LSO.
	if len(l.Open) != 1 || l.Txns[l.Open[0]].ProducerID != 1002 || l.LastStableOffset != l.Txns[l.Open[0]].FirstOffset {
		t.Fatalf("open %v, LSO %d", l.Open, l.LastStableOffset)
	}
	epochs := map[txnindex.ProducerID]int16{}
	for _, e := range p.Snapshot.Entries {
		epochs[e.ProducerID] = e.Epoch
	}
	if epochs[1000] != 32767 || epochs[1001] != 2 || epochs[1002] != 0 || len(epochs) != 3 {
		t.Errorf("snapshot epochs %v", epochs)
	}
	labels := map[txnindex.ProducerID]string{}
	for _, ln := range present.Lanes(l)[1:] {
		labels[ln.Producer.ID] = present.EpochLabel(ln.Producer)
	}
	if !strings.Contains(labels[1000], "epochs 32764–32767 (transactions v2: one bump per transaction; epoch 32767 exhausted") ||
		labels[1001] != "epochs 0–2 (transactions v2: one bump per transaction)" || labels[1002] != "epoch 0" {
		t.Errorf("lane labels %v", labels)
	}
	checkReadCommitted(t, s)
}
