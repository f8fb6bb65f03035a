package input

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/loader"
)

// TestOpenTail: a data partition's directory is read from its producer
// snapshot (the log says how: Replay), with the LSO and high watermark of a
// full read; an internal topic's partition and a lone segment are read as
// OpenContext reads them (no Replay).
func TestOpenTail(t *testing.T) {
	ctx := context.Background()
	tail, err := OpenTail(ctx, ksqlDir, loader.TailOptions{Position: -1})
	if err != nil {
		t.Fatal(err)
	}
	full, err := OpenContext(ctx, ksqlDir)
	if err != nil {
		t.Fatal(err)
	}
	tl, fl := tail.Partitions[0].Log, full.Partitions[0].Log
	if tail.Kind != KindPartitionDir || len(tail.Dirs) != 1 || tl.Replay == nil || fl.Replay != nil {
		t.Fatalf("%s: kind %q, %d dirs, replay %+v (full read: %+v)", ksqlDir, tail.Kind, len(tail.Dirs), tl.Replay, fl.Replay)
	}
	if tl.LastStableOffset != fl.LastStableOffset || tl.HighWatermark != fl.HighWatermark {
		t.Errorf("tail LSO %d HWM %d, full read %d %d", tl.LastStableOffset, tl.HighWatermark, fl.LastStableOffset, fl.HighWatermark)
	}
	for _, path := range []string{filepath.Join(ksqlLogDir, "__transaction_state-44"), lsxSegment} {
		c, err := OpenTail(ctx, path, loader.TailOptions{Position: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Partitions) != 1 || c.Partitions[0].Log.Replay != nil {
			t.Errorf("%s: %d partitions, replay %+v: want it read whole", path, len(c.Partitions), c.Partitions[0].Log.Replay)
		}
	}
}
