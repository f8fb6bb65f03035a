package gen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// LogOptions control WriteLog. Zero fields take the defaults.
type LogOptions struct {
	Topic        string // default "bench"
	Partition    int32
	SegmentBytes int64 // roll before a segment would pass this; default 1 GiB
	BatchBytes   int   // bytes on disk of each data batch (markers are 78); default 1024
	TotalBytes   int64 // bytes of .log data written; default 8 × SegmentBytes
	Producers    int   // transactional producers besides the special ones below; default 4
	Seed         uint64
	// NoSnapshots leaves out the producer-state .snapshot the broker
	// writes at each roll (UnifiedLog.roll → ProducerStateManager
	// .takeSnapshot, named for the new segment's base offset).
	NoSnapshots bool
	// HangingFrom is how far from the end, in bytes, producer 9000 begins
	// a transaction it writes three batches to and never ends; default 1.5
	// × SegmentBytes (so it begins in the second-to-last of 8 segments);
	// negative for none.
	HangingFrom int64
	// OldTxn makes producer 8000 begin a transaction with the first batch
	// and never end it; with OldTxnLateWrite it writes a second batch just
	// after the first segment DeleteSegments leaves (so some of it survives
	// retention and the snapshot says it began before the log start).
	OldTxn, OldTxnLateWrite bool
	// DeleteSegments removes the first segments (and the snapshots below
	// the new log start, as ProducerStateManager.deleteSnapshotsBefore
	// does) and writes the log start to log-start-offset-checkpoint, as
	// retention does.
	DeleteSegments int
	// Keyed gives each data record the key "key-<its offset>", so that
	// a test comparing decoded records tells one batch's from another's
	// (the values are the same random bytes in every batch).
	Keyed bool
	// TimeSteps are the milliseconds between consecutive batches'
	// timestamps in each segment, in turn: segment i's batches are
	// TimeSteps[i%len(TimeSteps)] ms apart, so that segments written at
	// different rates hold different numbers of offsets per second (the
	// time axis tests). nil: 1 ms everywhere.
	TimeSteps []int64
}

// LogStats describe what WriteLog wrote.
type LogStats struct {
	Dir                string
	Segments           []string // kept, in offset order
	Snapshots          []string
	Bytes              int64 // of the kept segments
	Batches            int
	Commits, Aborts    int
	NextOffset         int64
	LogStartOffset     int64
	HangingFirstOffset int64 // -1 if none
}

const (
	hangingPID = 9000
	oldPID     = 8000
	idemPID    = 5000
	// indexInterval is index.interval.bytes' default: LogSegment.append
	// adds an .index entry once more than this many bytes were appended
	// since the last one.
	indexInterval = 4096
)

// logProducer is one producer's state as ProducerStateManager keeps it
// (ProducerStateEntry) while WriteLog writes.
type logProducer struct {
	id          int64
	epoch       int16
	seq         int32 // next sequence
	lastOffset  int64 // of its last data batch; -1 none
	offsetDelta int32
	lastTS      int64
	coordEpoch  int32
	txnFirst    int64 // currentTxnFirstOffset; -1 none
	left        int   // data batches before the transaction ends
}

// logWriter holds the segment being written and its indexes.
type logWriter struct {
	o                LogOptions
	dir              string
	st               *LogStats
	f                *os.File
	w                *bufio.Writer
	base, size       int64
	sinceIndex       int64
	index, timeIndex []byte
	txnIndex         []byte
	maxTS, maxTSOff  int64
	lastIndexTS      int64
	off, ts          int64
	producers        map[int64]*logProducer
	buf              []byte
	value            []byte
}

// WriteLog writes a partition directory <dir>/<topic>-<partition> the way
// a broker lays it out: 1 GiB segments (by default) of kmsg-encoded v2
// batches of a fixed size, their .index, .timeindex and (for segments with
// an aborted transaction) .txnindex, the producer-state .snapshot at each
// roll, and the log dir's checkpoints. dir is the log dir; it is created.
func WriteLog(dir string, o LogOptions) (*LogStats, error) {
	sts, err := WriteLogDir(dir, o, 1)
	if err != nil {
		return nil, err
	}
	return sts[0], nil
}

