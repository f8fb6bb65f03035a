package testfixture

import (
	"fmt"
	"github.com/txnscope/txnscope/loader"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// WriteMetadataOnlyDir writes a log dir whose __cluster_metadata-0 holds
// what a copied KRaft node's may hold without its .log: three KRaft
// snapshots (.checkpoint), two producer snapshots, the first segment's
// .index and .timeindex, and quorum-state.
func WriteMetadataOnlyDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "__cluster_metadata-0")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"00000000000000007364-0000000001.checkpoint": make([]byte, 64),
		"00000000000000021265-0000000006.checkpoint": make([]byte, 64),
		"00000000000000060500-0000000025.checkpoint": make([]byte, 64),
		"00000000000000053298.snapshot":              loader.AppendProducerSnapshot(nil, nil),
		"00000000000000066046.snapshot":              loader.AppendProducerSnapshot(nil, nil),
		"00000000000000000000.index":                 nil,
		"00000000000000000000.timeindex":             nil,
		"quorum-state":                               []byte(`{"leaderId":1,"leaderEpoch":25,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}`),
	}
	for n, b := range files {
		WriteFile(t, filepath.Join(p, n), b)
	}
	return dir
}

// WriteHostileDir writes DIR/<topic>-0 holding a stuck partition: producer
// 7's transaction from offset 0, a year older than --now, then 3 records (LSO 0, log end 5)
// of a plain producer, so the transaction is hanging (KIP-664).
func WriteHostileDir(t testing.TB, topic string, now time.Time) string {
	t.Helper()
	old := now.Add(-365 * 24 * time.Hour).UnixMilli()
	var log []byte
	for _, b := range []Batch{
		{Base: 0, PID: 7, Epoch: 1, Txn: true, Ctrl: -1, N: 2, TS: old},
		{Base: 2, PID: -1, Ctrl: -1, N: 3, TS: now.Add(-time.Minute).UnixMilli()},
	} {
		log = append(log, b.Encode()...)
	}
	pdir := filepath.Join(t.TempDir(), topic+"-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(pdir, "00000000000000000000.log"), log)
	return pdir
}

// TieredDir writes a follower rebuilt from remote storage:
// log-start-offset-checkpoint 5,000, the first local segment at 8,000,
// the producer snapshot at 8,000 listing producer 6101's transaction open
// since 7,930 (whose data goes on at 8,007), the HWM checkpoint 8,020, a
// leader-epoch-checkpoint with epochs (epoch, start offset), and the log
// dir's remote-log-index-cache/ when cache is set.
func TieredDir(t testing.TB, cache bool, epochs [][2]int64) string {
	t.Helper()
	recent := BrokerNow.Add(-time.Minute).UnixMilli()
	dir := WriteShapeDir(t, "orders", 5000, 8020, []Batch{
		{Base: 8000, PID: -1, Ctrl: -1, N: 7, TS: recent},
		{Base: 8007, PID: 6101, Epoch: 2, Txn: true, Ctrl: -1, N: 3, TS: recent},
		{Base: 8010, PID: -1, Ctrl: -1, N: 10, TS: recent},
	}, 8000, []Snap{
		{PID: 6101, Epoch: 2, LastSeq: 69, LastOffset: 7999, OffsetDelta: 0, TS: recent, CoordEpoch: 1, CurrentTxnFirstOffset: 7930},
	})
	lines := fmt.Sprintf("0\n%d\n", len(epochs))
	for _, e := range epochs {
		lines += fmt.Sprintf("%d %d\n", e[0], e[1])
	}
	WriteFile(t, filepath.Join(dir, "orders-0", "leader-epoch-checkpoint"), []byte(lines))
	if cache {
		if err := os.Mkdir(filepath.Join(dir, "remote-log-index-cache"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// OpenTxnSegment writes orders-0 with producer 6's transaction open since
// offset 3 (last write a day before BrokerNow) and returns the path of its
// one segment, 00000000000000000000.log.
func OpenTxnSegment(t testing.TB) string {
	t.Helper()
	old := BrokerNow.Add(-24 * time.Hour).UnixMilli()
	dir := WriteShapeDir(t, "orders", 0, 9, []Batch{
		{Base: 0, PID: -1, Ctrl: -1, N: 3, TS: old},
		{Base: 3, PID: 6, Epoch: 0, Txn: true, Ctrl: -1, N: 3, TS: old},
		{Base: 6, PID: -1, Ctrl: -1, N: 3, TS: old},
	}, 0, nil)
	return filepath.Join(dir, "orders-0", "00000000000000000000.log")
}

// BrokerNow is the clock of these shapes.
var BrokerNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// AtLogStartDir is the shape of the issue: retention moved the log start
// to 500; the only producer snapshot, 00000000000000000500.snapshot, lists
// producer 8001's transaction open since offset 120, last write eleven
// months ago; the log runs to 620. later, when set, adds a batch of
// producer 8001's transaction at offset 600.
func AtLogStartDir(t testing.TB, later bool) string {
	old := BrokerNow.Add(-335 * 24 * time.Hour).UnixMilli()
	recent := BrokerNow.Add(-time.Minute).UnixMilli()
	bs := []Batch{
		{Base: 500, PID: -1, Ctrl: -1, N: 50, TS: recent},
		{Base: 550, PID: 9, Epoch: 1, Txn: true, Ctrl: -1, N: 9, TS: recent},
		{Base: 559, PID: 9, Epoch: 1, Txn: true, Ctrl: 1, TS: recent, Coord: 2},
		{Base: 560, PID: -1, Ctrl: -1, N: 40, TS: recent},
	}
	if later {
		bs = append(bs, Batch{Base: 600, PID: 8001, Epoch: 3, Txn: true, Ctrl: -1, N: 2, TS: old})
	} else {
		bs = append(bs, Batch{Base: 600, PID: -1, Ctrl: -1, N: 2, TS: recent})
	}
	bs = append(bs, Batch{Base: 602, PID: -1, Ctrl: -1, N: 18, TS: recent})
	return WriteShapeDir(t, "orders", 500, 620, bs, 500, []Snap{
		{PID: 8001, Epoch: 3, LastSeq: 19, LastOffset: 139, OffsetDelta: 19, TS: old, CoordEpoch: 4, CurrentTxnFirstOffset: 120},
	})
}
