package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader/inspect"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestInspectSideFileAlone: a segment's .index, .timeindex, .txnindex or
// producer .snapshot given alone is dumped as kafka-dump-log.sh --files
// dumps it, and its entries are the ones the partition's own inspect reads
// from the same file; a name without the broker's 20-digit base offset and
// a damaged file are clear errors, keeping what was read before the damage.
func TestInspectSideFileAlone(t *testing.T) {
	kinds := map[string]bool{}
	for _, demo := range []string{"stuck-lso", "interleaved"} {
		inspectSideFiles(t, demo, kinds)
	}
	for _, k := range []string{"offset index", "time index", "transaction index", "producer snapshot"} {
		if !kinds[k] {
			t.Errorf("the demos have no %s to check (kinds %v)", k, kinds)
		}
	}
	inspectBadSideFiles(t)
}

// inspectSideFiles inspects each side file of demo's partition alone.
func inspectSideFiles(t *testing.T, demo string, kinds map[string]bool) {
	root, err := writeDemoDir(demo)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	dirs, _ := filepath.Glob(filepath.Join(root, "*-0"))
	if len(dirs) != 1 {
		t.Fatalf("demo dirs %v", dirs)
	}
	dir := dirs[0]
	code, out, errOut := runArgs(t, "inspect", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("inspect %s: %d %s", dir, code, errOut)
	}
	var whole inspect.Report
	if err := json.Unmarshal([]byte(out), &whole); err != nil || len(whole.Partitions) != 1 {
		t.Fatalf("%v %s", err, out)
	}
	p := whole.Partitions[0]
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		ext := filepath.Ext(f)
		if ext != ".index" && ext != ".timeindex" && ext != ".txnindex" && ext != ".snapshot" {
			continue
		}
		code, out, errOut := runArgs(t, "inspect", "--format", "json", f)
		if code != 0 {
			t.Errorf("inspect %s: %d %s", f, code, errOut)
			continue
		}
		var v inspect.Report
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Kind != inspect.KindIndexFile || len(v.Files) != 1 {
			t.Errorf("%s: %v %s", f, err, out)
			continue
		}
		got := v.Files[0]
		kinds[got.Kind] = true
		switch ext {
		case ".snapshot":
			for _, s := range p.Snapshots {
				if s.Name == filepath.Base(f) && strings.Join(s.Entries, "\n") != strings.Join(got.Entries, "\n") {
					t.Errorf("%s alone: %q; in its partition: %q", f, got.Entries, s.Entries)
				}
			}
		case ".txnindex":
			for _, s := range p.Segments {
				if strings.TrimSuffix(s.Name, ".log") == strings.TrimSuffix(filepath.Base(f), ".txnindex") && len(s.TxnIndexEntries) != len(got.Entries) {
					t.Errorf("%s alone: %d entries; in its partition: %d", f, len(got.Entries), len(s.TxnIndexEntries))
				}
			}
			for _, e := range got.Entries {
				if !strings.HasPrefix(e, "version: 0 producerId: ") || !strings.Contains(e, " lastStableOffset: ") {
					t.Errorf("%s: entry %q is not in kafka-dump-log.sh's words", f, e)
				}
			}
		case ".index":
			for _, s := range p.Segments {
				if s.IndexEntries != nil && strings.TrimSuffix(s.Name, ".log") == strings.TrimSuffix(filepath.Base(f), ".index") && *s.IndexEntries != len(got.Entries) {
					t.Errorf("%s alone: %d entries; in its partition: %d", f, len(got.Entries), *s.IndexEntries)
				}
			}
		}
		code, text, _ := runArgs(t, "inspect", f)
		if code != 0 || !strings.Contains(text, "Dumping "+f+" (") {
			t.Errorf("inspect %s text:\n%s", f, text)
		}
	}
}

