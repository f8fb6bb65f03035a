package scenario

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestAdminAbort writes the remedy of the stuck-LSO demo the way a broker
// would: the ABORT marker AdminAbort encodes for the hanging transaction is
// decoded with kmsg (control batch of the hanging producer and epoch,
// CRC-32C valid, key ABORT, value coordinator epoch 0 as
// kafka-transactions.sh sends for a producer with none), then appended to
// the built segment, the high watermark moved past it, and read back by
// the loader: the LSO reaches the high watermark, the .txnindex the broker
// would rebuild has the entry the leader wrote, and read_committed skips
// the transaction's data.
func TestAdminAbort(t *testing.T) {
	demos, err := Demos()
	if err != nil {
		t.Fatal(err)
	}
	var s *Scenario
	for _, d := range demos {
		if d.Name == "stuck-lso" {
			s = d
		}
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := present.Diagnose(b.Log, diagnosis.Options{Position: -1})
	if !d.Alert() {
		t.Fatalf("stuck-lso is not pinned by a late or hanging transaction: %+v", d.PinnedBy)
	}
	pin := d.PinnedBy
	end := b.Log.LogEndOffset
	raw, batch := AdminAbort(Abort{ProducerID: pin.ProducerID, ProducerEpoch: pin.ProducerEpoch, CoordinatorEpoch: pin.CoordinatorEpoch}, end, d.Now, 0, b.Log.Segments[0].Size)

	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	if got := crc32.Checksum(raw[21:], castagnoli); uint32(rb.CRC) != got {
		t.Errorf("CRC %08x, computed %08x", uint32(rb.CRC), got)
	}
	recs := rb.Records
	var r kmsg.Record
	if err := r.ReadFrom(recs); err != nil {
		t.Fatal(err)
	}
	if rb.FirstOffset != end || rb.ProducerID != int64(pin.ProducerID) || rb.ProducerEpoch != pin.ProducerEpoch || rb.FirstSequence != -1 ||
		rb.Attributes != txnindex.AttrTransactional|txnindex.AttrControl || rb.NumRecords != 1 ||
		fmt.Sprint(r.Key) != fmt.Sprint([]byte{0, 0, 0, 0}) || len(r.Value) != 6 || binary.BigEndian.Uint32(r.Value[2:]) != 0 || pin.CoordinatorEpoch != 0 {
		t.Errorf("marker %+v record key %v value %v, want the ABORT of producer %d epoch %d at %d, coordinator epoch 0", rb, r.Key, r.Value, pin.ProducerID, pin.ProducerEpoch, end)
	}
	if !batch.IsAbortMarker() || batch.CoordinatorEpoch() != 0 || batch.BaseOffset != end || int(batch.Size) != len(raw) {
		t.Errorf("batch %+v", batch.Fields())
	}

	dir := t.TempDir()
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, b.Dir, "00000000000000000000.log")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(raw); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The leader's append of an ABORT marker also appends the aborted
	// transaction to the segment's .txnindex (LogSegment.updateTxnIndex).
	want := txnindex.AbortedTxn{ProducerID: pin.ProducerID, FirstOffset: pin.FirstOffset, LastOffset: end, LastStableOffset: end + 1}
	if err := os.WriteFile(filepath.Join(dir, b.Dir, "00000000000000000000.txnindex"), encodeTxnIndex([]txnindex.AbortedTxn{want}), 0o644); err != nil {
		t.Fatal(err)
	}
	hw := fmt.Sprintf("0\n1\n%s %d %d\n", s.Topic, s.Partition, end+1)
	if err := os.WriteFile(filepath.Join(dir, "replication-offset-checkpoint"), []byte(hw), 0o644); err != nil {
		t.Fatal(err)
	}
	ld, err := loader.OpenLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var l *txnindex.Log
	for _, p := range ld.Partitions {
		if p.Input.Topic == s.Topic {
			l = p.Build()
		}
	}
	if l == nil {
		t.Fatal("the partition is gone")
	}
	if l.LastStableOffset != end+1 || l.HighWatermark != end+1 || len(l.Open) != 0 {
		t.Errorf("after the abort: LSO %d HWM %d, %d open, want %d", l.LastStableOffset, l.HighWatermark, len(l.Open), end+1)
	}
	if len(l.RebuiltIndex[0]) != 1 || l.RebuiltIndex[0][0] != want {
		t.Errorf("rebuilt .txnindex %v, want %v", l.RebuiltIndex[0], want)
	}
	for dd := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		if dd.Batch != nil && dd.Batch.ProducerID == pin.ProducerID && !dd.Batch.IsControl() && dd.Verdict != txnindex.Aborted {
			t.Errorf("the hanging transaction's %d-%d: %v", dd.From, dd.To, dd.Verdict)
		}
	}
}
