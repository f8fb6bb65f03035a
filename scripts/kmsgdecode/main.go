// Command kmsgdecode is the baseline scripts/bench-scan.sh compares the
// header scan with: every batch of every .log of a partition directory
// decoded in full, as a client would, with franz-go. Mode kmsg does
// kmsg.RecordBatch.ReadFrom, decompression with kgo's DefaultDecompressor
// and kmsg.Record.ReadFrom of every record; mode kgo hands the bytes to
// kgo.ProcessFetchPartition (CRC check, decompression, kgo.Record
// objects), as a fetch response, 4 MiB at a time.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const chunk = 4 << 20

func main() {
	mode := flag.String("mode", "kmsg", "kmsg or kgo")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: kmsgdecode [-mode kmsg|kgo] PARTITION_DIR")
	}
	segs, err := filepath.Glob(filepath.Join(flag.Arg(0), "*.log"))
	if err != nil || len(segs) == 0 {
		log.Fatalf("no .log in %s: %v", flag.Arg(0), err)
	}
	dec := kgo.DefaultDecompressor()
	var batches, records int64
	for _, s := range segs {
		f, err := os.Open(s)
		if err != nil {
			log.Fatal(err)
		}
		buf := make([]byte, 0, chunk)
		for {
			// Top up buf to chunk bytes, then decode whole batches.
			n, err := io.ReadFull(f, buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			eof := err == io.EOF || err == io.ErrUnexpectedEOF
			if err != nil && !eof {
				log.Fatal(err)
			}
			used := 0
			for len(buf)-used >= 12 {
				size := 12 + int(int32(binary.BigEndian.Uint32(buf[used+8:])))
				if size > cap(buf) {
					nb := make([]byte, len(buf), size+chunk)
					copy(nb, buf)
					buf = nb
				}
				if used+size > len(buf) {
					break
				}
				b := buf[used : used+size]
				used += size
				if *mode == "kgo" {
					continue // decoded below, chunk at a time
				}
				var rb kmsg.RecordBatch
				if err := rb.ReadFrom(b); err != nil {
					log.Fatalf("%s: %v", s, err)
				}
				raw, err := dec.Decompress(rb.Records, kgo.CompressionCodecType(rb.Attributes&7))
				if err != nil {
					log.Fatalf("%s: decompress: %v", s, err)
				}
				for i := int32(0); i < rb.NumRecords; i++ {
					l, k := binary.Varint(raw)
					if k <= 0 || int(l) > len(raw)-k {
						log.Fatalf("%s: record %d of batch at offset %d: bad length", s, i, rb.FirstOffset)
					}
					var r kmsg.Record
					if err := r.ReadFrom(raw[:k+int(l)]); err != nil {
						log.Fatalf("%s: record: %v", s, err)
					}
					raw = raw[k+int(l):]
					records++
				}
				batches++
			}
			if *mode == "kgo" && used > 0 {
				fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "bench", Partition: 0, Offset: 0},
					&kmsg.FetchResponseTopicPartition{HighWatermark: 1 << 62, LastStableOffset: 1 << 62, RecordBatches: buf[:used]}, dec, nil)
				if fp.Err != nil {
					log.Fatalf("%s: %v", s, fp.Err)
				}
				records += int64(len(fp.Records))
			}
			rest := copy(buf, buf[used:])
			buf = buf[:rest]
			if eof {
				if rest != 0 {
					log.Fatalf("%s: %d trailing bytes", s, rest)
				}
				break
			}
		}
		f.Close()
	}
	fmt.Fprintf(os.Stderr, "%d batches, %d records\n", batches, records)
}
