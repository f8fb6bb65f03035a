// Package input finds what a path or an uploaded file holds and turns it
// into partitions to decide on: a log directory (log.dirs entry, or what
// kfake.DataDir writes), a <topic>-<partition> directory, one .log segment,
// a pcap/pcapng or raw capture of Fetch exchanges, or kafka-dump-log.sh
// text. The kind is found from the bytes and the name, never from a flag.
//
// It sits above package loader and its capture and dumplog subpackages
// (capture imports loader, so loader cannot import it back). How much of
// a partition is read for a question, within which budget, is package
// load's choice, above this one: the commands and the server open their
// paths through load.Open, which reads whole inputs with OpenContext;
// uploads are read with OpenBytes.
package input

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/capture"
	"github.com/txnscope/txnscope/loader/dumplog"
	"github.com/txnscope/txnscope/txnindex"
)

// Kinds of input, as Contents.Kind names them (titles and messages show
// them).
const (
	KindLogDir       = "log directory"
	KindPartitionDir = "partition directory"
	KindKfakeDir     = "kfake data directory"
	KindSegment      = "segment"
	KindCapture      = "capture"
	KindRawCapture   = "raw capture"
	KindDumpText     = "dump text"
)

// Contents is what an input held: the partitions to decide on, the files
// they were read from, and every problem met on the way (reported, never
// fatal: what could be read before the damage is kept).
type Contents struct {
	Kind       string
	Partitions []*Partition
	// Dirs are the partition directories read, set-aside ones (-delete,
	// -future, -stray) included, for inspect and for decoding records.
	Dirs []*loader.Partition
	// Segment is the one segment a segment input held, kept so that its
	// records can be decoded on demand; nil when the bytes were not kept
	// (OpenBytes of more than MaxKeptSegment bytes).
	Segment *loader.Partition
	// Capture is the capture read, for a capture input.
	Capture  *capture.Capture
	Problems []error
}

// Dir returns the partition directory of topic-partition, nil if none was
// read. When several were (a partition and its set-aside copies), the last
// in log-directory order is returned.
func (c *Contents) Dir(topic string, partition int32) *loader.Partition {
	for i := len(c.Dirs) - 1; i >= 0; i-- {
		if d := c.Dirs[i].Input; d.Topic == topic && d.Partition == partition {
			return c.Dirs[i]
		}
	}
	return nil
}

// Close closes the segment files of the partition directories read (a
// load let go before it is used: over a budget counted once read).
func (c *Contents) Close() {
	for _, d := range c.Dirs {
		for _, sf := range d.Segments {
			sf.Log.Close()
		}
	}
}

// Files returns the files topic-partition was read from, whose segments
// decode its records: its partition directory (Dir), else, when c held
// only that partition, the one segment read (nil if its bytes were not
// kept); nil when c kept none.
func (c *Contents) Files(topic string, partition int32) *loader.Partition {
	if f := c.Dir(topic, partition); f != nil {
		return f
	}
	if len(c.Partitions) == 1 {
		return c.Segment
	}
	return nil
}

// Open reads a log directory, partition directory, segment, capture or dump
// text. Files are opened read-only: txnscope never writes to its inputs.
func Open(path string) (*Contents, error) { return OpenContext(context.Background(), path) }

// OpenContext is Open that stops with ctx's error when ctx ends (SIGINT,
// SIGTERM, a request gone). Only regular files are read: a pipe, socket or
// device given as path is refused without blocking on its open, and
// inside a directory symlinks are not followed (loader.OpenRegular).
func OpenContext(ctx context.Context, path string) (*Contents, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return openDir(ctx, path)
	}
	f, size, err := loader.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return openFile(fileInput{r: f, size: size, name: path, base: filepath.Base(path),
		partitionDir: filepath.Base(filepath.Dir(path)), dir: filepath.Dir(path), keepSegment: true,
		// The path's own reader maps the file and reopens it for records.
		segment: func() (*loader.SegmentFile, error) {
			return loader.OpenSegmentContext(ctx, path, loader.DefaultScanOptions)
		}})
}

// MaxKeptSegment is the largest segment whose bytes OpenBytes keeps, for
// decoding its records: the server's 16 uploads (serve --max-uploads)
// then hold at most 1 GiB. A larger segment is decided from its batch
// headers alone and its bytes are dropped.
const MaxKeptSegment = 64 << 20