// inspectBadSideFiles: a misnamed side file and a damaged one.
func inspectBadSideFiles(t *testing.T) {
	bad := t.TempDir()
	misnamed := filepath.Join(bad, "orders.index")
	if err := os.WriteFile(misnamed, make([]byte, 16), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runArgs(t, "inspect", misnamed); code != 1 || !strings.Contains(errOut, "20-digit base offset") {
		t.Errorf("misnamed: %d %q", code, errOut)
	}
	// Two entries, then one that goes backwards: the two are listed and
	// the damage names the file and byte.
	idx := filepath.Join(bad, "00000000000000000100.index")
	if err := os.WriteFile(idx, []byte{0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 7, 0, 0, 2, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runArgs(t, "inspect", "--format", "json", idx)
	var v inspect.Report
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || len(v.Files) != 1 || len(v.Files[0].Entries) != 2 ||
		v.Files[0].Entries[1] != "offset: 109 position: 256" || len(v.Problems) != 1 || !strings.Contains(v.Problems[0], "00000000000000000100.index") {
		t.Errorf("damaged index: code %d %v\n%s", code, err, out)
	}
}

// TestInspectSnapshotShowsTheStateTheBrokerLoads: inspect of a producer
// snapshot in its partition directory shows, beside its entries, the
// state the broker loads from it (load.AtSnapshot): the transactions open
// there and the LSO they pin, ending at its offset; in JSON too.
func TestInspectSnapshotShowsTheStateTheBrokerLoads(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{Seed: 1, SegmentBytes: 32 << 10, BatchBytes: 512, TotalBytes: 6 * 32 << 10, HangingFrom: 48 << 10})
	if err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(st.Dir, "*.snapshot"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot")
	}
	f := snaps[len(snaps)-1]
	code, out, errOut := runArgs(t, "inspect", "--format", "json", f)
	var v inspect.Report
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || len(v.Files) != 1 || len(v.Partitions) != 1 {
		t.Fatalf("inspect %s: %d %v %q\n%s", f, code, err, errOut, out)
	}
	p := v.Partitions[0]
	at := v.Files[0].BaseOffset
	if p.HighWatermark != at || p.LogEndOffset != at || p.Open == 0 || p.LastStableOffset >= at || p.HighWatermarkSource != "the producer snapshot "+filepath.Base(f) || len(v.Problems) != 0 {
		t.Errorf("%s: the state at it: %+v, problems %q", f, p, v.Problems)
	}
	code, text, _ := runArgs(t, "inspect", f)
	want := fmt.Sprintf("high watermark %d (the producer snapshot %s), LSO %d, ", at, filepath.Base(f), p.LastStableOffset)
	if code != 0 || !strings.Contains(text, "Dumping "+f+" (") || !strings.Contains(text, want) {
		t.Errorf("inspect %s text, want %q:\n%s", f, want, text)
	}
}

// TestInspectTxnIndexFileWithNoReadableEntry: a .txnindex whose first
// entry has a version Kafka refuses holds bytes and no entry Kafka reads:
// inspect says so, not that the file is empty, and the problem names the
// byte and the broker's failure; an empty file is said to be empty.
func TestInspectTxnIndexFileWithNoReadableEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "00000000000000000000.txnindex")
	raw := txnindex.EncodeTxnIndex([]txnindex.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}})
	raw[0] = 1
	empty := filepath.Join(dir, "00000000000000000100.txnindex")
	for f, b := range map[string][]byte{bad: raw, empty: nil} {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, text, _ := runArgs(t, "inspect", bad)
	for _, want := range []string{bad + " holds no entry that could be read (the problem below says why).", "entry at byte 0x0: unsupported version", "a broker fails to start with this file"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect %s: want %q in:\n%s", bad, want, text)
		}
	}
	if strings.Contains(text, "is empty") {
		t.Errorf("a file of 34 bytes said to be empty:\n%s", text)
	}
	if _, text, _ := runArgs(t, "inspect", empty); !strings.Contains(text, empty+" is empty.") {
		t.Errorf("inspect %s:\n%s", empty, text)
	}
}
