package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// joinJSON is the part of diagnose's JSON the join adds.
type joinJSON struct {
	Partitions []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		LSO       int64  `json:"last_stable_offset"`
		PinnedBy  *struct {
			ProducerID       int64  `json:"producer_id"`
			FirstOffset      int64  `json:"first_offset"`
			State            string `json:"state"`
			TransactionalID  string `json:"transactional_id"`
			CoordinatorState string `json:"coordinator_state"`
			HangingRule      string `json:"hanging_rule"`
		} `json:"pinned_by"`
		Groups []struct {
			Group     string `json:"group"`
			Committed int64  `json:"committed_offset"`
			Behind    bool   `json:"behind_lso"`
			Blocked   bool   `json:"blocked"`
			Records   int64  `json:"records_to_lso"`
		} `json:"consumer_groups"`
	} `json:"partitions"`
}

// TestDiagnoseLogDirJoin: `diagnose DIR` on a log dir holding the broker's
// internal topics names the transactional id pinning the LSO, its
// coordinator state and the KIP-664 rule that decided, and the groups it
// holds up, in JSON and text; a transaction seconds old is hanging when
// its coordinator does not list the partition (exit 3), and not when it
// does (exit 0). The internal partitions come after the answer.
func TestDiagnoseLogDirJoin(t *testing.T) {
	tests := []struct {
		name    string
		listed  []txnindex.TopicPartition
		code    int
		state   string
		rule    string
		running string
	}{
		{"coordinator moved on to another partition: hanging", []txnindex.TopicPartition{{Topic: "orders", Partition: 1}}, exitHanging, "hanging", txnindex.RulePartitionNotListed, "is not one of them"},
		{"coordinator lists the partition: open", []txnindex.TopicPartition{{Topic: "orders", Partition: 0}}, 0, "open", txnindex.RulePartitionListed, "its marker is still to come"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testfixture.WriteJoinLogDir(t, tt.listed...)
			// The scenario's clock starts at 2026-01-01; a minute later
			// the transaction is young by age.
			now := "2026-01-01T00:00:01Z"
			code, js, errOut := runArgs(t, "diagnose", "--format", "json", "--now", now, dir)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			var got joinJSON
			if err := json.Unmarshal([]byte(js), &got); err != nil {
				t.Fatal(err)
			}
			// A log dir is read a partition at a time (the internal
			// topics one at a time for the evidence, then again); the
			// oracle is the directory loaded whole, joined as before.
			if want := wholeDirDiagnoses(t, dir, now); !sameDiagnoses(t, js, want) {
				t.Errorf("the log dir read a partition at a time:\n%s\nloaded whole:\n%s", js, want)
			}
			if len(got.Partitions) < 3 {
				t.Fatalf("%d partitions", len(got.Partitions))
			}
			p := got.Partitions[0]
			if p.Topic != "orders" || p.LSO != 3 || p.PinnedBy == nil {
				t.Fatalf("first partition %s-%d LSO %d pinned %v: the answer must come first", p.Topic, p.Partition, p.LSO, p.PinnedBy)
			}
			if b := p.PinnedBy; b.TransactionalID != "zombie-tx" || b.CoordinatorState != "Ongoing" || b.HangingRule != tt.rule || b.State != tt.state || b.FirstOffset != 3 {
				t.Errorf("pinned_by %+v", b)
			}
			var gs []string
			for _, g := range p.Groups {
				gs = append(gs, strings.Join([]string{g.Group, strconv.FormatInt(g.Committed, 10), boolWord(g.Behind, "behind"), boolWord(g.Blocked, "blocked"), strconv.FormatInt(g.Records, 10)}, " "))
			}
			want := []string{"audit 0 behind - 2", "late-reader 9 - - 0", "orders-app 3 behind blocked 0"}
			if strings.Join(gs, "|") != strings.Join(want, "|") {
				t.Errorf("consumer_groups %q, want %q", gs, want)
			}
			for _, q := range got.Partitions[1:] {
				if q.Topic == "orders" {
					t.Errorf("orders-%d after the internal partitions", q.Partition)
				}
			}

			code, text, _ := runArgs(t, "diagnose", "--now", now, dir)
			if code != tt.code {
				t.Fatalf("text: exit %d", code)
			}
			for _, w := range []string{
				`pinned by transactional id "zombie-tx" (coordinator state Ongoing`,
				"rule " + tt.rule, tt.running,
				`group "orders-app" committed 3: BLOCKED`,
				`group "audit" committed 0: 2 records to receive before the LSO`,
				`group "late-reader" committed 9: past the LSO`,
				"internal partitions read for the join, LSO clear: __consumer_offsets-",
			} {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			if i, j := strings.Index(text, "orders-0"), strings.Index(text, "__transaction_state-"); i < 0 || j < i {
				t.Errorf("orders-0 is not first:\n%s", text)
			}
		})
	}
}

func boolWord(b bool, w string) string {
	if b {
		return w
	}
	return "-"
}

// wholeDirDiagnoses is what `diagnose --format json DIR` printed when it
// loaded the whole log directory at once: every partition's diagnosis
// joined with its internal topics, the clear internal partitions last.
func wholeDirDiagnoses(t *testing.T, dir, now string) string {
	t.Helper()
	c, err := input.OpenContext(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := internalEvidence(&env{stderr: io.Discard}, c)
	if err != nil {
		t.Fatal(err)
	}
	o := diagnosis.Options{TxnTimeout: diagnosis.DefaultTxnTimeout, MaxTxnTimeout: diagnosis.DefaultMaxTxnTimeout, Position: -1}
	if o.Now, err = parseTime(now); err != nil {
		t.Fatal(err)
	}
	var ds []*diagnosis.Diagnosis
	for _, p := range c.Partitions {
		d := present.Diagnose(p.Log, o)
		diagnosis.Join(p.Log, d, ev)
		ds = append(ds, d)
	}
	internalLast(ds)
	b, err := json.Marshal(struct {
		Partitions []*diagnosis.Diagnosis `json:"partitions"`
	}{ds})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameDiagnoses compares diagnose's JSON with want, the replay reports of
// partitions read from their snapshot left out.
func sameDiagnoses(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w struct{ Partitions []map[string]any }
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Partitions {
		delete(p, "replay")
	}
	a, _ := json.Marshal(g)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}

// TestExportJoinsInternalTopics: the export of a log dir's partition shows
// the diagnosis its served page shows, joined with the log dir's internal
// topics: the transactional id and coordinator state of the transaction
// that pins the LSO.
func TestExportJoinsInternalTopics(t *testing.T) {
	dir := testfixture.WriteJoinLogDir(t)
	out := filepath.Join(t.TempDir(), "orders.html")
	if code, _, errOut := runArgs(t, "export", "--now", "2026-01-01T00:00:01Z", "--topic", "orders", "--partition", "0", "--out", out, dir); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := `data-transactional-id="zombie-tx" data-coordinator-state="Ongoing"`; !strings.Contains(string(b), want) {
		t.Errorf("the export's diagnosis is not joined with the internal topics: no %s", want)
	}
}
