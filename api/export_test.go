package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/txnindex"
)

// oneRecordPerOffset is a RecordSource with a record for every offset of a
// batch.
var oneRecordPerOffset = RecordSourceFunc(func(_ context.Context, src string, _ *txnindex.Log, b *txnindex.Batch) ([]Record, error) {
	var out []Record
	for off := b.BaseOffset; off <= b.LastOffset(); off++ {
		out = append(out, Record{Offset: off, Key: []byte("k</script>"), Value: []byte(src)})
	}
	return out, nil
})

var elapsed = regexp.MustCompile(`"elapsed_ms":\d+`)

// TestExportIsWhatTheServerSends: an export holds, byte for byte, the
// messages a websocket client reads (its progress messages aside, and the
// done message's elapsed time), the reasons of the decisions route and the
// batch route's answers (records capped at exportRecordLimit) for the
// batches of exportWindow, with a note when that is not all of them, for
// both isolations; a log of ExportDetailLimit batches gets the streams and
// a note.
func TestExportIsWhatTheServerSends(t *testing.T) {
	logs := fakeCatalog{"small": small(), "large": large(ExportDetailLimit), "gappy": gappy(), "window": large(ExportDetailBatches + 40)}
	srv, _ := server(t, logs, oneRecordPerOffset, nil)
	for id, l := range logs {
		d, err := Export(context.Background(), id, l, oneRecordPerOffset)
		if err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("/sources/%s/partitions/%s/%d", id, l.Topic, l.Partition)
		for _, iso := range ExportIsolations {
			q := "?isolation=" + iso
			got := d.Streams[iso]
			want := wsRecording(t, srv.URL, "/ws/v1"+base+q)
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d messages, the websocket sent %d", id, iso, len(got), len(want))
			}
			for i := range want {
				if g := elapsed.ReplaceAll(got[i], nil); !bytes.Equal(g, elapsed.ReplaceAll(want[i], nil)) {
					t.Errorf("%s %s: message %d differs:\n%.300s\n%.300s", id, iso, i, got[i], want[i])
				}
			}

			if len(l.Batches) >= ExportDetailLimit {
				if d.Reasons != nil || d.Batches != nil || !strings.Contains(d.Note, "leaves out") {
					t.Errorf("%s: %d batches: reasons %v, batches %v, note %q", id, len(l.Batches), d.Reasons != nil, d.Batches != nil, d.Note)
				}
				continue
			}
			var reasons [][4]any
			for _, dj := range ndjson(t, srv.URL+"/api/v1"+base+"/decisions"+q) {
				reasons = append(reasons, [4]any{dj.From, dj.To, dj.BatchIndex >= 0, dj.Reason})
			}
			if g, w := mustJSON(t, d.Reasons[iso]), mustJSON(t, reasons); !bytes.Equal(g, w) {
				t.Errorf("%s %s: reasons\n%s\nthe route's\n%s", id, iso, g, w)
			}

			from, to := exportWindow(l)
			if len(d.Batches[iso]) != to-from || len(d.Batches[iso]) > ExportDetailBatches {
				t.Fatalf("%s %s: %d batches, want %d", id, iso, len(d.Batches[iso]), to-from)
			}
			if (to-from < len(l.Batches)) != strings.Contains(d.Note, "txnscope serve") {
				t.Errorf("%s %s: %d of %d batches, note %q", id, iso, to-from, len(l.Batches), d.Note)
			}
			if k := sort.Search(len(l.Batches), func(i int) bool { return l.Batches[i].LastOffset() >= l.LastStableOffset }); k < len(l.Batches) && (k < from || k >= to) {
				t.Errorf("%s %s: the LSO's batch %d is outside the window [%d, %d)", id, iso, k, from, to)
			}
			capped := 0
			for i := from; i < to; i++ {
				var w BatchJSON
				// The export holds the route's first page of records.
				raw := get(t, srv.URL+"/api/v1"+base+"/batches/"+strconv.FormatInt(l.Batches[i].BaseOffset, 10)+q+sep(q)+"records_limit="+strconv.Itoa(exportRecordLimit), 200)
				if err := json.Unmarshal(raw, &w); err != nil {
					t.Fatal(err)
				}
				if w.RecordsTruncated {
					w.RecordsNote = fmt.Sprintf("the export holds the first %d of %d records", len(w.RecordList), w.RecordsTotal)
					capped++
				} else if c := new(bytes.Buffer); json.Compact(c, raw) != nil || !bytes.Equal(c.Bytes(), d.Batches[iso][i-from]) {
					t.Errorf("%s %s: batch %d\n%s\nthe route's\n%s", id, iso, i, d.Batches[iso][i-from], c)
				}
				if g, w := d.Batches[iso][i-from], mustJSON(t, w); !bytes.Equal(g, w) {
					t.Errorf("%s %s: batch %d\n%s\nwant\n%s", id, iso, i, g, w)
				}
			}
			if want := map[string]int{"gappy": 1}[id]; capped != want {
				t.Errorf("%s %s: %d batches capped at %d records, want %d", id, iso, capped, exportRecordLimit, want)
			}
		}
	}
}

// wsRecording reads the stream at path from the server at srvURL as the
// export's page replays it: every message but progress, to done.
func wsRecording(t *testing.T, srvURL, path string) []json.RawMessage {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srvURL, "http")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []json.RawMessage
	for {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		typ, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("%s: after %d messages: %v", path, len(out), err)
		}
		if typ == websocket.BinaryMessage {
			out = append(out, mustJSON(t, base64.StdEncoding.EncodeToString(b)))
			continue
		}
		var m struct{ Type string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Type == "progress" {
			continue
		}
		out = append(out, b)
		if m.Type == "done" {
			return out
		}
	}
}

// TestExportScript: the page's data block holds no "</" (which would end
// the <script> element early) and decodes back to the data.
func TestExportScript(t *testing.T) {
	d, err := Export(context.Background(), "gappy", gappy(), oneRecordPerOffset)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Script()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("</")) || !bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString([]byte("k</script>")))) {
		t.Errorf("script block: %q…", b[:200])
	}
	var back ExportData
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Streams, d.Streams) {
		t.Error("the script block does not decode to the data")
	}
}

// sep is the separator that appends a parameter to query q.
func sep(q string) string {
	if q == "" {
		return "?"
	}
	return "&"
}
