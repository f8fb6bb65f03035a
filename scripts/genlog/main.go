// Command genlog writes a log dir of broker-shaped partitions (see
// gen.WriteLogDir) into the system temp dir, for the diagnose benchmark
// (scripts/bench-diagnose.sh) and for trying txnscope at production scale:
// 1 GiB segments of fixed-size batches with their .index, .timeindex and
// .txnindex, the producer .snapshot at each roll, and a hanging transaction
// in the last two segments.
//
//	go run ./scripts/genlog -batch-bytes 1024 -total-bytes 8053063680
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/txnscope/txnscope/scenario/gen"
)

func main() {
	out := flag.String("out", filepath.Join(os.TempDir(), "txnscope-genlog"), "log dir to create, inside the system temp dir ("+os.TempDir()+")")
	seg := flag.Int64("segment-bytes", 1<<30, "segment size (log.segment.bytes)")
	batch := flag.Int("batch-bytes", 1024, "bytes of each data batch: 1024, 4096, 65536...")
	total := flag.Int64("total-bytes", 0, "bytes of .log data per partition; default 8 segments")
	parts := flag.Int("partitions", 1, "partitions to write (topic-0 .. topic-N-1)")
	topic := flag.String("topic", "bench", "topic name")
	noSnap := flag.Bool("no-snapshots", false, "leave out the producer .snapshot files")
	hang := flag.Int64("hanging-from", 0, "bytes from the end where the hanging transaction begins; default 1.5 segments, negative for none")
	del := flag.Int("delete-segments", 0, "delete the first N segments as retention does (log-start-offset-checkpoint follows)")
	oldTxn := flag.Bool("old-txn", false, "a transaction begins with the first batch and never ends (with -delete-segments: it began before the log start)")
	flag.Parse()
	abs, err := filepath.Abs(*out)
	if err != nil {
		log.Fatal(err)
	}
	tmp, _ := filepath.Abs(os.TempDir())
	if !strings.HasPrefix(abs, tmp+string(filepath.Separator)) {
		log.Fatalf("genlog: -out %s is not inside the system temp dir %s: generated data never goes elsewhere", abs, tmp)
	}
	sts, err := gen.WriteLogDir(abs, gen.LogOptions{Topic: *topic, SegmentBytes: *seg, BatchBytes: *batch, TotalBytes: *total,
		NoSnapshots: *noSnap, HangingFrom: *hang, DeleteSegments: *del, OldTxn: *oldTxn}, *parts)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range sts {
		fmt.Printf("%s: %d segments, %d bytes, %d batches, %d commits, %d aborts, %d snapshots, log start %d, next offset %d, hanging transaction from %d\n",
			s.Dir, len(s.Segments), s.Bytes, s.Batches, s.Commits, s.Aborts, len(s.Snapshots), s.LogStartOffset, s.NextOffset, s.HangingFirstOffset)
	}
}
