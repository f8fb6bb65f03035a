package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader/input"
)

const loadedBatches = "/api/v1/sources/load1/partitions/demo-interleaved/0/batches/"

func batchJSON(t *testing.T, s *served, offset int) (records int, note string) {
	t.Helper()
	resp, body := do(t, "GET", s.url(loadedBatches+fmt.Sprint(offset)), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("batch %d: %s %s", offset, resp.Status, body)
	}
	var b struct {
		RecordList  []json.RawMessage `json:"record_list"`
		RecordsNote string            `json:"records_note"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return len(b.RecordList), b.RecordsNote
}

// TestSegmentChangesWhileServing: the loaded segment is truncated while the
// server runs (as a live broker's active segment is by log recovery or a
// follower's truncation to the leader epoch, KIP-101), then grows back
// beyond its loaded size. Rereading a batch past the cut reports the file,
// its new size and the batch's position; batches before the cut still
// decode; nothing panics; after the growth every loaded batch decodes again.
func TestSegmentChangesWhileServing(t *testing.T) {
	dir := buildDemoDir(t)
	seg := filepath.Join(dir, "demo-interleaved-0", "00000000000000000000.log")
	orig, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, loads(dir))
	if n, note := batchJSON(t, s, 16); n != 1 || note != "" {
		t.Fatalf("before: %d records, note %q", n, note)
	}
	cut := int64(len(orig) / 2)
	if err := os.Truncate(seg, cut); err != nil {
		t.Fatal(err)
	}
	n, note := batchJSON(t, s, 16)
	want := regexp.MustCompile(fmt.Sprintf(`segment %s was truncated to %d bytes \(%#x\) after it was loaded with %d: the batch at byte 0x[0-9a-f]+ needs bytes up to 0x[0-9a-f]+`,
		regexp.QuoteMeta(seg), cut, cut, len(orig)))
	if n != 0 || !want.MatchString(note) {
		t.Errorf("after the truncation: %d records, note %q", n, note)
	}
	if n, note := batchJSON(t, s, 0); n != 2 || note != "" {
		t.Errorf("a batch before the cut: %d records, note %q", n, note)
	}
	// Grows: the old bytes come back and more are appended (new batches
	// the snapshot does not know).
	if err := os.WriteFile(seg, append(append([]byte{}, orig...), make([]byte, 4096)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, note := batchJSON(t, s, 16); n != 1 || note != "" {
		t.Errorf("after the growth: %d records, note %q", n, note)
	}
	// Same size, other bytes: the loader's batch check catches it.
	bad := append([]byte{}, orig...)
	for i := len(bad) / 2; i < len(bad); i++ {
		bad[i] ^= 0xff
	}
	os.WriteFile(seg, bad, 0o644)
	if n, note := batchJSON(t, s, 16); n != 0 || !strings.Contains(note, "records could not be decoded") || !strings.Contains(note, "byte") {
		t.Errorf("rewritten: %d records, note %q", n, note)
	}
	if resp, _ := do(t, "GET", s.url("/healthz"), nil); resp.StatusCode != 200 {
		t.Errorf("server down: %s", resp.Status)
	}
}

// TestSourceDeleted: the loaded directory is deleted (retention, a
// reassignment moving the partition away). The decisions are served from
// memory; a batch's records say the directory is gone.
func TestSourceDeleted(t *testing.T) {
	dir := buildDemoDir(t)
	s := startServe(t, loads(dir))
	// A log directory's partitions are read when first asked for
	// (catalog_lazy.go): ask, then delete.
	if resp, _ := do(t, "GET", s.url("/api/v1/sources/load1/partitions/demo-interleaved/0/decisions"), nil); resp.StatusCode != 200 {
		t.Fatalf("before the delete: %s", resp.Status)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	n, note := batchJSON(t, s, 2)
	if n != 0 || note != fmt.Sprintf("records could not be decoded: the source directory %s was deleted after it was loaded", filepath.Join(dir, "demo-interleaved-0")) {
		t.Errorf("deleted: %d records, note %q", n, note)
	}
	for _, p := range []string{"/api/v1/sources/load1/partitions/demo-interleaved/0/decisions", "/sources/load1/partitions/demo-interleaved/0"} {
		if resp, body := do(t, "GET", s.url(p), nil); resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("%s after the delete: %s", p, resp.Status)
		}
	}
}

// TestCaptureEndsMidStream: a real capture (kfake, tshark, kcat) cut short,
// as when tcpdump is killed mid-write. The server loads what was captured
// before the cut, warns with the file and byte position of the cut message,
// and serves the fetches that survived.
func TestCaptureEndsMidStream(t *testing.T) {
	testtool.Need(t, "tshark")
	path, _, _ := testtool.KcatCapture(t, 200)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside a packet (pcapng block), or inside a Kafka message that
	// spans packets: both are reported with the byte position.
	cutMsg := regexp.MustCompile(`byte 0x[0-9a-f]+: (pcapng block of \d+ bytes cut after \d+ \(capture ended mid-packet|frame of \d+ bytes cut after \d+ \(capture ended mid-message)`)
	tried := 0
	// The consumer's fetches are at the end of the capture, after the
	// producer's traffic.
	for pct := 99; pct >= 80; pct-- {
		cut := filepath.Join(t.TempDir(), fmt.Sprintf("cut%d.pcapng", pct))
		os.WriteFile(cut, full[:len(full)*pct/100], 0o644)
		ld, err := input.Open(cut)
		if err != nil || len(ld.Partitions) == 0 || len(ld.Partitions[0].Log.Batches) == 0 {
			continue
		}
		found := false
		for _, p := range ld.Problems {
			found = found || cutMsg.MatchString(p.Error())
		}
		if !found {
			continue
		}
		tried++
		s := startServe(t, loads(cut))
		if !strings.Contains(s.errb.String(), "warning: capture: "+cut) || !cutMsg.MatchString(s.errb.String()) {
			t.Errorf("%d%%: stderr %q", pct, s.errb.String())
		}
		resp, body := do(t, "GET", s.url("/api/v1/sources"), nil)
		if resp.StatusCode != 200 || !strings.Contains(body, `"id": "load1"`) {
			t.Errorf("%d%%: sources %s %.300s", pct, resp.Status, body)
		}
		l := ld.Partitions[0].Log
		resp, body = do(t, "GET", s.url(fmt.Sprintf("/api/v1/sources/load1/partitions/%s/%d/decisions", l.Topic, l.Partition)), nil)
		if resp.StatusCode != 200 || !strings.Contains(body, fmt.Sprintf(`"to":%d,`, l.Batches[len(l.Batches)-1].LastOffset())) {
			t.Errorf("%d%%: the batches fetched before the cut are not all served: %s %.300s", pct, resp.Status, body)
		}
		s.stop(t)
		if tried == 2 {
			break
		}
	}
	if tried == 0 {
		t.Fatalf("no cut of the %d-byte capture kept a fetch and cut a message", len(full))
	}
}
