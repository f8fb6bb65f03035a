package loader_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// diagnoseJSON is the diagnosis of the loaded partition, Replay and what
// the clients deliver (which covers the batches read) left out, aged at a
// fixed clock.
func diagnoseJSON(t *testing.T, p *loader.Partition) string {
	t.Helper()
	d := present.Diagnose(p.Build(), diagnosis.Options{Now: time.UnixMilli(gen.Start + 3_600_000*24), Position: -1})
	d.Replay, d.ClientDepartures = nil, nil
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpenPartitionTailEqualsFullReplay: on broker-shaped logs (kmsg
// batches, .snapshot at each roll, indexes) the diagnosis from the newest
// snapshot and the segments after it equals the full replay's, for
// transactions open across the snapshot, begun before the log start, and
// with no snapshot at all (which falls back and says so).
func TestOpenPartitionTailEqualsFullReplay(t *testing.T) {
	const seg = 64 << 10
	cases := []struct {
		name    string
		o       gen.LogOptions
		mode    string
		hanging bool // reading starts at the segment of the hanging transaction's first offset
		reason  string
	}{
		// The hanging transaction begins in the second-to-last segment:
		// the snapshot at the last roll has it open, so reading starts
		// a segment before the snapshot.
		{"hanging in last two", gen.LogOptions{}, txnindex.ReplaySnapshot, true, "producer 9000's transaction"},
		{"hanging in last four", gen.LogOptions{HangingFrom: seg * 7 / 2}, txnindex.ReplaySnapshot, true, "producer 9000's transaction"},
		{"no hanging", gen.LogOptions{HangingFrom: -1, Seed: 3}, txnindex.ReplaySnapshot, false, ""},
		// Retention deleted where producer 8000's transaction began; only
		// the snapshot remembers it, and no batch of it survives.
		{"began before log start", gen.LogOptions{OldTxn: true, DeleteSegments: 2, Seed: 5}, txnindex.ReplaySnapshot, true, "producer 9000"},
		// Some of it survives: its data from the log start on is needed.
		{"began before log start, data survives", gen.LogOptions{OldTxn: true, OldTxnLateWrite: true, DeleteSegments: 2, Seed: 7},
			txnindex.ReplayFull, false, "began at offset 0, before the log start"},
		{"open since the first segment", gen.LogOptions{OldTxn: true, Seed: 9}, txnindex.ReplayFull, false, "is in the first segment, so every segment is read"},
		{"no snapshots", gen.LogOptions{NoSnapshots: true}, txnindex.ReplayFull, false, "no producer snapshot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.SegmentBytes, o.BatchBytes, o.TotalBytes = seg, 1024, 9*seg
			dir := t.TempDir()
			st, err := gen.WriteLog(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			full, err := loader.OpenPartition(st.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(full.Damage) > 0 {
				t.Errorf("the generated log has damage: %v", full.Damage)
			}
			// The generator's snapshot is the broker's producer state: every
			// transaction the replay finds open at the end that began
			// before the newest snapshot's offset is open in it, from there.
			if s := full.Snapshot; s != nil {
				l := full.Build()
				for _, ti := range l.Open {
					tx := l.Txns[ti]
					if tx.FirstOffset >= s.Offset {
						continue
					}
					found := false
					for _, e := range s.Entries {
						found = found || e.ProducerID == tx.ProducerID && e.CurrentTxnFirstOffset == tx.FirstOffset
					}
					if !found {
						t.Errorf("producer %d's transaction from %d is open at the end but not in %s", tx.ProducerID, tx.FirstOffset, s.Name)
					}
				}
			}
			tail, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := tail.Input.Replay
			if r == nil || r.Mode != tc.mode || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("replay %+v, want mode %s with reason containing %q", r, tc.mode, tc.reason)
			}
			if tc.hanging {
				want := 0
				for i, s := range st.Segments {
					if s[:20] <= fmt.Sprintf("%020d", st.HangingFirstOffset) {
						want = len(st.Segments) - i
					}
				}
				if r.SegmentsRead != want || want > 3 && tc.o.HangingFrom == 0 || len(tail.Input.Batches) >= len(full.Input.Batches) {
					t.Errorf("read %d segments (%d of %d batches), want %d", r.SegmentsRead, len(tail.Input.Batches), len(full.Input.Batches), want)
				}
			}
			// Inside the segment holding the hanging transaction's first
			// offset, reading starts at the .index entry at or below it:
			// the batches before it in that segment are not read.
			if tc.hanging && !tc.o.OldTxn {
				var base int64
				for _, s := range st.Segments {
					if b, _ := strconv.ParseInt(s[:20], 10, 64); b <= st.HangingFirstOffset {
						base = b
					}
				}
				if st.HangingFirstOffset-base > 16 && (r.FromOffset <= base || r.FromOffset > st.HangingFirstOffset) {
					t.Errorf("reading starts at offset %d, want inside segment %d at or below the hanging transaction's first offset %d", r.FromOffset, base, st.HangingFirstOffset)
				}
				if r.FromOffset > base && r.BytesRead >= int64(r.SegmentsRead)*seg {
					t.Errorf("read %d bytes of %d segments from offset %d: the start of the first was read too", r.BytesRead, r.SegmentsRead, r.FromOffset)
				}
			}
			if r.Segments != len(st.Segments) {
				t.Errorf("replay counts %d segments, the log has %d", r.Segments, len(st.Segments))
			}
			want, got := diagnoseJSON(t, full), diagnoseJSON(t, tail)
			if want != got {
				t.Fatalf("seeded diagnosis differs from the full replay:\nfull:\n%s\nseeded:\n%s", want, got)
			}
			if o.HangingFrom >= 0 && !strings.Contains(want, `"producer_id": 9000`) {
				t.Errorf("the hanging transaction is not in the diagnosis:\n%s", want)
			}
			if o.OldTxn && o.DeleteSegments > 0 && !strings.Contains(want, `"began_before_log_start": true`) {
				t.Errorf("no transaction began before the log start:\n%s", want)
			}
		})
	}
}

// TestOpenPartitionTailFallbacks: a damaged newest snapshot is passed over
// for the next clean one (as the broker does); a snapshot past the high
// watermark, a consumer position in the first segment and a segment with no .timeindex read the
// whole log and say why.
func TestOpenPartitionTailFallbacks(t *testing.T) {
	const seg = 64 << 10
	write := func(t *testing.T) *gen.LogStats {
		dir := t.TempDir()
		st, err := gen.WriteLog(dir, gen.LogOptions{SegmentBytes: seg, BatchBytes: 1024, TotalBytes: 9 * seg, HangingFrom: seg / 2})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	open := func(t *testing.T, st *gen.LogStats, pos int64) *loader.Partition {
		p, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: pos})
		if err != nil {
			t.Fatal(err)
		}
		full, err := loader.OpenPartition(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if want, got := diagnoseJSON(t, full), diagnoseJSON(t, p); want != got {
			t.Fatalf("differs from the full replay:\nfull:\n%s\ngot:\n%s", want, got)
		}
		return p
	}
	t.Run("damaged newest snapshot", func(t *testing.T) {
		st := write(t)
		newest := filepath.Join(st.Dir, st.Snapshots[len(st.Snapshots)-1])
		if err := os.WriteFile(newest, []byte("not a snapshot"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := open(t, st, -1)
		if r := p.Input.Replay; r.Mode != txnindex.ReplaySnapshot || r.Snapshot != st.Snapshots[len(st.Snapshots)-2] {
			t.Errorf("replay %+v, want seeded from %s", r, st.Snapshots[len(st.Snapshots)-2])
		}
	})
	// An .index whose entries point inside batches is not trusted for
	// where to start: the segment holding the hanging transaction's first
	// offset is read from its start.
	t.Run("damaged index", func(t *testing.T) {
		st := write(t)
		seg := hangingSegment(st)
		idx := filepath.Join(st.Dir, seg+".index")
		b, err := os.ReadFile(idx)
		if err != nil || len(b) < 16 {
			t.Fatalf("%s: %d bytes, %v", idx, len(b), err)
		}
		for i := 0; i+8 <= len(b); i += 8 {
			b[i+7]++ // every position one byte on
		}
		if err := os.WriteFile(idx, b, 0o644); err != nil {
			t.Fatal(err)
		}
		p := open(t, st, -1)
		if r := p.Input.Replay; r.Mode != txnindex.ReplaySnapshot || fmt.Sprintf("%020d", r.FromOffset) != seg {
			t.Errorf("replay %+v, want it to read segment %s from its start", r, seg)
		}
	})
	// CRCs are checked from the recovery point on, as broker recovery
	// does: a bad CRC in a flushed segment is trusted, one at or above the
	// recovery point stops the scan there.
	t.Run("CRCs from the recovery point", func(t *testing.T) {
		st := write(t)
		seg := hangingSegment(st)
		healthy, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: -1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(st.Dir, seg+".index"))
		if err != nil || len(b) < 8 {
			t.Fatalf("%s.index: %d bytes, %v", seg, len(b), err)
		}
		pos := int64(binary.BigEndian.Uint32(b[len(b)-4:])) + 100 // a record of the segment's last indexed batch
		f, err := os.OpenFile(filepath.Join(st.Dir, seg+".log"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		var c [1]byte
		if _, err := f.ReadAt(c[:], pos); err != nil {
			t.Fatal(err)
		}
		c[0] ^= 0xff
		if _, err := f.WriteAt(c[:], pos); err != nil {
			t.Fatal(err)
		}
		f.Close()
		tail := func() *loader.Partition {
			p, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: -1})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p := tail()
		if r := p.Input.Replay; r.Mode != txnindex.ReplaySnapshot || r.CRCFrom != st.NextOffset || len(p.Damage) != 0 {
			t.Errorf("recovery point at the log end: replay %+v, damage %v; want the flushed segment %s trusted", r, p.Damage, seg)
		}
		if !strings.Contains(present.ReplayLine(p.Input.Replay), fmt.Sprintf("CRCs checked from the recovery point %d on", st.NextOffset)) {
			t.Errorf("the replay line does not say where CRCs were checked: %s", present.ReplayLine(p.Input.Replay))
		}
		base, _ := strconv.ParseInt(seg, 10, 64)
		cp := fmt.Sprintf("0\n1\nbench 0 %d\n", base)
		if err := os.WriteFile(filepath.Join(filepath.Dir(st.Dir), "recovery-point-offset-checkpoint"), []byte(cp), 0o644); err != nil {
			t.Fatal(err)
		}
		p = tail()
		if r := p.Input.Replay; r.CRCFrom != 0 || len(p.Damage) != 1 || !strings.Contains(p.Damage[0].Error(), "bad CRC") {
			t.Errorf("recovery point at segment %s: replay %+v, damage %v; want the bad CRC found", seg, r, p.Damage)
		}
		// The broker's clean shutdown marker: its next start recovers
		// no segment (LogLoader skips recoverLog), so none is checked,
		// and the line says why. A directory of that name is no marker.
		marker := filepath.Join(filepath.Dir(st.Dir), loader.CleanShutdownFile)
		if err := os.Mkdir(marker, 0o755); err != nil {
			t.Fatal(err)
		}
		if p := tail(); p.Input.Replay.CleanShutdown || len(p.Damage) != 1 {
			t.Errorf("a directory named %s: replay %+v, damage %v; want it ignored", loader.CleanShutdownFile, p.Input.Replay, p.Damage)
		}
		if err := os.Remove(marker); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(marker, []byte(`{"version":0,"brokerEpoch":7}`), 0o644); err != nil {
			t.Fatal(err)
		}
		p = tail()
		// The batch is kept, as the broker serves it, and named: a
		// replay that checks CRCs ends the log before it.
		if r := p.Input.Replay; !r.CleanShutdown || r.CRCFrom != 0 || len(p.Damage) != 1 || !strings.Contains(p.Damage[0].Error(), "bad CRC") ||
			!strings.Contains(p.Damage[0].Error(), "kept: the broker's start after its clean shutdown") {
			t.Errorf("clean shutdown marker: replay %+v, damage %v; want every segment trusted and the bad CRC named", r, p.Damage)
		}
		if got, want := len(p.Input.Batches), len(healthy.Input.Batches); got != want {
			t.Errorf("clean shutdown marker: %d batches, want the %d of the undamaged log (no segment cut)", got, want)
		}
		if line := present.ReplayLine(p.Input.Replay); !strings.Contains(line, "no segment cut at a bad CRC: the log directory has .kafka_cleanshutdown") {
			t.Errorf("the replay line does not say why no segment was cut: %s", line)
		}
	})
	t.Run("position in the first segment", func(t *testing.T) {
		p := open(t, write(t), 10)
		if r := p.Input.Replay; r.Mode != txnindex.ReplayFull || !strings.Contains(r.Reason, "position 10") {
			t.Errorf("replay %+v", r)
		}
	})
	t.Run("past the high watermark", func(t *testing.T) {
		st := write(t)
		cp := "0\n1\nbench 0 5\n"
		if err := os.WriteFile(filepath.Join(filepath.Dir(st.Dir), "replication-offset-checkpoint"), []byte(cp), 0o644); err != nil {
			t.Fatal(err)
		}
		p := open(t, st, -1)
		if r := p.Input.Replay; r.Mode != txnindex.ReplayFull || !strings.Contains(r.Reason, "past the high watermark 5") {
			t.Errorf("replay %+v", r)
		}
	})
	// A newer snapshot than the high watermark (a follower's roll, a
	// copied log dir whose checkpoint lags) is passed over, not the load:
	// the one before it seeds it.
	t.Run("newest snapshot past the high watermark", func(t *testing.T) {
		st := write(t)
		newest := st.Snapshots[len(st.Snapshots)-1]
		// High watermarks just below each of the last snapshots and
		// inside the segment before: each load equals the full one.
		for k := len(st.Snapshots) - 1; k >= len(st.Snapshots)-3; k-- {
			off, _ := strconv.ParseInt(st.Snapshots[k][:20], 10, 64)
			for _, hwm := range []int64{off - 1, off - 9} {
				cp := fmt.Sprintf("0\n1\nbench 0 %d\n", hwm)
				if err := os.WriteFile(filepath.Join(filepath.Dir(st.Dir), "replication-offset-checkpoint"), []byte(cp), 0o644); err != nil {
					t.Fatal(err)
				}
				p := open(t, st, -1)
				r := p.Input.Replay
				if r.Mode != txnindex.ReplaySnapshot || r.Snapshot != st.Snapshots[k-1] || !strings.Contains(r.SnapshotPassed, fmt.Sprintf("is past the high watermark %d", hwm)) {
					t.Errorf("high watermark %d: replay %+v, want seeded from %s, %s passed over", hwm, r, st.Snapshots[k-1], newest)
				}
				if !strings.Contains(present.ReplayLine(r), "past the high watermark") {
					t.Errorf("the replay line does not say why %s was passed over: %s", newest, present.ReplayLine(r))
				}
			}
		}
	})
	// A snapshot past the log end (left by a log truncated after it) is
	// deleted by the broker on startup, which loads the one before: so
	// does the seeded load.
	t.Run("newest snapshot past the log end", func(t *testing.T) {
		st := write(t)
		if err := os.Remove(filepath.Join(filepath.Dir(st.Dir), "replication-offset-checkpoint")); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(st.Dir, st.Snapshots[len(st.Snapshots)-1]))
		if err != nil {
			t.Fatal(err)
		}
		stray := fmt.Sprintf("%020d.snapshot", st.NextOffset+100)
		if err := os.WriteFile(filepath.Join(st.Dir, stray), b, 0o644); err != nil {
			t.Fatal(err)
		}
		p := open(t, st, -1)
		r := p.Input.Replay
		if r.Mode != txnindex.ReplaySnapshot || r.Snapshot != st.Snapshots[len(st.Snapshots)-1] || !strings.Contains(r.SnapshotPassed, "past the log end") {
			t.Errorf("replay %+v, want seeded from %s, %s passed over", r, st.Snapshots[len(st.Snapshots)-1], stray)
		}
		ignored := false
		for _, f := range p.Ignored {
			ignored = ignored || f.Name == stray && strings.Contains(f.Reason, "past the log end")
		}
		if !ignored {
			t.Errorf("ignored %v: want %s, which the broker deletes", p.Ignored, stray)
		}
	})
	t.Run("no timeindex", func(t *testing.T) {
		st := write(t)
		if err := os.Remove(filepath.Join(st.Dir, st.Segments[1][:20]+".timeindex")); err != nil {
			t.Fatal(err)
		}
		p := open(t, st, -1)
		if r := p.Input.Replay; r.Mode != txnindex.ReplayFull || !strings.Contains(r.Reason, "no .timeindex") {
			t.Errorf("replay %+v", r)
		}
	})
	t.Run("timeindex ending in a zero slot", func(t *testing.T) {
		st := write(t)
		ti := filepath.Join(st.Dir, st.Segments[1][:20]+".timeindex")
		f, err := os.OpenFile(ti, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 12))
		f.Close()
		p := open(t, st, -1)
		if r := p.Input.Replay; r.Mode != txnindex.ReplayFull || !strings.Contains(r.Reason, "does not end with an entry") {
			t.Errorf("replay %+v", r)
		}
	})
}

// hangingSegment is the base name (20 digits) of the segment holding the
// hanging transaction's first offset.
func hangingSegment(st *gen.LogStats) string {
	var seg string
	for _, s := range st.Segments {
		if s[:20] <= fmt.Sprintf("%020d", st.HangingFirstOffset) {
			seg = s[:20]
		}
	}
	return seg
}

// TestOpenPartitionTailCompactionScope: the log cleaner's marks in the
// segments a seeded load skips are not seen (the broker's recovery does not
// read them either), so the compaction evidence of a seeded diagnosis
// covers the segments read and says so, and everything else equals the full
// replay's. Here the partition has a cleaner-offset-checkpoint line and a
// marker in the second segment carries the cleaner's delete horizon
// (KIP-534), which only the full replay reads.
func TestOpenPartitionTailCompactionScope(t *testing.T) {
	const seg = 64 << 10
	dir := t.TempDir()
	st, err := gen.WriteLog(dir, gen.LogOptions{SegmentBytes: seg, BatchBytes: 1024, TotalBytes: 9 * seg})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(st.Dir, st.Segments[1])
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marked := int64(-1)
	for pos := 0; pos+61 <= len(b); {
		n := 12 + int(binary.BigEndian.Uint32(b[pos+8:]))
		if attr := binary.BigEndian.Uint16(b[pos+21:]); attr&0x20 != 0 && marked < 0 {
			binary.BigEndian.PutUint16(b[pos+21:], attr|0x40)
			binary.BigEndian.PutUint32(b[pos+17:], crc32.Checksum(b[pos+21:pos+n], crc32.MakeTable(crc32.Castagnoli)))
			marked = int64(binary.BigEndian.Uint64(b[pos:]))
		}
		pos += n
	}
	if marked < 0 {
		t.Fatalf("%s holds no marker", path)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	base, _ := strconv.ParseInt(st.Segments[2][:20], 10, 64)
	if err := os.WriteFile(filepath.Join(dir, "cleaner-offset-checkpoint"), fmt.Appendf(nil, "0\n1\nbench 0 %d\n", base), 0o644); err != nil {
		t.Fatal(err)
	}

	full, err := loader.OpenPartition(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Damage)+len(tail.Damage) > 0 {
		t.Fatalf("damage: %v %v", full.Damage, tail.Damage)
	}
	r := tail.Input.Replay
	if r == nil || r.Mode != txnindex.ReplaySnapshot || r.FromOffset <= marked {
		t.Fatalf("replay %+v: want it seeded, reading from above the marked marker at %d", r, marked)
	}
	now := time.UnixMilli(gen.Start + 3_600_000*24)
	fd := present.Diagnose(full.Build(), diagnosis.Options{Now: now, Position: -1})
	td := present.Diagnose(tail.Build(), diagnosis.Options{Now: now, Position: -1})
	if fd.Compaction == nil || td.Compaction == nil {
		t.Fatalf("compaction: full %+v, seeded %+v", fd.Compaction, td.Compaction)
	}
	horizon := func(ev []string) bool {
		for _, e := range ev {
			if strings.Contains(e, "delete horizon") {
				return true
			}
		}
		return false
	}
	if !horizon(fd.Compaction.Evidence) || horizon(td.Compaction.Evidence) {
		t.Errorf("delete-horizon evidence: full %q, seeded %q", fd.Compaction.Evidence, td.Compaction.Evidence)
	}
	// The scope names the flag that reads every segment (present.Hints),
	// as the JSON and the runbook always have.
	if fd.Compaction.Scope != "" || !strings.Contains(td.Compaction.Scope, fmt.Sprintf("from offset %d", r.FromOffset)) ||
		!strings.HasSuffix(td.Compaction.Scope, " not read (--full-replay reads every segment)") {
		t.Errorf("scope: full %q, seeded %q", fd.Compaction.Scope, td.Compaction.Scope)
	}
	if !strings.Contains(present.Runbook(td), td.Compaction.Scope) || !strings.Contains(present.ReplayLine(r), "not read") {
		t.Errorf("the runbook does not say what the evidence covers:\n%s", present.Runbook(td))
	}
	fd.Compaction, td.Compaction, fd.Replay, td.Replay = nil, nil, nil, nil
	fd.ClientDepartures, td.ClientDepartures = nil, nil // they cover the batches read
	a, _ := json.MarshalIndent(fd, "", " ")
	c, _ := json.MarshalIndent(td, "", " ")
	if string(a) != string(c) {
		t.Errorf("beyond the compaction evidence, the seeded diagnosis differs from the full replay:\nfull:\n%s\nseeded:\n%s", a, c)
	}
}

// TestOpenPartitionTailPositionEqualsFullReplay: with a consumer position
// (diagnose --position), the seeded load reads from the position too when
// it lies before where the snapshot's reading starts, and the diagnosis,
// lag split included, equals the full replay's, for positions anywhere in
// the segments after the first: a fetch from the position reads the
// segments from the one holding it on, and their .txnindex for the aborted
// list. A position in the first segment reads the whole log.
func TestOpenPartitionTailPositionEqualsFullReplay(t *testing.T) {
	const seg = 64 << 10
	withAborts := 0
	for _, o := range []gen.LogOptions{
		{},
		{HangingFrom: seg * 7 / 2, Seed: 11},
		{HangingFrom: -1, Seed: 3},
		{OldTxn: true, DeleteSegments: 2, Seed: 5},
	} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes = seg, 1024, 9*seg
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		full, err := loader.OpenPartition(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		fl := full.Build()
		second, _ := strconv.ParseInt(st.Segments[1][:20], 10, 64)
		positions := []int64{st.LogStartOffset, second - 1, second, fl.LastStableOffset, fl.HighWatermark, fl.HighWatermark + 3}
		if st.HangingFirstOffset >= 0 {
			positions = append(positions, st.HangingFirstOffset-1, st.HangingFirstOffset, st.HangingFirstOffset+1)
		}
		for i := range 12 {
			positions = append(positions, second+(fl.HighWatermark-second)*int64(i)/12+int64(i%3))
		}
		seeded := 0
		for _, pos := range positions {
			tail, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: pos})
			if err != nil {
				t.Fatal(err)
			}
			r := tail.Input.Replay
			if r.Mode == txnindex.ReplaySnapshot {
				seeded++
				if r.FromOffset > pos && pos < fl.LogEndOffset {
					t.Errorf("seed %d, position %d: reading starts at %d, after the position", o.Seed, pos, r.FromOffset)
				}
			} else if pos >= second {
				t.Errorf("seed %d, position %d: %s", o.Seed, pos, present.ReplayLine(r))
			}
			do := diagnosis.Options{Now: time.UnixMilli(gen.Start + 3_600_000*24), Position: pos}
			fd, td := present.Diagnose(fl, do), present.Diagnose(tail.Build(), do)
			fd.Replay, td.Replay = nil, nil
			fd.ClientDepartures, td.ClientDepartures = nil, nil // they cover the batches read
			if td.Compaction != nil {
				td.Compaction.Scope = ""
			}
			a, _ := json.MarshalIndent(fd, "", " ")
			b, _ := json.MarshalIndent(td, "", " ")
			if string(a) != string(b) {
				t.Fatalf("seed %d, position %d (%s): the seeded diagnosis differs from the full replay:\nfull:\n%s\nseeded:\n%s", o.Seed, pos, present.ReplayLine(r), a, b)
			}
			if fd.Lag == nil {
				t.Fatalf("position %d: no lag split", pos)
			}
			if r.Mode == txnindex.ReplaySnapshot && fd.Lag.Aborted > 0 && fd.Lag.ControlMarkers > 0 {
				withAborts++
			}
		}
		if seeded < len(positions)/2 {
			t.Errorf("seed %d: %d of %d positions read from the snapshot", o.Seed, seeded, len(positions))
		}
	}
	if withAborts == 0 {
		t.Error("no seeded lag split had aborted records to skip")
	}
}
