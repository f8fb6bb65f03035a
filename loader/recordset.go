package loader

import (
	"context"
	"io"

	"github.com/txnscope/txnscope/txnindex"
)

// ParseRecordSet scans the records field of a fetch (or produce) response
// partition: batches back to back, the last one possibly cut short by the
// broker's byte limit. It walks them as ByteBufferLogInputStream does — a
// trailing partial batch is dropped silently by the Java client, and here it
// is dropped too but reported — and verifies every CRC, as a consumer with
// check.crcs does. Batch.Position is relative to data and Batch.Segment is
// -1. RecordsOf decodes a returned batch's records.
//
// The scan stops at the first damage; the errors say where and why. A clean
// record set gives no errors.
func ParseRecordSet(data []byte, name string) ([]txnindex.Batch, []*FormatError) {
	bs, errs, _ := ParseRecordSetContext(context.Background(), data, name)
	return bs, errs
}

// ParseRecordSetContext is ParseRecordSet that stops when ctx ends; the
// error then wraps ctx's cause, and the batches before the position it
// names are returned.
func ParseRecordSetContext(ctx context.Context, data []byte, name string) ([]txnindex.Batch, []*FormatError, error) {
	s := scanner{
		name:     name,
		w:        window{data: data, size: int64(len(data))},
		opts:     DefaultScanOptions,
		inMemory: true,
		segment:  -1,
		ctx:      ctx,
	}
	if err := s.scan(); err != nil {
		if ctx.Err() != nil {
			return s.batches, s.damage, err
		}
		// In-memory reads cannot fail; this is unreachable.
		s.damage = append(s.damage, formatErr(name, s.pos, "batch", "%v", err))
	}
	return s.batches, s.damage, nil
}

// bytesReaderAt lets NewSegment scan a byte slice without copying.
type bytesReaderAt struct{ b []byte }

func (r *bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// NewSegmentBytes scans an in-memory segment; it is NewSegmentWith without
// copies and cannot fail on I/O.
func NewSegmentBytes(data []byte, name string, o ScanOptions) *SegmentFile {
	f, _ := NewSegmentWith(&bytesReaderAt{data}, int64(len(data)), name, o)
	return f
}

// NewSegmentBytesContext is NewSegmentBytes that stops when ctx ends; the
// error is then the only way it fails (see NewSegmentContext).
func NewSegmentBytesContext(ctx context.Context, data []byte, name string, o ScanOptions) (*SegmentFile, error) {
	return NewSegmentContext(ctx, &bytesReaderAt{data}, int64(len(data)), name, o)
}
