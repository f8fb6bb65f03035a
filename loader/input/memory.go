package input

import (
	"unsafe"

	"github.com/txnscope/txnscope/txnindex"
)

// Memory is what c keeps in memory once read: the bytes of a kept segment
// (decoded from on demand, MaxKeptSegment) and the decoded log of each
// partition: its batches (txnindex.Batch is 64 bytes), transactions,
// producers and gaps. `serve --max-upload-memory` bounds the kept uploads
// by it: sixteen uploads of 256 MiB segments of 61-byte batches held 8.8 GB
// 4.4M batches each.
func (c *Contents) Memory() int64 {
	var n int64
	if c.Segment != nil {
		for _, s := range c.Segment.Segments {
			n += s.Log.Size
		}
	}
	for _, p := range c.Partitions {
		l := p.Log
		n += int64(len(l.Batches))*int64(unsafe.Sizeof(txnindex.Batch{})) +
			int64(len(l.Txns))*int64(unsafe.Sizeof(txnindex.Txn{})) +
			int64(len(l.Producers))*int64(unsafe.Sizeof(txnindex.Producer{})) +
			int64(len(l.Gaps))*int64(unsafe.Sizeof(txnindex.Gap{}))
	}
	return n
}
