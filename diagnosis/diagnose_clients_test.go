package diagnosis_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseClientDepartures: what each client that departs from Kafka's
// rule delivers from a partition that a read_committed Java consumer does
// not, in the diagnosis, its JSON and its runbook line.
func TestDiagnoseClientDepartures(t *testing.T) {
	const a, b txnindex.ProducerID = 7, 9
	type counts struct{ aborted, control, undecided int64 }
	for _, tc := range []struct {
		name  string
		log   func() *testfixture.LogBuilder
		want  map[string]counts // kafkajs, kafka-go, kafka-python; nil: no departure
		scope txnindex.OffsetRange
		line  []string
	}{{
		name: "no transaction",
		log:  func() *testfixture.LogBuilder { return testfixture.NewLog().Plain(-1, 3) },
	}, {
		// a's transaction at 0-1, 4, 6 (ABORT at 7), b's at 2-3 (ABORT
		// at 5), a plain record at 8: kafkajs moves b's entry (listed
		// first, marker order) into its set at 2, a's at 3, so a's 0 and 1
		// reach the application (TestClientVariantsLiteral).
		name: "aborted, kafkajs leaks",
		log: func() *testfixture.LogBuilder {
			return testfixture.NewLog().Txn(a, 2).Txn(b, 2).Txn(a, 1).Abort(b).Txn(a, 1).Abort(a).Plain(-1, 1)
		},
		want:  map[string]counts{"kafkajs": {2, 0, 0}, "kafka-go": {6, 2, 0}, "kafka-python": {6, 2, 0}},
		scope: txnindex.OffsetRange{From: 0, To: 8},
		line: []string{
			"kafka-go 0.4 (segmentio) and kafka-python 2.0 would deliver 6 aborted records and 2 control markers from this partition",
			"; kafkajs 2.2.4 2 aborted records; the Java consumer, librdkafka, franz-go, Sarama and kafka-python 2.2+ none of them",
		},
	}, {
		// a commits 0-1 at 2; b's 3-5 are open: the LSO is 3, and only
		// kafka-python, which cannot read committed, reads past it.
		name:  "open transaction",
		log:   func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(a, 2).Commit(a).Txn(b, 3) },
		want:  map[string]counts{"kafkajs": {}, "kafka-go": {0, 1, 0}, "kafka-python": {0, 1, 3}},
		scope: txnindex.OffsetRange{From: 0, To: 5},
		line: []string{
			"kafka-python 2.0 would deliver 1 control marker and 3 records of transactions still open from this partition; kafka-go 0.4 (segmentio) 1 control marker;",
			"the Java consumer, librdkafka, franz-go, Sarama, kafkajs 2.2.4 and kafka-python 2.2+ none of them",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.log().Build()
			d := diagnosis.Diagnose(l, diagnosis.Options{Position: -1})
			var got map[string]counts
			var cs []txnindex.ClientDeparture
			if d.ClientDepartures != nil {
				cs = d.ClientDepartures.Clients
			}
			for _, c := range cs {
				if got == nil {
					got = map[string]counts{}
				}
				got[c.Client] = counts{c.AbortedDelivered, c.ControlDelivered, c.UndecidedDelivered}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("departures %v, want %v", got, tc.want)
			}
			js, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if present.ClientsLine(d) != "" || strings.Contains(string(js), "client_departures") || strings.Contains(present.Runbook(d), "depart") {
					t.Fatalf("no client departs, yet the diagnosis says one does: %s\n%s", js, present.Runbook(d))
				}
				return
			}
			if r := d.ClientDepartures; (txnindex.OffsetRange{From: r.From, To: r.To}) != tc.scope || r.Capped {
				t.Errorf("offsets %d-%d capped %v, want %v", r.From, r.To, r.Capped, tc.scope)
			}
			var back struct {
				Deps struct {
					From, To int64
					Capped   bool
					Clients  []map[string]any
				} `json:"client_departures"`
			}
			if err := json.Unmarshal(js, &back); err != nil || back.Deps.To != tc.scope.To || back.Deps.Capped {
				t.Errorf("JSON client_departures %+v (%v)", back.Deps, err)
			} else if deps := back.Deps.Clients; len(deps) != 3 || deps[1]["client"] != "kafka-go" ||
				deps[1]["aborted_delivered"] != float64(tc.want["kafka-go"].aborted) || deps[1]["control_delivered"] != float64(tc.want["kafka-go"].control) {
				t.Errorf("JSON client_departures' clients %v", deps)
			}
			rb := present.Runbook(d)
			for _, w := range tc.line {
				if !strings.Contains(present.ClientsLine(d), w) || !strings.Contains(rb, w) {
					t.Errorf("the clients line and runbook lack %q:\n%s", w, rb)
				}
			}
			if !strings.Contains(rb, "txnscope decide --compare-variants") {
				t.Errorf("runbook names no command that shows each offset:\n%s", rb)
			}
		})
	}
}

// TestClientsLineCapped: a count capped at ClientDeparturesMaxBatches says
// which offsets it covers, the first batches only
// (txnindex.TestClientDeparturesCapped counts them).
func TestClientsLineCapped(t *testing.T) {
	d := &diagnosis.Diagnosis{LogStartOffset: 0, LogEndOffset: 4, ClientDepartures: &txnindex.ClientsReport{From: 0, To: 2, Capped: true, Decided: 2,
		Clients: []txnindex.ClientDeparture{{Client: "kafkajs"}, {Client: "kafka-go", AbortedDelivered: 2, ControlDelivered: 1}, {Client: "kafka-python", AbortedDelivered: 2, ControlDelivered: 1}}}}
	want := "kafka-go 0.4 (segmentio) and kafka-python 2.0 would deliver 2 aborted records and 1 control marker from offsets 0 to 2 (the first 2 batches of the partition; the rest was not counted); the Java consumer, librdkafka, franz-go, Sarama, kafkajs 2.2.4 and kafka-python 2.2+ none of them"
	if got := present.ClientsLine(d); got != want {
		t.Errorf("clients line\n%s\nwant\n%s", got, want)
	}
}
