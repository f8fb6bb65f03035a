// Command genpartition writes a synthetic, realistic Kafka partition
// directory (see gen.WriteDir) for scripts/bench-scan.sh:
//
//	go run ./scripts/genpartition -dir /tmp/x/bench-0 -size 1073741824
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/txnscope/txnscope/scenario/gen"
)

func main() {
	dir := flag.String("dir", "", "partition directory to create (base name <topic>-<partition>)")
	size := flag.Int64("size", 1<<30, "total bytes of .log segments")
	seg := flag.Int64("segment-bytes", 256<<20, "segment size")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *dir == "" {
		log.Fatal("genpartition: -dir is required")
	}
	st, err := gen.WriteDir(*dir, gen.DirOptions{Size: *size, SegmentBytes: *seg, Seed: *seed})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d segments, %d bytes, %d batches (%d data, %d non-transactional, %d compressed), %d commits, %d aborts, %d records, %d open transactions, next offset %d\n",
		st.Dir, len(st.Segments), st.Bytes, st.Batches, st.DataBatches, st.NonTxn, st.Compressed, st.Commits, st.Aborts, st.Records, st.Open, st.NextOffset)
}
