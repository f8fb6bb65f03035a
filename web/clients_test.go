package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

func serveClients(t *testing.T, ui *UI, path string, want int) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /sources/{id}/partitions/{topic}/{partition}/clients", ui.Clients())
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != want {
		t.Fatalf("GET %s: %d, want %d\n%s", path, rec.Code, want, rec.Body)
	}
	return rec.Body.String()
}

// TestClientsPageRows: the clients page of testLog (producer 7's
// transaction at 2-3 aborted by the marker at 5, producer 8's committed)
// has one row per client over the same seven offsets; kafka-go and
// kafka-python deliver the two aborted records and hand over both markers
// (four departures each), kafkajs and the Kafka-rule clients none.
func TestClientsPageRows(t *testing.T) {
	ui := New(fakeCatalog{testLog()}, view.NewDiagnoser())
	body := serveClients(t, ui, "/sources/demo/partitions/t/0/clients", 200)
	rows := regexp.MustCompile(`(?s)<tr data-testid="clients-row-([a-z-]+)">(.*?)</tr>`).FindAllStringSubmatch(body, -1)
	want := map[string]struct {
		cells, departures int
		delivered         string
	}{
		"java": {7, 0, "3"}, "librdkafka": {7, 0, "3"}, "franz-go": {7, 0, "3"}, "kafkajs": {7, 0, "3"},
		"kafka-go": {7, 4, "7"}, "kafka-python": {7, 4, "7"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d client rows, want %d:\n%s", len(rows), len(want), body)
	}
	for _, r := range rows {
		w, ok := want[r[1]]
		if !ok {
			t.Errorf("unexpected row %s", r[1])
			continue
		}
		cells := strings.Count(r[2], "<td data-decision=")
		deps := strings.Count(r[2], `class="dep-mark"`)
		nums := regexp.MustCompile(`<td class="num">(\d+)</td>`).FindAllStringSubmatch(r[2], -1)
		if cells != w.cells || deps != w.departures || len(nums) != 2 || nums[0][1] != w.delivered {
			t.Errorf("%s: %d cells, %d departures, counts %v; want %d, %d, delivered %s", r[1], cells, deps, nums, w.cells, w.departures, w.delivered)
		}
	}
	if !strings.Contains(body, `data-departure="aborted_delivered" title="delivered: kafka-go delivers this aborted record`) {
		t.Errorf("kafka-go's aborted cell lacks its departure and reason")
	}
	if !strings.Contains(body, `data-departure="control_delivered"`) {
		t.Errorf("no control_delivered cell")
	}
}

// TestClientsPagePaging: a page from an offset shows the columns from there
// and links to the earlier ones; a bad query is a 400, an unknown
// partition a 404.
func TestClientsPagePaging(t *testing.T) {
	ui := New(fakeCatalog{testLog()}, view.NewDiagnoser())
	body := serveClients(t, ui, "/sources/demo/partitions/t/0/clients?from=3&position=3&isolation=read_uncommitted", 200)
	if n := strings.Count(body, `<th class="off">`); n != 4 {
		t.Errorf("from 3: %d columns, want 4 (offsets 3-6)", n)
	}
	if !strings.Contains(body, "clients-prev") || strings.Contains(body, "clients-next") {
		t.Errorf("from 3: want a link to earlier offsets only")
	}
	if !strings.Contains(body, "read_uncommitted consumers from offset 3") {
		t.Errorf("the consumer is not described")
	}
	for _, q := range []string{"?isolation=x", "?from=y", "?max_bytes=0"} {
		serveClients(t, ui, "/sources/demo/partitions/t/0/clients"+q, 400)
	}
	serveClients(t, ui, "/sources/demo/partitions/t/9/clients", 404)
}

// TestClientsPagePagesThroughLongLogs: a page holds clientsColumns offsets
// and links to the next page until the log's end.
func TestClientsPagePagesThroughLongLogs(t *testing.T) {
	p := &txnindex.Partition{Topic: "t", LogStartOffset: -1, HighWatermark: -1}
	for off := int64(0); off < 250; off++ {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: off, LastOffset: off, ProducerID: -1, Magic: 2, Records: 1, Size: 70, BaseSequence: -1}.Batch())
	}
	ui := New(fakeCatalog{txnindex.Build(p)}, view.NewDiagnoser())
	for _, c := range []struct {
		from       int64
		columns    int
		next, prev bool
	}{{0, clientsColumns, true, false}, {100, clientsColumns, true, true}, {200, 50, false, true}} {
		body := serveClients(t, ui, "/sources/demo/partitions/t/0/clients?from="+strconv.FormatInt(c.from, 10), 200)
		if n := strings.Count(body, `<th class="off">`); n != c.columns {
			t.Errorf("from %d: %d columns, want %d", c.from, n, c.columns)
		}
		if strings.Contains(body, "clients-next") != c.next || strings.Contains(body, "clients-prev") != c.prev {
			t.Errorf("from %d: next %v prev %v, want %v %v", c.from, strings.Contains(body, "clients-next"), strings.Contains(body, "clients-prev"), c.next, c.prev)
		}
		if c.next && !strings.Contains(body, "clients?from="+strconv.FormatInt(c.from+clientsColumns, 10)+"&amp;") {
			t.Errorf("from %d: the next page does not start at %d", c.from, c.from+clientsColumns)
		}
	}
}
