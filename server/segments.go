package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// segStores serves the segment routes (api.Segmented) of every source
// that is a partition directory: one segsum.Store per directory, opened on
// first request, all sharing one LRU under --max-memory.
type segStores struct {
	cat      *catalog
	cache    *segsum.Cache
	cacheDir string // "" when the user has no cache directory: summaries in memory only
	// open is openWindows; a test replaces it with one that blocks.
	open func(dir string, o segsum.Options) (*segsum.Store, error)

	// mu guards m only; a Store is opened outside it (its listing reads
	// the directory and scans a .swap segment), so that a request for an
	// open partition never waits for another partition's open.
	mu sync.Mutex
	m  map[string]*openStore
}

// openStore is one directory's Store, opened once by the first request.
type openStore struct {
	once sync.Once
	st   *segsum.Store
	err  error
}

var _ api.Segmented = (*segStores)(nil)

// openWindows opens a partition directory's segment windows: load.Open of
// a Window question.
func openWindows(dir string, o segsum.Options) (*segsum.Store, error) {
	in, err := load.Open(context.Background(), dir, load.Question{Kind: load.Window, Position: -1, Windows: o}, load.Budget{})
	if err != nil {
		return nil, err
	}
	return in.Store, nil
}

func newSegStores(cat *catalog, maxMemory int64, cacheDir string) *segStores {
	return &segStores{cat: cat, cache: segsum.NewCache(maxMemory), cacheDir: cacheDir, open: openWindows, m: map[string]*openStore{}}
}

// dirOf is the partition directory a source was read from, "" when it
// is not one (a demo, a capture, a segment alone, an upload, live).
func dirOf(src *source) string {
	switch {
	case src.lazy != nil:
		return src.lazy.e.Dir
	case src.files != nil && src.live == nil && src.upload == 0:
		return src.files.Dir
	}
	return ""
}

func (s *segStores) store(id, topic string, partition int32) (*segsum.Store, error) {
	src := s.cat.find(id, topic, partition)
	if src == nil {
		return nil, nil
	}
	dir := dirOf(src)
	if dir == "" {
		return nil, nil
	}
	return s.storeOf(dir)
}

// storeOf is the Store of the partition directory dir, opened on first
// use and kept (the memory budget estimates a lazy partition's load from
// it too: catalog_lazy_budget.go).
func (s *segStores) storeOf(dir string) (*segsum.Store, error) {
	s.mu.Lock()
	o := s.m[dir]
	if o == nil {
		o = &openStore{}
		s.m[dir] = o
	}
	s.mu.Unlock()
	o.once.Do(func() {
		// Headers only, as the tail scans of a log directory read: the
		// timeline's decisions need nothing else.
		o.st, o.err = s.open(dir, segsum.Options{Scan: loader.HeaderScanOptions, Cache: s.cache, CacheDir: s.cacheDir})
	})
	if o.err != nil {
		// Not kept: the next request opens the directory again (it
		// may have been fixed).
		s.mu.Lock()
		if s.m[dir] == o {
			delete(s.m, dir)
		}
		s.mu.Unlock()
		return nil, o.err
	}
	return o.st, nil
}

func (s *segStores) Overview(ctx context.Context, id, topic string, partition int32) (any, bool, error) {
	st, err := s.store(id, topic, partition)
	if st == nil || err != nil {
		return nil, err != nil, err
	}
	v, err := st.Overview(ctx)
	return v, true, err
}

func (s *segStores) Decisions(ctx context.Context, id, topic string, partition int32, from, to int64, o txnindex.ConsumeOptions,
	f func(l *txnindex.Log, d *txnindex.Decision) bool) (bool, error) {
	st, err := s.store(id, topic, partition)
	if st == nil || err != nil {
		return err != nil, err
	}
	return true, st.Decisions(ctx, from, to, o, func(w *segsum.Window, d *txnindex.Decision) bool { return f(w.Log, d) })
}

// windowRecords is the record source of the batch API: next's, and for
// the batches of a segment window (the page of a partition too large to
// load whole), the batch decoded from its segment file on demand.
type windowRecords struct {
	next loaderRecords
	segs *segStores
}

var _ api.RecordPager = windowRecords{}

