package txnindex

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// TestBatchSize pins the per-batch cost of a loaded partition: one Batch per
// batch is kept for the whole timeline.
func TestBatchSize(t *testing.T) {
	if s := unsafe.Sizeof(Batch{}); s > 64 {
		t.Fatalf("unsafe.Sizeof(Batch{}) = %d, want <= 64", s)
	}
}

// TestBatchFieldsRoundTrip checks that packing keeps every field of the
// header, including the coordinator epoch sharing the sequence slot.
func TestBatchFieldsRoundTrip(t *testing.T) {
	for _, f := range []BatchFields{
		{},
		{BaseOffset: 100, LastOffset: 100 + math.MaxInt32, Position: math.MaxInt32, BaseSequence: -1, CoordinatorEpoch: 7,
			Attributes: AttrTransactional | AttrControl, Control: ControlCommit, Magic: 2, Records: 1, Size: 78, Segment: 3, ProducerEpoch: 5},
		{BaseOffset: -5, LastOffset: -5 + math.MinInt32, BaseSequence: 0, CoordinatorEpoch: math.MaxInt32, Control: ControlKRaftVoters, Magic: 1},
		{BaseOffset: 1 << 60, LastOffset: 1<<60 + 9, BaseSequence: math.MaxInt32, CoordinatorEpoch: -1, Control: ControlNone, Attributes: 0x7f, Magic: 2},
		{BaseSequence: 12, CoordinatorEpoch: -1, Control: ControlUnknown, Position: 1234},
		{BaseSequence: -1, CoordinatorEpoch: -1, Control: ControlAbort, Position: 0},
	} {
		b := f.Batch()
		if got := b.Fields(); got != f {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, f)
		}
	}
}

// TestBatchPackingLimits documents what does not fit: the loaders reject
// such headers with a positional error before they get here.
func TestBatchPackingLimits(t *testing.T) {
	b := BatchFields{BaseSequence: 5, CoordinatorEpoch: 3}.Batch()
	if b.BaseSequence() != 5 || b.CoordinatorEpoch() != -1 {
		t.Errorf("sequence 5 with epoch 3: got sequence %d epoch %d, want 5 and -1 (the epoch needs a broker-written sequence)", b.BaseSequence(), b.CoordinatorEpoch())
	}
	b.SetPosition(math.MaxInt32 + 1)
	if b.Position() != -1 {
		t.Errorf("position past int32: got %d, want -1", b.Position())
	}
	if b.SetOffsets(0, math.MaxInt32+1) {
		t.Error("SetOffsets accepted a delta past int32")
	}
	if !b.SetOffsets(10, 10+math.MaxInt32) || b.LastOffset() != 10+math.MaxInt32 {
		t.Errorf("SetOffsets(10, 10+MaxInt32): last %d", b.LastOffset())
	}
	if b.SetOffsets(math.MaxInt64, math.MinInt64) {
		t.Error("SetOffsets accepted a wrapped delta")
	}
	// The coordinator epoch survives a later base sequence of -1 or 0.
	b = BatchFields{BaseSequence: -1, CoordinatorEpoch: 9}.Batch()
	b.SetBaseSequence(0)
	if b.BaseSequence() != 0 || b.CoordinatorEpoch() != 9 {
		t.Errorf("got sequence %d epoch %d, want 0 and 9", b.BaseSequence(), b.CoordinatorEpoch())
	}
	b.SetCoordinatorEpoch(-1)
	if b.BaseSequence() != 0 || b.CoordinatorEpoch() != -1 {
		t.Errorf("after clearing the epoch: sequence %d epoch %d, want 0 and -1", b.BaseSequence(), b.CoordinatorEpoch())
	}
}

// TestBuildParallelPasses: the passes Build runs beside the replay on a
// large log (dense segments, gaps) give what they give run in line, and
// under -race share nothing with the replay: the benchmark log (rolled
// every 100k batches) with gaps made here.
func TestBuildParallelPasses(t *testing.T) {
	l := cachedBenchLog(250_000)
	// Three offsets missing after every 1,000th batch: what the cleaner
	// leaves.
	bs := slices.Clone(l.Batches)
	for i := range bs {
		bs[i].BaseOffset += 3 * int64(i/1000)
	}
	p := &Partition{Topic: "t", Segments: l.Segments, Batches: bs, LogStartOffset: -1, HighWatermark: -1}
	defer func(v int) { parallelBuildBatches = v }(parallelBuildBatches)
	parallelBuildBatches = 1 << 62
	serial := Build(p)
	parallelBuildBatches = 1
	par := Build(p)
	if !reflect.DeepEqual(serial.Gaps, par.Gaps) || !reflect.DeepEqual(serial.segDense, par.segDense) {
		t.Fatalf("gaps %d/%d, dense %v/%v", len(serial.Gaps), len(par.Gaps), serial.segDense, par.segDense)
	}
	if len(par.Txns) == 0 || len(par.segDense) < 2 || len(par.Gaps) == 0 {
		t.Fatalf("%d transactions, %d segments, %d gaps: the log does not exercise the passes", len(par.Txns), len(par.segDense), len(par.Gaps))
	}
}

// TestLogBytesPerBatchCoversTheStructs: the one per-batch figure of a
// built log's memory covers a Batch and its share of the smallest
// transaction (a data batch and its marker).
func TestLogBytesPerBatchCoversTheStructs(t *testing.T) {
	if need := unsafe.Sizeof(Batch{}) + unsafe.Sizeof(Txn{})/2; LogBytesPerBatch < need {
		t.Fatalf("LogBytesPerBatch %d, under a Batch and half a Txn: %d", LogBytesPerBatch, need)
	}
}