// OpenBytes reads one file's bytes held in memory (an upload), named name
// in titles and errors. It finds the kind exactly as Open does for a file;
// a directory cannot come as bytes.
func OpenBytes(name string, b []byte) (*Contents, error) {
	return OpenBytesContext(context.Background(), name, b)
}

// OpenBytesContext is OpenBytes that stops when ctx ends (the upload's
// request gone).
func OpenBytesContext(ctx context.Context, name string, b []byte) (*Contents, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	base := filepath.Base(name)
	return openFile(fileInput{r: bytes.NewReader(b), size: int64(len(b)), name: name, base: base,
		keepSegment: len(b) <= MaxKeptSegment,
		segment: func() (*loader.SegmentFile, error) {
			return loader.NewSegmentBytesContext(ctx, b, base, loader.DefaultScanOptions)
		}})
}

// fileInput is one file to read, wherever its bytes are.
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

// openFile is the one place the kind of a file is found, from its first
// bytes and its name.
func openFile(in fileInput) (*Contents, error) {
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
		return fromCapture(c, KindCapture), nil
	case capture.IsRaw(head):
		c, err := capture.ReadRaw(all(), path)
		if err != nil {
			return nil, err
		}
		return fromCapture(c, KindRawCapture), nil
	case dumplog.LooksLikeDump(head):
		d, err := dumplog.Read(all(), path)
		if err != nil {
			return nil, err
		}
		c := &Contents{Kind: KindDumpText, Problems: d.Problems}
		for _, p := range d.Partitions {
			c.Partitions = append(c.Partitions, &Partition{Log: txnindex.Build(p)})
		}
		if len(c.Partitions) == 0 {
			return nil, fmt.Errorf("%s: kafka-dump-log.sh output with no .log or .txnindex file dumped", path)
		}
		return c, nil
	case strings.HasSuffix(base, ".log") || looksLikeSegment(head):
		return openSegment(in)
	case strings.HasSuffix(base, ".txnindex") || strings.HasSuffix(base, ".index") || strings.HasSuffix(base, ".timeindex") || strings.HasSuffix(base, ".snapshot"):
		if in.partitionDir == "" {
			return nil, fmt.Errorf("%s: an index or snapshot alone holds no batches to decide on; give its .log segment, or the partition directory to serve --load", path)
		}
		return nil, fmt.Errorf("%s: an index or snapshot alone holds no batches to decide on; give its partition directory (%s), or use inspect", path, filepath.Dir(path))
	}
	return nil, fmt.Errorf("%s: not a Kafka input: want a log directory, a <topic>-<partition> directory, a .log segment, a pcap/pcapng or raw (%s) capture, or kafka-dump-log.sh text; found % x",
		path, capture.RawMagic, head[:min(len(head), 16)])
}

// openSegment reads one segment. Its topic and partition come from the
// directory holding it when that is named <topic>-<partition>, else from
// the file name, partition 0.
func openSegment(in fileInput) (*Contents, error) {
	seg, err := in.segment()
	if err != nil {
		return nil, err
	}
	defer seg.Close()
	topic, partition, _, perr := loader.ParsePartitionDir(in.partitionDir)
	if perr != nil {
		// The file name labels the partition on the pages; it is not a
		// topic (a segment's name is its base offset), so the commands
		// do not name it (present.TopicVar).
		topic, partition = strings.TrimSuffix(in.base, filepath.Ext(in.base)), 0
	}
	s := seg.Segment()
	p := &txnindex.Partition{Topic: topic, Partition: partition, Segments: []txnindex.Segment{s},
		Batches: seg.Batches, LogStartOffset: -1, HighWatermark: -1, HighWatermarkSource: "log_end_offset (single segment)",
		TopicUnknown: perr != nil}
	c := &Contents{Kind: KindSegment, Partitions: []*Partition{{Log: txnindex.Build(p)}}}
	if in.keepSegment {
		c.Segment = &loader.Partition{Dir: in.dir, Input: p, Segments: []*loader.SegmentFiles{{Log: seg}}}
	}
	for _, d := range seg.Damage {
		c.Problems = append(c.Problems, d)
	}
	return c, nil
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
