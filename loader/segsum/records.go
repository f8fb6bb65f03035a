package segsum

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"weak"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// A window keeps the headers of its segment's batches only (the scan is a
// header scan): the records of one are decoded when the detail panel asks,
// from the segment file, as a full load decodes them (loader.RecordsPage).
// Window logs are remembered by a weak pointer, so that a batch is decoded
// only for a log this Store built from its files (a log the LRU has since
// evicted, but a request still holds, included), without keeping any
// window alive.

// remember notes that l is the log of segment k's window.
func (s *Store) remember(l *txnindex.Log, k int) {
	p := weak.Make(l)
	s.windowLogs.Store(p, k)
	runtime.AddCleanup(l, func(p weak.Pointer[txnindex.Log]) { s.windowLogs.Delete(p) }, p)
}

// RecordsPage decodes the page p of b's records, b a batch of l, from the
// segment file it was scanned from: one batch read back and at most the
// page decoded (loader.RecordsPageAt checks that the bytes are still the
// scanned batch). ok is false when l is not the log of a window this
// Store built.
func (s *Store) RecordsPage(ctx context.Context, l *txnindex.Log, b *txnindex.Batch, p loader.PageLimits) (page loader.RecordPage, ok bool, err error) {
	v, found := s.windowLogs.Load(weak.Make(l))
	if !found {
		return loader.RecordPage{}, false, nil
	}
	k := v.(int)
	// A window's log holds the batches of its run (Store.runs): its own
	// segment's, and where segments overlap, its neighbours' too.
	if j, m := s.cluster(k); int(b.Segment) < j || int(b.Segment) > m {
		return loader.RecordPage{}, true, fmt.Errorf("segsum: %s: batch at offset %d is of segment %d, not of the window of segment %d", s.dir, b.BaseOffset, b.Segment, k)
	}
	f := s.segs[b.Segment] // the list is fixed at Open
	fh, size, err := loader.OpenRegular(filepath.Join(s.dir, f.name))
	if err != nil {
		return loader.RecordPage{}, true, err
	}
	defer fh.Close()
	page, err = loader.RecordsPageAt(ctx, fh, size, f.name, *b, s.o.Scan, p)
	return page, true, err
}
