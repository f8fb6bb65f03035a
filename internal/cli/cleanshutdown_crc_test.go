package cli

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/hostilebroker"
	"github.com/txnscope/txnscope/loader"
)

// cleanShutdownDir is a log directory holding the broker's clean shutdown
// marker and partition t-0 of two segments: at 0 a plain batch (0-1); at 2
// a transaction of producer 7 (2-4), its COMMIT marker at 5, whose CRC is
// wrong (badCRC) or right, and a plain batch at 6-7. The producer snapshot
// at 2 holds no transaction, so the default diagnose reads the second
// segment only, as the broker's start would; the high watermark is 8.
func cleanShutdownDir(t *testing.T, badCRC bool) string {
	t.Helper()
	root := t.TempDir()
	part := filepath.Join(root, "t-0")
	if err := os.Mkdir(part, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := func(base int64) []byte {
		return hostilebroker.Batch(kmsg.RecordBatch{FirstOffset: base, LastOffsetDelta: 1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, FirstTimestamp: 1000, MaxTimestamp: 1000},
			2, hostilebroker.Records(kmsg.Record{Value: []byte("a")}, kmsg.Record{OffsetDelta: 1, Value: []byte("b")}))
	}
	txn := kmsg.RecordBatch{FirstOffset: 2, Attributes: 0x10, LastOffsetDelta: 2, ProducerID: 7, ProducerEpoch: 1, FirstSequence: 0, FirstTimestamp: 1001, MaxTimestamp: 1001}
	var recs []kmsg.Record
	for i := range 3 {
		recs = append(recs, kmsg.Record{OffsetDelta: int32(i), Value: []byte("v")})
	}
	marker := hostilebroker.Batch(kmsg.RecordBatch{FirstOffset: 5, Attributes: 0x30, ProducerID: 7, ProducerEpoch: 1, FirstSequence: -1, FirstTimestamp: 1002, MaxTimestamp: 1002},
		1, hostilebroker.Records(hostilebroker.Marker(true, 5)))
	if badCRC {
		binary.BigEndian.PutUint32(marker[17:], binary.BigEndian.Uint32(marker[17:])^0xdead)
	}
	second := append(append(hostilebroker.Batch(txn, 3, hostilebroker.Records(recs...)), marker...), plain(6)...)
	files := map[string][]byte{
		filepath.Join(part, "00000000000000000000.log"):           plain(0),
		filepath.Join(part, "00000000000000000000.timeindex"):     binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, 1000), 1),
		filepath.Join(part, "00000000000000000002.log"):           second,
		filepath.Join(part, "00000000000000000002.snapshot"):      loader.AppendProducerSnapshot(nil, nil),
		filepath.Join(root, loader.ReplicationOffsetCheckpoint):   []byte("0\n1\nt 0 8\n"),
		filepath.Join(root, loader.RecoveryPointOffsetCheckpoint): []byte("0\n1\nt 0 8\n"),
		filepath.Join(root, loader.CleanShutdownFile):             nil,
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return part
}

// TestCleanShutdownBadCRC: under the clean shutdown marker the broker
// recovers no segment and serves a batch whose CRC is wrong, so the
// default diagnose and --full-replay both decide from it as the broker
// does (loader.ServedCRCs), and both say which batch fails and that it is
// kept: they once disagreed on the log end, the high watermark and the
// open transactions.
func TestCleanShutdownBadCRC(t *testing.T) {
	for _, bad := range []bool{false, true} {
		dir := cleanShutdownDir(t, bad)
		_, def, defErr := runArgs(t, "diagnose", "--format", "json", dir)
		_, full, fullErr := runArgs(t, "diagnose", "--format", "json", "--full-replay", dir)
		var a, b diagAnswer
		for _, x := range []struct {
			js  string
			out *diagAnswer
		}{{def, &a}, {full, &b}} {
			var doc struct {
				Partitions []diagAnswer `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(x.js), &doc); err != nil || len(doc.Partitions) != 1 {
				t.Fatalf("json: %v\n%s", err, x.js)
			}
			*x.out = doc.Partitions[0]
		}
		if a.answer() != b.answer() || a.HWM != 8 || a.LSO != 8 {
			t.Errorf("bad CRC %v: the default says %v, --full-replay %v; want both LSO and HWM 8", bad, a.answer(), b.answer())
		}
		for _, errOut := range []string{defErr, fullErr} {
			said := strings.Contains(errOut, "bad CRC: stored") && strings.Contains(errOut, "kept: the broker's start after its clean shutdown")
			if said != bad {
				t.Errorf("bad CRC %v: warnings say it is kept: %v:\n%s", bad, said, errOut)
			}
		}
	}
}

// TestBadCRCBelowTheRecoveryPoint: without the clean shutdown marker, a
// batch whose CRC fails in a segment wholly below the recovery point is
// served as it is (no start recovers the segment), so both reads keep it,
// and the full replay notes it; at or above the recovery point the
// segment ends before it, and the full replay says what a restart after an
// unclean shutdown takes.
func TestBadCRCBelowTheRecoveryPoint(t *testing.T) {
	for _, c := range []struct {
		rp        string
		kept      bool
		truncates bool
	}{{rp: "2", kept: true}, {rp: "0", truncates: true}} {
		dir := cleanShutdownDir(t, true)
		root := filepath.Dir(dir)
		if err := os.Remove(filepath.Join(root, loader.CleanShutdownFile)); err != nil {
			t.Fatal(err)
		}
		// The marker's segment is the last: put the bad batch in the
		// first one, below a recovery point of 2.
		first := filepath.Join(dir, "00000000000000000000.log")
		raw, err := os.ReadFile(first)
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)-1] ^= 0xff
		if err := os.WriteFile(first, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000002.log"), rewriteCRC(t, dir), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, loader.RecoveryPointOffsetCheckpoint), []byte("0\n1\nt 0 "+c.rp+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, full, fullErr := runArgs(t, "decide", "--full-replay", "--counts", dir)
		gotKept := strings.Contains(full, "delivered                        7")
		if gotKept != c.kept {
			t.Errorf("recovery point %s: the first batch kept %v, want %v:\n%s%s", c.rp, gotKept, c.kept, full, fullErr)
		}
		if c.kept && !strings.Contains(fullErr, "kept: the segment lies below the partition's recovery point") {
			t.Errorf("recovery point %s: no note of the kept batch:\n%s", c.rp, fullErr)
		}
		_, diag, _ := runArgs(t, "diagnose", "--full-replay", dir)
		if got := strings.Contains(diag, "AN UNCLEAN RESTART TRUNCATES THIS LOG at offset 0"); got != c.truncates {
			t.Errorf("recovery point %s: truncation said %v, want %v:\n%s", c.rp, got, c.truncates, diag)
		}
	}
}

// rewriteCRC is the second segment of dir with its marker's CRC made
// right again (cleanShutdownDir spoils it).
func rewriteCRC(t *testing.T, dir string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "00000000000000000002.log"))
	if err != nil {
		t.Fatal(err)
	}
	for pos := 0; pos+61 <= len(raw); {
		n := int(binary.BigEndian.Uint32(raw[pos+8:])) + 12
		binary.BigEndian.PutUint32(raw[pos+17:], crc32.Checksum(raw[pos+21:pos+n], crc32.MakeTable(crc32.Castagnoli)))
		pos += n
	}
	return raw
}
