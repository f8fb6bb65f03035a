package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/capture"
	"github.com/txnscope/txnscope/loader/dumplog"
	"github.com/txnscope/txnscope/txnindex"
)

// loaded is what a PATH held: the partitions to decide on, and every
// problem met on the way (reported, never fatal: what could be read before
// the damage is kept).
type loaded struct {
	kind  string // "log directory", "partition directory", "segment", "capture", "raw capture", "dump text"
	parts []*part
	dirs  []*loader.Partition // partition directories, for inspect
	// segmentFiles is the one segment a segment input held, kept so that
	// the detail panel can decode its records (web_records.go); nil when
	// the bytes were not kept (an upload over uploadKeepBytes).
	segmentFiles *loader.Partition
	capture      *capture.Capture
	problems     []error
}

// loadAny reads a partition directory, log directory, segment, capture or
// dump text. The kind is found from names and bytes, never from a flag.
func loadAny(path string) (*loaded, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return loadDir(path)
	}
	f, err := os.Open(path) // read-only: txnscope never writes to inputs
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return loadFile(fileInput{r: f, size: st.Size(), name: path, base: filepath.Base(path),
		partitionDir: filepath.Base(filepath.Dir(path)), dir: filepath.Dir(path), keepSegment: true,
		// The path's own reader maps the file and reopens it for records.
		segment: func() (*loader.SegmentFile, error) { return loader.OpenSegment(path) }})
}

// loadBytes reads one file's bytes held in memory (an upload), named name
// in titles and errors. It finds the kind exactly as loadAny does for a
// file; a directory cannot come as bytes.
func loadBytes(b []byte, name string) (*loaded, error) {
	base := filepath.Base(name)
	return loadFile(fileInput{r: bytes.NewReader(b), size: int64(len(b)), name: name, base: base,
		keepSegment: len(b) <= uploadKeepBytes,
		segment: func() (*loader.SegmentFile, error) {
			return loader.NewSegmentBytes(b, base, loader.DefaultScanOptions), nil
		}})
}

// fileInput is one file to load, wherever its bytes are.
type fileInput struct {
	r    io.ReaderAt
	size int64
	name string // the path, or an upload's name: prefixes errors
	base string // the file name the kind is partly found from
	// partitionDir is the name of the directory holding the file, which
	// names a segment's topic and partition when it is <topic>-<partition>;
	// "" for bytes that came without one.
	partitionDir string
	dir          string // the directory holding the file; "" for bytes
	segment      func() (*loader.SegmentFile, error)
	// keepSegment keeps a segment for decoding its records on demand: a
	// file on disk is reopened read-only for each read after Close, an
	// upload's bytes stay in memory with its source.
	keepSegment bool
}

// uploadKeepBytes is the largest upload whose bytes are kept, for the
// detail panel's records: 16 uploads (--max-uploads) then hold at most
// 1 GiB. A larger upload is decided from its batch headers alone and its
// bytes are dropped.
const uploadKeepBytes = 64 << 20

// loadFile is the one place the kind of a file is found, from its first
// bytes and its name.
func loadFile(in fileInput) (*loaded, error) {
	head := make([]byte, 64)
	n, _ := in.r.ReadAt(head, 0)
	head = head[:n]
	// Each reader gets its own section, so that nothing depends on a
	// shared file position.
	all := func() io.Reader { return io.NewSectionReader(in.r, 0, in.size) }
	path, base := in.name, in.base
	switch {
	case capture.IsCapture(head):
		c, err := capture.Read(all(), path)
		if err != nil {
			return nil, err
		}
		return fromCapture(c, "capture"), nil
	case capture.IsRaw(head):
		c, err := capture.ReadRaw(all(), path)
		if err != nil {
			return nil, err
		}
		return fromCapture(c, "raw capture"), nil
	case dumplog.LooksLikeDump(head):
		d, err := dumplog.Read(all(), path)
		if err != nil {
			return nil, err
		}
		ld := &loaded{kind: "dump text", problems: d.Problems}
		for _, p := range d.Partitions {
			ld.parts = append(ld.parts, &part{log: txnindex.Build(p)})
		}
		if len(ld.parts) == 0 {
			return nil, fmt.Errorf("%s: kafka-dump-log.sh output with no .log or .txnindex file dumped", path)
		}
		return ld, nil
	case strings.HasSuffix(base, ".log") || looksLikeSegment(head):
		seg, err := in.segment()
		if err != nil {
			return nil, err
		}
		defer seg.Close()
		topic, partition, _, perr := loader.ParsePartitionDir(in.partitionDir)
		if perr != nil {
			topic, partition = strings.TrimSuffix(base, filepath.Ext(base)), 0
		}
		s := seg.Segment()
		p := &txnindex.Partition{Topic: topic, Partition: partition, Segments: []txnindex.Segment{s},
			Batches: seg.Batches, LogStartOffset: -1, HighWatermark: -1, HighWatermarkSource: "log_end_offset (single segment)"}
		ld := &loaded{kind: "segment", parts: []*part{{log: txnindex.Build(p)}}}
		if in.keepSegment {
			ld.segmentFiles = &loader.Partition{Dir: in.dir, Input: p, Segments: []*loader.SegmentFiles{{Log: seg}}}
		}
		for _, d := range seg.Damage {
			ld.problems = append(ld.problems, d)
		}
		return ld, nil
	case strings.HasSuffix(base, ".txnindex") || strings.HasSuffix(base, ".index") || strings.HasSuffix(base, ".timeindex") || strings.HasSuffix(base, ".snapshot"):
		if in.partitionDir == "" {
			return nil, fmt.Errorf("%s: an index or snapshot alone holds no batches to decide on; give its .log segment, or the partition directory to serve --load", path)
		}
		return nil, fmt.Errorf("%s: an index or snapshot alone holds no batches to decide on; give its partition directory (%s), or use inspect", path, filepath.Dir(path))
	}
	return nil, fmt.Errorf("%s: not a Kafka input: want a log directory, a <topic>-<partition> directory, a .log segment, a pcap/pcapng or raw (%s) capture, or kafka-dump-log.sh text; found % x",
		path, capture.RawMagic, head[:min(len(head), 16)])
}

