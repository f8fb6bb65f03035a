// Package genlogdir writes a log directory of many small partitions with
// kmsg, shaped like a broker's log.dirs entry, for the tests and the
// benchmark of `serve --load DIR` (logindex): user topics, the internal
// __consumer_offsets and __transaction_state, KRaft's __cluster_metadata-0
// (a .checkpoint and indexes, no batches worth reading), the checkpoint
// files, and in every partition two segments with the producer .snapshot
// the broker writes at the roll. A few partitions are left with an open
// transaction ("stuck"): half of them opened before the roll, so that only
// the snapshot knows where it began.
package genlogdir

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Options shape the directory.
type Options struct {
	Topics     int // user topics, named t0, t1, ...
	Partitions int // partitions per user topic
	// Internal adds __consumer_offsets and __transaction_state with this
	// many partitions each (0: none).
	Internal int
	Metadata bool // add __cluster_metadata-0
	// Stuck lists user partitions ("t3-17") left with an open
	// transaction; StuckLag is how many offsets behind it leaves the LSO.
	Stuck    []string
	Batches  int // data batches per segment (default 4)
	StuckLag int // default 20
}

// Stats say what was written.
type Stats struct {
	Partitions int   // partition directories, internal ones included
	Bytes      int64 // bytes of segment files
}

// Start is the first batch's timestamp, 2026-01-01T00:00:00Z in ms.
const Start = 1767225600000

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Write creates the directory dir (which must not hold partitions yet).
func Write(dir string, o Options) (Stats, error) {
	if o.Batches <= 0 {
		o.Batches = 4
	}
	if o.StuckLag <= 0 {
		o.StuckLag = 20
	}
	stuck := map[string]int{}
	for i, s := range o.Stuck {
		stuck[s] = i
	}
	var st Stats
	var hwms []string
	part := func(topic string, p int) error {
		name := fmt.Sprintf("%s-%d", topic, p)
		si, isStuck := stuck[name]
		n, hwm, err := writePartition(filepath.Join(dir, name), o.Batches, isStuck, si%2 == 0, o.StuckLag, int64(st.Partitions))
		if err != nil {
			return err
		}
		st.Partitions++
		st.Bytes += n
		hwms = append(hwms, fmt.Sprintf("%s %d %d", topic, p, hwm))
		return nil
	}
	for t := range o.Topics {
		for p := range o.Partitions {
			if err := part(fmt.Sprintf("t%d", t), p); err != nil {
				return st, err
			}
		}
	}
	for _, topic := range []string{"__consumer_offsets", "__transaction_state"} {
		for p := range o.Internal {
			if err := part(topic, p); err != nil {
				return st, err
			}
		}
	}
	if o.Metadata {
		// KRaft's metadata log as a broker keeps it: a snapshot
		// .checkpoint and an empty active segment's indexes.
		md := filepath.Join(dir, "__cluster_metadata-0")
		if err := os.MkdirAll(md, 0o755); err != nil {
			return st, err
		}
		for _, f := range []string{"00000000000000001000-0000000001.checkpoint", "00000000000000001000.index", "00000000000000001000.timeindex", "partition.metadata"} {
			if err := os.WriteFile(filepath.Join(md, f), nil, 0o644); err != nil {
				return st, err
			}
		}
	}
	cp := fmt.Sprintf("0\n%d\n%s\n", len(hwms), strings.Join(hwms, "\n"))
	if err := os.WriteFile(filepath.Join(dir, "replication-offset-checkpoint"), []byte(cp), 0o644); err != nil {
		return st, err
	}
	return st, os.WriteFile(filepath.Join(dir, "meta.properties"), []byte("version=1\nnode.id=1\n"), 0o644)
}