// WriteLogDir writes n partitions of o.Topic (o.Partition is ignored) into
// the log dir dir, each as WriteLog writes one (partition i with seed
// o.Seed+i), and the log dir's replication, recovery-point and log-start
// checkpoints listing them all.
func WriteLogDir(dir string, o LogOptions, n int) ([]*LogStats, error) {
	if o.Topic == "" {
		o.Topic = "bench"
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 1 << 30
	}
	if o.BatchBytes < 128 {
		o.BatchBytes = 1024
	}
	if o.TotalBytes <= 0 {
		o.TotalBytes = 8 * o.SegmentBytes
	}
	if o.Producers <= 0 {
		o.Producers = 4
	}
	if o.HangingFrom == 0 {
		o.HangingFrom = o.SegmentBytes * 3 / 2
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	var sts []*LogStats
	for i := range max(n, 1) {
		po := o
		po.Partition, po.Seed = int32(i), o.Seed+uint64(i)
		pdir := filepath.Join(dir, fmt.Sprintf("%s-%d", o.Topic, i))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		lw := &logWriter{o: po, dir: pdir, st: &LogStats{Dir: pdir, HangingFirstOffset: -1}, ts: Start, producers: map[int64]*logProducer{}}
		if err := lw.run(); err != nil {
			return nil, err
		}
		if err := lw.retain(); err != nil {
			return nil, err
		}
		sts = append(sts, lw.st)
	}
	// OffsetCheckpointFile: version 0, the entry count, "topic partition offset" lines.
	for name, v := range map[string]func(*LogStats) int64{
		"replication-offset-checkpoint":    func(s *LogStats) int64 { return s.NextOffset },
		"recovery-point-offset-checkpoint": func(s *LogStats) int64 { return s.NextOffset },
		"log-start-offset-checkpoint":      func(s *LogStats) int64 { return s.LogStartOffset },
	} {
		b := fmt.Appendf(nil, "0\n%d\n", len(sts))
		for i, s := range sts {
			b = fmt.Appendf(b, "%s %d %d\n", o.Topic, i, v(s))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	return sts, nil
}

func (lw *logWriter) run() error {
	o := lw.o
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	lw.value = make([]byte, o.BatchBytes)
	for i := range lw.value {
		lw.value[i] = byte(r.Uint32())
	}
	txn := make([]*logProducer, o.Producers)
	for i := range txn {
		txn[i] = lw.producer(1000+int64(i), int16(i%3))
	}
	idem := lw.producer(idemPID, 0)
	if err := lw.open(); err != nil {
		return err
	}
	var hang *logProducer
	hangLeft, hangEvery, old := 0, int64(0), (*logProducer)(nil)
	if o.OldTxn {
		old = lw.producer(oldPID, 0)
		if err := lw.data(old, true); err != nil {
			return err
		}
	}
	lateDone := !o.OldTxnLateWrite
	written := int64(0)
	for written < o.TotalBytes {
		before := lw.st.Bytes
		switch {
		case !lateDone && len(lw.st.Segments) > o.DeleteSegments:
			lateDone = true
			if err := lw.data(old, true); err != nil {
				return err
			}
		case hang == nil && o.HangingFrom > 0 && written >= o.TotalBytes-o.HangingFrom:
			hang, hangLeft, hangEvery = lw.producer(hangingPID, 2), 3, max(o.SegmentBytes/int64(o.BatchBytes)/8, 1)
			lw.st.HangingFirstOffset = lw.off
			if err := lw.data(hang, true); err != nil {
				return err
			}
			hangLeft--
		case hang != nil && hangLeft > 0 && lw.off%hangEvery == 0:
			if err := lw.data(hang, true); err != nil {
				return err
			}
			hangLeft--
		case r.IntN(10) == 0:
			if err := lw.data(idem, false); err != nil {
				return err
			}
		default:
			p := txn[r.IntN(len(txn))]
			if p.txnFirst >= 0 && p.left == 0 {
				ctrl := int16(1)
				if r.IntN(10) == 0 {
					ctrl = 0
				}
				if err := lw.marker(p, ctrl); err != nil {
					return err
				}
				continue
			}
			if p.txnFirst < 0 {
				p.left = 1 + r.IntN(5)
			}
			p.left--
			if err := lw.data(p, true); err != nil {
				return err
			}
		}
		written += lw.st.Bytes - before
	}
	lw.st.NextOffset = lw.off
	return lw.close(false)
}

func (lw *logWriter) producer(id int64, epoch int16) *logProducer {
	p := &logProducer{id: id, epoch: epoch, lastOffset: -1, coordEpoch: -1, txnFirst: -1, lastTS: -1}
	lw.producers[id] = p
	return p
}

// data appends a data batch of p (transactional or idempotent) of
// BatchBytes: one record whose value fills it.
func (lw *logWriter) data(p *logProducer, txn bool) error {
	// 61-byte header, then one record: length varint, attributes,
	// timestamp and offset deltas, key (-1), value, header count.
	vlen := lw.o.BatchBytes - 61 - 9
	rec := kmsg.Record{Value: lw.value[:vlen]}
	if lw.o.Keyed {
		rec.Key = fmt.Appendf(nil, "key-%d", lw.off)
	}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	if d := 61 + len(rec.AppendTo(nil)) - lw.o.BatchBytes; d != 0 && vlen > d {
		// The varint lengths took another size: fit the value to it.
		rec.Value = lw.value[:vlen-d]
		rec.Length = 0 // a one-byte varint, as above: the length counts what follows it
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	}
	var attr int16
	if txn {
		attr = txnindex.AttrTransactional
	}
	if err := lw.batch(p, attr, rec); err != nil {
		return err
	}
	if txn && p.txnFirst < 0 {
		p.txnFirst = lw.off - 1
	}
	return nil
}

// marker appends p's end-transaction marker (ctrl 0 ABORT, 1 COMMIT)
// with coordinator epoch 3, and the .txnindex entry of an abort with the
// LSO the broker records (the first undecided offset of another producer,
// else the offset after the marker).
func (lw *logWriter) marker(p *logProducer, ctrl int16) error {
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(ctrl))
	value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 3)
	rec := kmsg.Record{Key: key, Value: value}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	first := p.txnFirst
	if err := lw.batch(p, txnindex.AttrTransactional|txnindex.AttrControl, rec); err != nil {
		return err
	}
	mo := lw.off - 1
	p.txnFirst, p.coordEpoch = -1, 3
	if ctrl == 0 {
		lw.st.Aborts++
		lso := mo + 1
		for _, q := range lw.producers {
			if q.txnFirst >= 0 && q.txnFirst < lso {
				lso = q.txnFirst
			}
		}
		lw.txnIndex = txnindex.AbortedTxn{ProducerID: txnindex.ProducerID(p.id), FirstOffset: first, LastOffset: mo, LastStableOffset: lso}.AppendTo(lw.txnIndex)
	} else {
		lw.st.Commits++
	}
	return nil
}

// batch encodes one batch of rec with kmsg (plus the CRC-32C patch, as
// kfake does), rolling first if it would not fit, and indexes it as
// LogSegment.append does.
func (lw *logWriter) batch(p *logProducer, attr int16, rec kmsg.Record) error {
	control := attr&txnindex.AttrControl != 0
	recs := rec.AppendTo(nil)
	rb := kmsg.RecordBatch{FirstOffset: lw.off, PartitionLeaderEpoch: 7, Magic: 2, Attributes: attr, LastOffsetDelta: 0,
		FirstTimestamp: lw.ts, MaxTimestamp: lw.ts, ProducerID: p.id, ProducerEpoch: p.epoch, FirstSequence: p.seq, NumRecords: 1, Records: recs}
	if control {
		rb.FirstSequence = -1
	}
	rb.Length = int32(49 + len(recs))
	lw.buf = rb.AppendTo(lw.buf[:0])
	binary.BigEndian.PutUint32(lw.buf[17:], crc32.Checksum(lw.buf[21:], castagnoli))
	if lw.size > 0 && lw.size+int64(len(lw.buf)) > lw.o.SegmentBytes {
		if err := lw.close(true); err != nil {
			return err
		}
		if err := lw.open(); err != nil {
			return err
		}
	}
	if lw.sinceIndex > indexInterval {
		lw.index = binary.BigEndian.AppendUint32(lw.index, uint32(lw.off-lw.base))
		lw.index = binary.BigEndian.AppendUint32(lw.index, uint32(lw.size))
		lw.appendTime()
		lw.sinceIndex = 0
	}
	if _, err := lw.w.Write(lw.buf); err != nil {
		return err
	}
	if lw.ts > lw.maxTS {
		lw.maxTS, lw.maxTSOff = lw.ts, lw.off
	}
	lw.size += int64(len(lw.buf))
	lw.sinceIndex += int64(len(lw.buf))
	lw.st.Bytes += int64(len(lw.buf))
	lw.st.Batches++
	if !control {
		p.seq++
		p.lastOffset, p.offsetDelta = lw.off, 0
	}
	p.lastTS = lw.ts
	lw.off++
	lw.ts++
	if n := len(lw.o.TimeSteps); n > 0 {
		lw.ts += max(lw.o.TimeSteps[(len(lw.st.Segments)-1)%n], 1) - 1
	}
	return nil
}

// appendTime is TimeIndex.maybeAppend: an entry only when the largest
// timestamp grew since the last one.
func (lw *logWriter) appendTime() {
	if lw.maxTS <= lw.lastIndexTS {
		return
	}
	lw.timeIndex = binary.BigEndian.AppendUint64(lw.timeIndex, uint64(lw.maxTS))
	lw.timeIndex = binary.BigEndian.AppendUint32(lw.timeIndex, uint32(lw.maxTSOff-lw.base))
	lw.lastIndexTS = lw.maxTS
}

func (lw *logWriter) open() error {
	lw.base = lw.off
	name := fmt.Sprintf("%020d.log", lw.base)
	f, err := os.Create(filepath.Join(lw.dir, name))
	if err != nil {
		return err
	}
	lw.f, lw.w = f, bufio.NewWriterSize(f, 1<<20)
	lw.size, lw.sinceIndex, lw.lastIndexTS = 0, 0, -1
	lw.index, lw.timeIndex, lw.txnIndex = lw.index[:0], lw.timeIndex[:0], lw.txnIndex[:0]
	lw.st.Segments = append(lw.st.Segments, name)
	return nil
}

// close finishes the segment: its .index, its .timeindex with the
// segment's largest timestamp appended (LogSegment.onBecomeInactiveSegment),
// its .txnindex if it has entries (TransactionIndex is created lazily),
// and on a roll the producer snapshot at the next offset.
func (lw *logWriter) close(roll bool) error {
	if err := lw.w.Flush(); err != nil {
		return err
	}
	if err := lw.f.Close(); err != nil {
		return err
	}
	lw.appendTime()
	files := map[string][]byte{".index": lw.index, ".timeindex": lw.timeIndex}
	if len(lw.txnIndex) > 0 {
		files[".txnindex"] = lw.txnIndex
	}
	for ext, b := range files {
		if err := os.WriteFile(filepath.Join(lw.dir, fmt.Sprintf("%020d%s", lw.base, ext)), b, 0o644); err != nil {
			return err
		}
	}
	if !roll || lw.o.NoSnapshots {
		return nil
	}
	name := fmt.Sprintf("%020d.snapshot", lw.off)
	lw.st.Snapshots = append(lw.st.Snapshots, name)
	return os.WriteFile(filepath.Join(lw.dir, name), lw.snapshot(), 0o644)
}

// snapshot encodes the producer state as ProducerStateManager
// .writeSnapshot does (ProducerSnapshot v1): version, CRC-32C of what
// follows it, the entry count, and 46 bytes per producer.
func (lw *logWriter) snapshot() []byte {
	ids := make([]int64, 0, len(lw.producers))
	for id := range lw.producers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	es := make([]loader.SnapshotEntry, 0, len(ids))
	for _, id := range ids {
		p := lw.producers[id]
		es = append(es, loader.SnapshotEntry{ProducerID: txnindex.ProducerID(p.id), Epoch: int16(p.epoch), LastSequence: int32(p.seq - 1),
			LastOffset: int64(p.lastOffset), OffsetDelta: int32(p.offsetDelta), Timestamp: int64(p.lastTS),
			CoordinatorEpoch: int32(p.coordEpoch), CurrentTxnFirstOffset: int64(p.txnFirst)})
	}
	return loader.AppendProducerSnapshot(nil, es)
}

// retain deletes the first DeleteSegments segments with their indexes and
// the snapshots below the new log start.
func (lw *logWriter) retain() error {
	st := lw.st
	k := min(lw.o.DeleteSegments, len(st.Segments)-1)
	if k <= 0 {
		st.LogStartOffset = 0
		return nil
	}
	var start int64
	if _, err := fmt.Sscanf(st.Segments[k], "%020d.log", &start); err != nil {
		return err
	}
	for _, s := range st.Segments[:k] {
		base := s[:20]
		for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex"} {
			if err := os.Remove(filepath.Join(lw.dir, base+ext)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	st.Segments = st.Segments[k:]
	var kept []string
	for _, s := range st.Snapshots {
		var off int64
		fmt.Sscanf(s, "%020d.snapshot", &off)
		if off < start {
			if err := os.Remove(filepath.Join(lw.dir, s)); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, s)
	}
	st.Snapshots, st.LogStartOffset = kept, start
	st.Bytes = 0
	for _, s := range st.Segments {
		fi, err := os.Stat(filepath.Join(lw.dir, s))
		if err != nil {
			return err
		}
		st.Bytes += fi.Size()
	}
	return nil
}
