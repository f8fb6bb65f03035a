package main

import (
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
	kind     string // "log directory", "partition directory", "segment", "capture", "raw capture", "dump text"
	parts    []*part
	dirs     []*loader.Partition // partition directories, for inspect
	capture  *capture.Capture
	problems []error
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
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	switch {
	case capture.IsCapture(head):
		c, err := capture.Read(f, path)
		if err != nil {
			return nil, err
		}
		return fromCapture(c, "capture"), nil
	case capture.IsRaw(head):
		c, err := capture.ReadRaw(f, path)
		if err != nil {
			return nil, err
		}
		return fromCapture(c, "raw capture"), nil
	case dumplog.LooksLikeDump(head):
		d, err := dumplog.Read(f, path)
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
		seg, err := loader.OpenSegment(path)
		if err != nil {
			return nil, err
		}
		defer seg.Close()
		topic, partition, _, perr := loader.ParsePartitionDir(filepath.Base(filepath.Dir(path)))
		if perr != nil {
			topic, partition = strings.TrimSuffix(base, filepath.Ext(base)), 0
		}
		s := seg.Segment()
		p := &txnindex.Partition{Topic: topic, Partition: partition, Segments: []txnindex.Segment{s},
			Batches: seg.Batches, LogStartOffset: -1, HighWatermark: -1, HighWatermarkSource: "log_end_offset (single segment)"}
		ld := &loaded{kind: "segment", parts: []*part{{log: txnindex.Build(p)}}}
		for _, d := range seg.Damage {
			ld.problems = append(ld.problems, d)
		}
		return ld, nil
	case strings.HasSuffix(base, ".txnindex") || strings.HasSuffix(base, ".index") || strings.HasSuffix(base, ".timeindex") || strings.HasSuffix(base, ".snapshot"):
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
