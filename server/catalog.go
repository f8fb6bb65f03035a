package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
	"github.com/txnscope/txnscope/web"
)

// source is one loaded partition. Its log is built on first use, so that a
// large generated demo costs nothing until someone opens it.
type source struct {
	id, title string
	topic     string
	partition int32
	build     func() *txnindex.Log
	files     *loader.Partition  // the files read, when there are any (records are decoded from them)
	live      *api.LivePartition // a partition of a watched cluster (live.go): its log changes
	upload    int                // the upload's number (upload.go); 0 for the demos, --load and live
	mem       int64              // an upload's memory (load.Cost.Memory), on its first source; 0 for the others
	problems  []string           // what the loader could not read, shown on the timeline
	lazy      *lazyPart          // a partition of a --load log directory, opened on first use (catalog_lazy.go)
	demo      bool               // an embedded or generated demo: the index lists demos apart, its pages age it by its own time
	path      string             // the full path a --load source was read from (a tooltip only; titles never carry it)
	seeks     []int64            // a scenario's consumer seeks (`seek 7`): the pages start its consumer at the first
	once      sync.Once
	mu        sync.Mutex // guards log for built
	log       *txnindex.Log
}

func (s *source) get() *txnindex.Log {
	if s.live != nil {
		return s.live.Log()
	}
	if s.lazy != nil {
		return s.lazy.get()
	}
	s.once.Do(func() {
		l := s.build()
		s.mu.Lock()
		s.log = l
		s.mu.Unlock()
	})
	return s.log
}