// writePartition writes two segments: nb transactional data batches of
// producer 1000+seed, each committed, then the roll (and its snapshot),
// then as many again. A stuck partition's producer 7 opens a transaction
// and never ends it, early (before the roll) or late (in the last segment),
// with lag offsets written after it by other producers.
func writePartition(dir string, nb int, stuck, early bool, lag int, seed int64) (int64, int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	var segs [2][]byte
	off, ts := int64(0), int64(Start)+seed
	pid := 1000 + seed
	stuckFirst := int64(-1)
	seq := int32(0)
	stuckSeq := int32(0)
	openStuck := func(seg int) {
		stuckFirst = off
		segs[seg] = append(segs[seg], batch(off, 7, 0, true, stuckSeq, ts, 2)...)
		off += 2
		stuckSeq += 2
	}
	for seg := range 2 {
		if stuck && seg == 0 && early {
			openStuck(seg)
		}
		for range nb {
			segs[seg] = append(segs[seg], batch(off, pid, 0, true, seq, ts, 3)...)
			off += 3
			seq += 3
			ts += 1000
			segs[seg] = append(segs[seg], marker(off, pid, 0, true, ts)...)
			off++
		}
		if seg == 0 {
			continue
		}
		if stuck && !early {
			openStuck(seg)
		}
		if stuck {
			for w := 0; w < lag; w += 4 {
				segs[seg] = append(segs[seg], batch(off, -1, -1, false, -1, ts, 4)...)
				off += 4
				ts += 1000
			}
		}
	}
	roll := int64(0)
	var n int64
	for i, b := range segs {
		base := roll
		if i == 1 {
			// The second segment starts after the first's last batch.
			base = lastOffset(segs[0]) + 1
			roll = base
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.log", base)), b, 0o644); err != nil {
			return 0, 0, err
		}
		n += int64(len(b))
	}
	// At the roll the broker writes the producer state as of the new
	// segment's base offset (ProducerStateManager.takeSnapshot): our
	// producer's last batch, and the stuck producer's open transaction.
	ents := [][2]int64{{pid, -1}}
	if stuck && early {
		ents = append(ents, [2]int64{7, stuckFirst})
	}
	snap := snapshot(ents, roll, ts)
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.snapshot", roll)), snap, 0o644); err != nil {
		return 0, 0, err
	}
	return n, off, nil
}

func lastOffset(seg []byte) int64 {
	var last int64
	for len(seg) >= 61 {
		base := int64(binary.BigEndian.Uint64(seg))
		size := int(binary.BigEndian.Uint32(seg[8:])) + 12
		last = base + int64(int32(binary.BigEndian.Uint32(seg[23:])))
		seg = seg[size:]
	}
	return last
}

// batch is a v2 batch of n records at off from producer pid.
func batch(off, pid int64, epoch int16, txn bool, seq int32, ts int64, n int) []byte {
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "k%d", off+int64(i)), Value: []byte("value")}
	}
	rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 0, FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: pid,
		ProducerEpoch: epoch, FirstSequence: seq, LastOffsetDelta: int32(n - 1)}
	if txn {
		rb.Attributes = 0x10
	}
	return encode(rb, recs)
}

// marker is the COMMIT (or ABORT) control batch the coordinator writes.
func marker(off, pid int64, epoch int16, commit bool, ts int64) []byte {
	typ := uint16(0)
	if commit {
		typ = 1
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), typ)
	val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 0)
	rb := kmsg.RecordBatch{FirstOffset: off, Attributes: 0x10 | 0x20, FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: pid,
		ProducerEpoch: epoch, FirstSequence: -1}
	return encode(rb, []kmsg.Record{{Key: key, Value: val}})
}

func encode(rb kmsg.RecordBatch, recs []kmsg.Record) []byte {
	var body []byte
	for i := range recs {
		r := recs[i]
		r.Length = 0
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		body = r.AppendTo(body)
	}
	rb.Records = body
	rb.NumRecords = int32(len(recs))
	rb.Magic = 2
	rb.Length = int32(49 + len(body))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoli))
	return out
}

// snapshot encodes producer entries (id, current transaction's first
// offset or -1) as ProducerStateManager.writeSnapshot does: version 1,
// CRC-32C of the rest, the count, 46 bytes per entry.
func snapshot(ents [][2]int64, last, ts int64) []byte {
	b := binary.BigEndian.AppendUint16(nil, 1)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ents)))
	for _, e := range ents {
		b = binary.BigEndian.AppendUint64(b, uint64(e[0]))
		b = binary.BigEndian.AppendUint16(b, 0)
		b = binary.BigEndian.AppendUint32(b, 0)
		b = binary.BigEndian.AppendUint64(b, uint64(last-1))
		b = binary.BigEndian.AppendUint32(b, 0)
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
		b = binary.BigEndian.AppendUint32(b, 0)
		b = binary.BigEndian.AppendUint64(b, uint64(e[1]))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}