// looksLikeSegment checks the first entry's framing: a size of at least 14
// (RECORD_OVERHEAD_V0) and a magic of 0, 1 or 2 at byte 16.
func looksLikeSegment(head []byte) bool {
	if len(head) < 17 || head[16] > 2 {
		return false
	}
	size := int32(uint32(head[8])<<24 | uint32(head[9])<<16 | uint32(head[10])<<8 | uint32(head[11]))
	return size >= 14
}

func loadDir(path string) (*loaded, error) {
	if _, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(path))); err == nil {
		if logs, _ := filepath.Glob(filepath.Join(path, "*.log")); len(logs) > 0 {
			p, err := loader.OpenPartition(path)
			if err != nil {
				return nil, err
			}
			ld := &loaded{kind: "partition directory", dirs: []*loader.Partition{p}, parts: []*part{{log: p.Build()}}}
			for _, d := range p.Damage {
				ld.problems = append(ld.problems, d)
			}
			return ld, nil
		}
	}
	d, err := loader.OpenLogDir(path)
	if err != nil {
		return nil, err
	}
	ld := &loaded{kind: "log directory", dirs: d.Partitions}
	for _, d := range d.Damage {
		ld.problems = append(ld.problems, d)
	}
	for _, p := range d.Partitions {
		if p.DirKind != "" {
			continue // directories the broker set aside (-delete, -future, -stray)
		}
		ld.parts = append(ld.parts, &part{log: p.Build()})
		for _, d := range p.Damage {
			ld.problems = append(ld.problems, d)
		}
	}
	if len(ld.parts) == 0 && loader.IsKfakeDir(path) {
		// Not Kafka's layout but what kfake.DataDir writes.
		ps, err := loader.OpenKfakeDir(path)
		if err != nil {
			return nil, err
		}
		ld = &loaded{kind: "kfake data directory", dirs: ps}
		for _, p := range ps {
			ld.parts = append(ld.parts, &part{log: p.Build()})
			for _, d := range p.Damage {
				ld.problems = append(ld.problems, d)
			}
		}
	}
	if len(ld.parts) == 0 {
		return nil, fmt.Errorf("%s: no partition to load: want <topic>-<partition> directories holding .log segments", path)
	}
	return ld, nil
}

// fromCapture groups a capture's fetches by consumer connection and
// partition. Each group is one part: the consumer that received those
// responses, over the union of the batches it was sent.
func fromCapture(c *capture.Capture, kind string) *loaded {
	ld := &loaded{kind: kind, capture: c, problems: c.Problems}
	type key struct {
		conn      *capture.Conn
		topic     string
		partition int32
	}
	groups := map[key][]*capture.Fetch{}
	var order []key
	for _, f := range c.Fetches {
		k := key{f.Conn, f.Topic, f.Partition}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
		for _, d := range f.Damage {
			ld.problems = append(ld.problems, d)
		}
	}
	for _, k := range order {
		fs := groups[k]
		seen := map[int64]bool{}
		var batches []txnindex.Batch
		var fetches []txnindex.CapturedFetch
		hwm := int64(-1)
		for _, f := range fs {
			cf := txnindex.CapturedFetch{Offset: f.FetchOffset, Isolation: f.Isolation, Response: f.Response()}
			if !f.Time.IsZero() {
				cf.Time = f.Time.UnixMilli()
			}
			fetches = append(fetches, cf)
			if f.HighWatermark > hwm {
				hwm = f.HighWatermark
			}
			for _, b := range f.Batches {
				if !seen[b.BaseOffset] {
					seen[b.BaseOffset] = true
					batches = append(batches, b)
				}
			}
		}
		sort.SliceStable(batches, func(i, j int) bool { return batches[i].BaseOffset < batches[j].BaseOffset })
		var pos int64
		for i := range batches {
			batches[i].Segment = 0
			batches[i].SetPosition(pos)
			pos += int64(batches[i].Size)
		}
		name := k.topic
		if name == "" {
			name = "unknown-topic"
		}
		p := &txnindex.Partition{Topic: name, Partition: k.partition, Batches: batches, LogStartOffset: -1,
			HighWatermark: hwm, HighWatermarkSource: "capture"}
		if len(batches) > 0 {
			p.Segments = []txnindex.Segment{{Name: "fetched batches", BaseOffset: batches[0].BaseOffset, Size: pos}}
		}
		l := txnindex.Build(p)
		l.Fetches = fetches
		ld.parts = append(ld.parts, &part{log: l, fetches: fetches, iso: fs[0].Isolation})
	}
	if len(ld.parts) == 0 {
		ld.problems = append(ld.problems, errors.New(c.Name+": the capture holds no Fetch exchange"))
	}
	return ld
}