// built returns the log if it has been built, without building it.
func (s *source) built() *txnindex.Log {
	if s.live != nil {
		return s.live.Log()
	}
	if s.lazy != nil {
		return s.lazy.built()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// filesOf returns the files log l was read from, for decoding records;
// nil when there are none (or l is a lazy partition's tail).
func (s *source) filesOf(l *txnindex.Log) *loader.Partition {
	if s.lazy != nil {
		return s.lazy.filesOf(l)
	}
	if s.built() != l {
		return nil
	}
	return s.files
}

// problemList is what the timeline lists above the partition.
func (s *source) problemList() []string {
	if s.lazy != nil {
		return s.lazy.problemList()
	}
	return s.problems
}

// catalog is the loaded sources; it serves both api and web. Uploads add
// and evict sources while requests read it, so the list is copy-on-write:
// a reader takes one snapshot (list) and sees a consistent catalog for the
// whole of its work, never a slice being appended to; writers serialize on
// mu and publish a new slice.
type catalog struct {
	mu      sync.Mutex // serializes writers
	srcs    atomic.Pointer[snapshot]
	uploads int // upload ids handed out; ids are never reused
	// indexes are the lazy log directories (--load DIR), by source id.
	indexes map[string]*logindex.Index
	// names are the headings of the --load paths (loadNames), by the
	// path as given; set before the loads are added.
	names map[string]string
	// mem keeps the lazy partitions within --max-memory; nil (a catalog
	// a test builds) bounds nothing.
	mem *memBudget
	// open is Options.OpenFull, nil for load.LogDir.Open.
	open func(ctx context.Context, d *load.LogDir, e *logindex.Entry) (*input.Contents, error)
	// diags diagnoses the sources' logs for the pages, the API and
	// /metrics, joined with the internal topics' evidence the loads
	// record in it: the server's (Server.diags).
	diags *view.Diagnoser
}

// openFunc opens a listed partition in full: load.LogDir.Open, or
// Options.OpenFull around it.
type openFunc func(ctx context.Context, e *logindex.Entry) (*input.Contents, error)

// openFull is how a lazy partition of d is opened in full; nil: d.Open.
func (c *catalog) openFull(d *load.LogDir) openFunc {
	if c.open == nil {
		return nil
	}
	return func(ctx context.Context, e *logindex.Entry) (*input.Contents, error) {
		return c.open(ctx, d, e)
	}
}

// shownAs is the heading of what was loaded from path: the name serve
// gave it among the other loads (loadNames), else its base name.
func (c *catalog) shownAs(path string) string {
	if n, ok := c.names[path]; ok {
		return n
	}
	return filepath.Base(filepath.Clean(path))
}

// snapshot is one published state of the catalog: its sources in order,
// and the first source of each partition by key, so that a page listing
// every partition looks each one up in constant time (a scan of the list
// per row was quadratic: 8.7 s for the index of 50,000 partitions).
type snapshot struct {
	srcs  []*source
	byKey map[sourceKey]*source
}

type sourceKey struct {
	id, topic string
	partition int32
}

// list returns the sources as they are now. The slice must not be changed.
func (c *catalog) list() []*source {
	if p := c.srcs.Load(); p != nil {
		return p.srcs
	}
	return nil
}

// put adds sources at the end of the catalog.
func (c *catalog) put(srcs ...*source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(append(slices.Clone(c.list()), srcs...))
}

func (c *catalog) store(srcs []*source) {
	by := make(map[sourceKey]*source, len(srcs))
	for _, s := range srcs {
		k := sourceKey{s.id, s.topic, s.partition}
		if _, ok := by[k]; !ok {
			by[k] = s
		}
	}
	c.srcs.Store(&snapshot{srcs: srcs, byKey: by})
}

// add makes a source of each partition a --load PATH held. Its title
// names the partition by its path relative to the loaded root (loadTitle);
// the full path is kept for a tooltip only, so that nothing a user shares
// (a page, a screenshot, an export) carries a local path.
func (c *catalog) add(id, path string, ld *input.Contents) {
	c.diags.SetEvidenceOf(ld)
	srcs := sourcesOf(id, path, ld)
	for _, s := range srcs {
		s.title, s.path = loadTitle(path, c.shownAs(path), s.files, ld.Kind)
	}
	c.put(srcs...)
}

// sourcesOf makes a source of each partition ld holds, titled with name
// (a path, or an upload's file name) and the kind.
func sourcesOf(id, name string, ld *input.Contents) []*source {
	var problems []string
	for _, p := range ld.Problems {
		problems = append(problems, p.Error())
	}
	var out []*source
	for _, p := range ld.Partitions {
		l := p.Log
		f := ld.Files(l.Topic, l.Partition)
		s := &source{id: id, title: fmt.Sprintf("%s (%s)", name, ld.Kind), topic: l.Topic, partition: l.Partition,
			build: func() *txnindex.Log { return l }, files: f, problems: problems}
		s.get()
		out = append(out, s)
	}
	return out
}

// find returns the first source of the partition, nil if there is none.
func (c *catalog) find(id, topic string, partition int32) *source {
	p := c.srcs.Load()
	if p == nil {
		return nil
	}
	return p.byKey[sourceKey{id, topic, partition}]
}

// apiCatalog and webCatalog adapt the catalog to the interface each
// package defines for itself.
type apiCatalog struct{ *catalog }

func (c apiCatalog) Sources() []api.Source {
	var out []api.Source
	for _, s := range c.list() {
		out = append(out, api.Source{ID: s.id, Title: s.title, Partitions: []api.PartitionRef{{Topic: s.topic, Partition: s.partition}}, Demo: s.demo})
	}
	return out
}

func (c apiCatalog) Log(id, topic string, partition int32) (*txnindex.Log, bool) {
	if s := c.find(id, topic, partition); s != nil {
		l := s.get()
		return l, l != nil // nil: a lazy partition that could not be read at all
	}
	return nil, false
}

type webCatalog struct{ *catalog }

func (c webCatalog) Sources() []web.Source {
	var out []web.Source
	dirs := map[string]*web.LogDirView{} // one view of each log directory's progress per call
	for _, s := range c.list() {
		p := web.Partition{Topic: s.topic, Partition: s.partition}
		if l := s.built(); l != nil {
			p.Summary = web.Summary(l)
		}
		ws := web.Source{ID: s.id, Title: s.title, Partitions: []web.Partition{p}, Demo: s.demo, Path: s.path, Seeks: s.seeks}
		if s.lazy != nil {
			ws.Tail = s.lazy.tailRead()
			ws.Partitions[0].Scan = s.lazy.scanView()
			if _, ok := dirs[s.id]; !ok {
				dirs[s.id] = c.indexView(s.id)
			}
			ws.Index = dirs[s.id]
		}
		ws.Problems = s.problemList()
		out = append(out, ws)
	}
	return out
}

// indexView is the index page's view of a lazy log directory: its
// progress and what it holds besides partitions.
func (c *catalog) indexView(id string) *web.LogDirView {
	x := c.index(id)
	if x == nil {
		return nil
	}
	n, total := x.Progress()
	v := &web.LogDirView{Root: x.Root, Scanned: n, Total: total, Metadata: x.Metadata, Skipped: len(x.Skipped)}
	if n == total {
		v.Took = x.Took()
	}
	return v
}

func (c webCatalog) Log(id, topic string, partition int32) (*txnindex.Log, bool) {
	return apiCatalog(c).Log(id, topic, partition)
}

var (
	_ api.Catalog = apiCatalog{}
	_ web.Catalog = webCatalog{}
)
