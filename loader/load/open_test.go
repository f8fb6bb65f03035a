package load

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/loader/input"
)

// TestOpenTail: a data partition's directory asked a Tail question is
// read from its producer snapshot (the log says how: Replay), with the LSO
// and high watermark of a whole load; an internal topic's partition and a
// lone segment are read whole (no Replay).
func TestOpenTail(t *testing.T) {
	ctx := context.Background()
	tailQ := Question{Kind: Tail, Position: -1}
	tail, err := Open(ctx, ksqlDir, tailQ, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Open(ctx, ksqlDir, Question{Kind: Whole, Position: -1}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if tail.Plan.Path != ReadTail || full.Plan.Path != ReadWhole {
		t.Fatalf("paths %v and %v, want tail and whole", tail.Plan.Path, full.Plan.Path)
	}
	tl, fl := tail.Contents.Partitions[0].Log, full.Contents.Partitions[0].Log
	if tail.Contents.Kind != input.KindPartitionDir || len(tail.Contents.Dirs) != 1 || tl.Replay == nil || fl.Replay != nil {
		t.Fatalf("%s: kind %q, %d dirs, replay %+v (whole: %+v)", ksqlDir, tail.Contents.Kind, len(tail.Contents.Dirs), tl.Replay, fl.Replay)
	}
	if tl.LastStableOffset != fl.LastStableOffset || tl.HighWatermark != fl.HighWatermark {
		t.Errorf("tail LSO %d HWM %d, whole %d %d", tl.LastStableOffset, tl.HighWatermark, fl.LastStableOffset, fl.HighWatermark)
	}
	for _, path := range []string{filepath.Join(ksqlLogDir, "__transaction_state-44"), lsxSegment} {
		c, err := Open(ctx, path, tailQ, Budget{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Plan.Path != ReadWhole || len(c.Contents.Partitions) != 1 || c.Contents.Partitions[0].Log.Replay != nil {
			t.Errorf("%s: %v, %d partitions, replay %+v: want it read whole", path, c.Plan.Path, len(c.Contents.Partitions), c.Contents.Partitions[0].Log.Replay)
		}
	}
}
