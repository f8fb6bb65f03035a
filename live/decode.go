package live

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// Bounds on what kgo's read_committed filter may decode from one Fetch
// answer. kgo sizes its record slice by a batch's recordsCount, clamped
// only to the batch's decompressed length, and its DefaultDecompressor
// stops at 2 GiB: a 64 KB zstd batch claiming 100 million records made it
// allocate 16 GB. Every batch handed to kgo is first scanned by the loader
// (CRC, sizes, control records, all bounded), and kgo decompresses through
// the loader's bounded decoder.
const (
	// maxFetchRecords is the most records (the batches' recordsCount
	// summed) kgo decodes from one answer: about 50 MB of kgo.Record.
	maxFetchRecords = 1 << 18
	// maxFetchDecompressed is the most bytes kgo may decompress from one
	// answer: sixteen times the 1 MiB partition fetch size, the answer's
	// records staying in memory while they are filtered.
	maxFetchDecompressed = 16 << 20
)

// boundedDecompressor is a kgo.Decompressor that decompresses with the
// loader's bounded decoder and a budget shared by every batch of one
// answer.
type boundedDecompressor struct{ left int64 }

// Decompress implements kgo.Decompressor.
func (d *boundedDecompressor) Decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	if codec == kgo.CodecNone {
		return src, nil
	}
	out, err := loader.Decompress(txnindex.Compression(codec), src, d.left)
	if err != nil {
		return nil, fmt.Errorf("%w (of the %d MiB one Fetch answer may decompress to)", err, maxFetchDecompressed>>20)
	}
	d.left -= int64(len(out))
	return out, nil
}

// committedFilter runs kgo's read_committed filter over r, the answer to a
// read_committed Fetch at p.rcPos, within the bounds above. The batches
// past a bound are not handed to kgo: the next Fetch starts at them, as
// after a broker's byte limit. A first batch that alone passes a bound, or
// that kgo cannot decode, is an error naming it: the committed position
// cannot move past it.
func (w *Watcher) committedFilter(p *partState, r *kmsg.FetchResponseTopicPartition) (kgo.FetchPartition, int64, error) {
	name := fmt.Sprintf("%s-%d Fetch answer at offset %d", w.cfg.Topic, p.id, p.rcPos)
	bs, damage := loader.ParseRecordSet(r.RecordBatches, name)
	if len(damage) > 0 && len(bs) == 0 && !strings.HasPrefix(damage[0].Msg, "truncated") {
		return kgo.FetchPartition{}, p.rcPos, fmt.Errorf("live: %w", damage[0])
	}
	// Only the batches the loader scanned whole reach kgo; a damaged or
	// cut tail is dropped, as the read_uncommitted path drops it.
	cut, records := 0, int64(0)
	if len(bs) > 0 {
		last := bs[len(bs)-1]
		cut = int(last.Position()) + int(last.Size)
	}
	for _, b := range bs {
		n := int64(max(b.Records, 1))
		if b.Magic() < 2 {
			n = max(b.LastOffset()-b.BaseOffset+1, 1)
		}
		if records+n > maxFetchRecords {
			if records == 0 {
				return kgo.FetchPartition{}, p.rcPos, fmt.Errorf("live: %s: the batch at byte %d (offsets %d to %d) declares %d records, more than the %d the watcher decodes from one answer",
					name, b.Position(), b.BaseOffset, b.LastOffset(), n, maxFetchRecords)
			}
			cut = int(b.Position())
			break
		}
		records += n
	}
	rp := *r
	rp.RecordBatches = r.RecordBatches[:cut]
	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Topic: w.cfg.Topic, Partition: p.id, Offset: p.rcPos, IsolationLevel: kgo.ReadCommitted(),
	}, &rp, &boundedDecompressor{left: maxFetchDecompressed}, nil)
	if fp.Err != nil && next <= p.rcPos {
		return fp, next, fmt.Errorf("live: %s: %v", name, fp.Err)
	}
	return fp, next, nil
}
