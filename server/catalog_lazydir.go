package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/txnscope/txnscope/internal/progress"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// budget is what one partition may hold to be opened in full
// (--max-source-bytes, --max-source-batches), in load's terms.
func (o *Options) budget() load.Budget {
	return load.Budget{MaxFileBytes: o.MaxSourceBytes, MaxBatches: int64(o.MaxSourceBatches)}
}

// loadPartitionDir puts a --load PARTITIONDIR over the limits into cat as
// a lazy partition, as a log directory's partition over them is
// (catalog_lazy.go): listed at once (d, load.Open's listing of it alone),
// its row ranked from a tail scan seeded from the .snapshot of the last
// segment roll (logindex.ScanTail), its page drawn one segment at a time
// from the segment summaries (segments.go) with the refusal, why, as the
// reason.
func loadPartitionDir(ctx context.Context, cat *catalog, o *Options, id, path string, d *load.LogDir, why string) error {
	x := d.Index
	e := append(x.Entries, x.MetadataEntries...)[0]
	lz := &lazyPart{x: x, e: e, d: d, open: cat.openFull(d), mem: cat.mem, diags: cat.diags}
	lz.refuse(errors.New(why))
	src := &source{id: id, topic: e.Topic, partition: e.Partition, lazy: lz}
	src.title, src.path = loadTitle(path, cat.shownAs(path), nil, input.KindPartitionDir)
	cat.put(src)
	if err := o.checkSources(cat, path); err != nil {
		return err
	}
	x.Start(ctx, 1) // its one tail scan, for the index's row
	return nil
}

// refuse marks the full load as ended in err before it starts: requests
// get the tail at once, and a page the segment windows (refused).
func (lz *lazyPart) refuse(err error) {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.done == nil {
		done := make(chan struct{})
		close(done)
		lz.done, lz.began, lz.err = done, time.Now(), err
	}
}

// Partial is web.Partial's: a lazy partition served from its tail while
// its full load runs.
func (c webCatalog) Partial(id, topic string, partition int32) string {
	s := c.find(id, topic, partition)
	if s == nil || s.lazy == nil {
		return ""
	}
	lz := s.lazy
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.full != nil || lz.err != nil || lz.done == nil {
		return "" // whole, refused (web.Segmenter's Refused says why), or not asked for yet
	}
	return fmt.Sprintf("its full load has run for %s so far", txnindex.Duration(time.Since(lz.began)))
}

var _ web.Partial = webCatalog{}

// addLogDir puts a listed log directory into the catalog as lazy sources,
// one per partition; nothing of their segments is read here, and the
// ranking is started by the caller (x.Start).
func (c *catalog) addLogDir(id string, d *load.LogDir) {
	x := d.Index
	srcs := make([]*source, 0, len(x.Entries)+len(x.MetadataEntries))
	title := c.shownAs(x.Root) + " (log directory)"
	for _, e := range append(slices.Clip(x.Entries), x.MetadataEntries...) {
		srcs = append(srcs, &source{id: id, title: title, topic: e.Topic, partition: e.Partition, lazy: &lazyPart{x: x, e: e, d: d, open: c.openFull(d), mem: c.mem, diags: c.diags}})
	}
	c.put(srcs...)
	c.mu.Lock()
	if c.indexes == nil {
		c.indexes = map[string]*logindex.Index{}
	}
	c.indexes[id] = x
	c.mu.Unlock()
}

// index returns the lazy index of source id, nil for other sources.
func (c *catalog) index(id string) *logindex.Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.indexes[id]
}

// loadLogDir puts the log directory path, listed (load.Open), into cat as
// source id and starts its ranking; on a terminal, stderr shows the
// ranking's progress while it takes more than a few seconds.
func loadLogDir(ctx context.Context, o *Options, cat *catalog, id, path string, d *load.LogDir) error {
	x := d.Index
	cat.addLogDir(id, d)
	if err := o.checkSources(cat, path); err != nil {
		return err
	}
	x.Start(ctx, 0) // GOMAXPROCS workers
	line := progress.Start(o.Stderr, progress.Delay, func() string {
		n, total := x.Progress()
		return fmt.Sprintf("ranking %s by LSO lag: %d of %d partitions scanned", path, n, total)
	})
	go func() {
		select {
		case <-x.Done():
			n, _ := x.Progress()
			line.Stop(fmt.Sprintf("ranked %s of %s by LSO lag in %s", txnindex.Plural(n, "partition", "partitions"), path, txnindex.Duration(x.Took())))
		case <-ctx.Done():
			line.Stop("")
		}
	}()
	return nil
}
