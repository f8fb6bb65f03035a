package cli

import (
	"encoding/binary"
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
// default diagnose decides from it as the broker does, while
// --full-replay, which checks CRCs as recovery does, ends the log before
// it: they disagreed on the log end, the high watermark and the open
// transactions, and the default said nothing of the damage. Now it says
// which batch fails and what a check changes.
func TestCleanShutdownBadCRC(t *testing.T) {
	for _, bad := range []bool{false, true} {
		dir := cleanShutdownDir(t, bad)
		code, def, errOut := runArgs(t, "diagnose", dir)
		t.Logf("default (bad CRC %v): exit %d\n%s%s", bad, code, def, errOut)
		_, full, fullErr := runArgs(t, "diagnose", "--full-replay", dir)
		t.Logf("--full-replay: \n%s%s", full, fullErr)
		said := strings.Contains(def+errOut, "bad CRC: stored") && strings.Contains(def+errOut, "--full-replay")
		if bad && !said {
			t.Errorf("the default diagnose of a clean-shutdown partition with a bad CRC does not say so, nor what --full-replay changes:\n%s%s", def, errOut)
		}
		if !bad && strings.Contains(def+errOut, "bad CRC: stored") {
			t.Errorf("a bad CRC reported where every CRC holds:\n%s%s", def, errOut)
		}
	}
}