func (w windowRecords) Records(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch) ([]api.Record, error) {
	p, err := w.RecordPage(ctx, id, l, b, api.RecordPageRequest{})
	return p.Records, err
}

func (w windowRecords) RecordPage(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
	page, err := w.next.RecordPage(ctx, id, l, b, p)
	if errors.Is(err, api.ErrNoRecords) {
		return w.segs.RecordPage(ctx, id, l, b, p)
	}
	return page, err
}

// RecordPage decodes the page p of the records of b, a batch of l, a
// segment window's log that WindowLog handed out, from its segment file
// (segsum.Store.RecordsPage); api.ErrNoRecords when l is not a window of
// source id's partition directory.
func (s *segStores) RecordPage(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
	// A window exists only once its store is open: store returns it.
	st, err := s.store(id, l.Topic, l.Partition)
	if err != nil || st == nil {
		return api.RecordPage{}, api.ErrNoRecords
	}
	lp, ok, err := st.RecordsPage(ctx, l, b, loader.PageLimits{From: p.From, Limit: p.Limit, MaxBytes: p.MaxBytes})
	switch {
	case !ok:
		return api.RecordPage{}, api.ErrNoRecords
	case err != nil:
		return api.RecordPage{}, err
	}
	return api.LoaderPage(lp), nil
}

// segmentIndex is the index of the segment at base in st.
func segmentIndex(ctx context.Context, st *segsum.Store, base int64) (int, error) {
	sums, _, err := st.Summaries(ctx)
	if err != nil {
		return 0, err
	}
	for k := range sums {
		if sums[k].BaseOffset == base {
			return k, nil
		}
	}
	return 0, fmt.Errorf("no segment at offset %d", base)
}

// WindowLog is api.SegmentLogs' and web.Segmenter's: the log of the
// segment at base, scanned into the LRU (its decisions equal a full
// pass's, segsum's TestWindowsEqualFullPass).
func (s *segStores) WindowLog(ctx context.Context, id, topic string, partition int32, base int64) (*txnindex.Log, error) {
	st, err := s.store(id, topic, partition)
	if st == nil || err != nil {
		return nil, cmp.Or(err, errors.New("not a partition directory"))
	}
	k, err := segmentIndex(ctx, st, base)
	if err != nil {
		return nil, err
	}
	w, err := st.Window(ctx, k, txnindex.ConsumeOptions{})
	if err != nil {
		return nil, err
	}
	return w.Log, nil
}

// segWebCatalog is the pages' catalog with the segment strip
// (web.Segmenter).
type segWebCatalog struct {
	webCatalog
	segs *segStores
}

var _ web.Segmenter = segWebCatalog{}

func (c segWebCatalog) Segments(ctx context.Context, id, topic string, partition int32) ([]web.SegmentSummary, string, bool, error) {
	v, ok, err := c.segs.Overview(ctx, id, topic, partition)
	if !ok || err != nil {
		return nil, "", false, err
	}
	o := v.(*segsum.Overview)
	out := make([]web.SegmentSummary, len(o.Segments))
	for i, x := range o.Segments {
		out[i] = web.SegmentSummary{Name: x.Name, BaseOffset: x.BaseOffset, NextOffset: x.NextOffset,
			Delivered: x.NonTransactional + x.Committed, Aborted: x.Aborted, Pending: x.Open, Control: x.Control}
	}
	return out, refused(c.find(id, topic, partition)), true, nil
}

// refused says why src, a log directory's partition, was not loaded whole
// (over --max-source-bytes or --max-source-batches): its page shows one
// segment's window at a time. "" for every other source.
func refused(src *source) string {
	if src == nil || src.lazy == nil {
		return ""
	}
	lz := src.lazy
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.full == nil && lz.err != nil {
		return lz.err.Error()
	}
	return ""
}

// Refused is web.Segmenter's: why the partition is not loaded whole.
func (c segWebCatalog) Refused(id, topic string, partition int32) string {
	return refused(c.find(id, topic, partition))
}

func (c segWebCatalog) WindowLog(ctx context.Context, id, topic string, partition int32, base int64) (*txnindex.Log, error) {
	return c.segs.WindowLog(ctx, id, topic, partition, base)
}
