package cli

import (
	"context"
	"encoding/json"
	"html"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/server"
)

// interleavedClients is the diagnosis's sentence on the interleaved demo's
// clients: its aborted transaction (offsets 2-4, and two more records) and
// its markers reach kafka-go and kafka-python.
const interleavedClients = "kafka-go 0.4 (segmentio) and kafka-python 2.0 would deliver 5 aborted records and 3 control markers from this partition; the Java consumer, librdkafka, franz-go, Sarama, kafkajs 2.2.4 and kafka-python 2.2+ none of them"

// TestDiagnoseClientDepartures: diagnose names the clients that would
// deliver aborted records and markers from the partition, in its runbook
// text, its JSON, and the web panel, which links to the clients page.
func TestDiagnoseClientDepartures(t *testing.T) {
	code, out, errb := runArgs(t, "diagnose", "--demo", "interleaved")
	if code != 0 || !strings.Contains(out, interleavedClients) || !strings.Contains(out, "txnscope decide --compare-variants") {
		t.Errorf("diagnose: exit %d, runbook without the clients line:\n%s%s", code, out, errb)
	}
	code, out, errb = runArgs(t, "diagnose", "--demo", "interleaved", "--format", "json")
	var doc struct {
		Partitions []struct {
			Deps struct {
				From, To int64
				Clients  []struct {
					Client           string `json:"client"`
					AbortedDelivered int64  `json:"aborted_delivered"`
					ControlDelivered int64  `json:"control_delivered"`
				}
			} `json:"client_departures"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Partitions) != 1 {
		t.Fatalf("diagnose --format json: exit %d, %v: %s%s", code, err, out, errb)
	}
	got := doc.Partitions[0].Deps.Clients
	if r := doc.Partitions[0].Deps; r.From != 0 || r.To != 16 {
		t.Errorf("client_departures count offsets %d-%d, want the whole demo, 0-16", r.From, r.To)
	}
	if len(got) != 3 || got[0].Client != "kafkajs" || got[0].AbortedDelivered != 0 ||
		got[1].Client != "kafka-go" || got[1].AbortedDelivered != 5 || got[1].ControlDelivered != 3 ||
		got[2].Client != "kafka-python" || got[2].AbortedDelivered != 5 {
		t.Errorf("client_departures %+v", got)
	}

	o := server.DefaultOptions()
	o.Big = false
	s, err := server.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	base := "/sources/interleaved/partitions/demo-interleaved/0"
	for _, path := range []string{base, base + "/diagnosis"} {
		page := html.UnescapeString(getPage(t, srv.URL+path))
		if !strings.Contains(page, interleavedClients) || !strings.Contains(page, `href="`+base+`/clients" data-testid="diag-clients-link"`) {
			t.Errorf("%s: the diagnosis panel lacks the clients line or its link to the clients page", path)
		}
	}
	if page := getPage(t, srv.URL+base+"/clients"); !strings.Contains(page, `data-testid="clients-row-kafka-go"`) {
		t.Errorf("the clients page the panel links to draws no kafka-go row")
	}
}
