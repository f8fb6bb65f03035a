package diagnosis_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseGroupsByKind: a stuck partition's diagnosis names the groups
// of each kind that read it (committed offsets of classic, consumer and
// streams groups; share groups' start offsets) and those held up, in the
// JSON and the runbook, with the records of unknown types skipped.
func TestDiagnoseGroupsByKind(t *testing.T) {
	// 0-1 plain, 2-4 pid 1 open (pins LSO 2), 5-9 plain.
	l := testfixture.NewLog().Plain(-1, 2).Txn(1, 3).Plain(-1, 5).Build()
	d := diagnosis.Diagnose(l, diagnosis.Options{Position: -1})
	kinded := func(g string, off int64, k txnindex.GroupKind) txnindex.GroupOffset {
		o := testfixture.GroupAt(g, off)
		o.Kind = k
		return o
	}
	ev := txnindex.InternalEvidence{HaveOffsets: true, GroupsSource: "__consumer_offsets",
		Offsets: []txnindex.GroupOffset{kinded("new-app", 2, txnindex.GroupConsumer), kinded("old-app", 0, txnindex.GroupClassic), kinded("streams-app", 1, txnindex.GroupStreams), kinded("dirty", 8, txnindex.GroupClassic)}}
	ev.HaveShareStates, ev.ShareSource, ev.IsolationKnown, ev.IsolationSource = true, "__share_group_state", true, "the group configs"
	ev.ShareStates = []txnindex.ShareGroupState{{Group: "share-rc", Topic: "t", StartOffset: 2}, {Group: "share-ru", Topic: "t", StartOffset: 1}}
	ev.ShareIsolation = map[string]txnindex.ShareIsolation{"share-rc": txnindex.ShareReadCommitted}
	ev.SkippedRecords, ev.SkippedWhere = 3, "__consumer_offsets"
	diagnosis.Join(l, d, ev)

	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ByKind []struct {
			Kind     string   `json:"kind"`
			Groups   []string `json:"groups"`
			Affected []string `json:"affected"`
		} `json:"groups_by_kind"`
		Groups []struct {
			Group string `json:"group"`
			Kind  string `json:"group_kind"`
		} `json:"consumer_groups"`
		Shares []struct {
			Group     string `json:"group"`
			Isolation string `json:"isolation_level"`
			Held      bool   `json:"held"`
			Blocked   bool   `json:"blocked"`
		} `json:"share_groups"`
		Skipped int64 `json:"skipped_group_records"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, k := range m.ByKind {
		kinds = append(kinds, fmt.Sprintf("%s:%s/%s", k.Kind, strings.Join(k.Groups, "+"), strings.Join(k.Affected, "+")))
	}
	if got, want := strings.Join(kinds, " "), "consumer:new-app/new-app classic:dirty+old-app/old-app streams:streams-app/streams-app share:share-rc+share-ru/share-rc"; got != want {
		t.Errorf("groups_by_kind %s\nwant            %s", got, want)
	}
	if len(m.Shares) != 2 || !m.Shares[0].Blocked || m.Shares[0].Isolation != "read_committed" || m.Shares[1].Held || m.Shares[1].Isolation != "read_uncommitted" {
		t.Errorf("share_groups %+v", m.Shares)
	}
	if len(m.Groups) != 4 || m.Groups[0].Group != "dirty" || m.Groups[0].Kind != "classic" || m.Skipped != 3 {
		t.Errorf("consumer_groups %+v, skipped %d", m.Groups, m.Skipped)
	}
	text := present.Runbook(d)
	for _, want := range []string{
		`groups that read this partition, by kind: 1 consumer group (KIP-848) ("new-app"), 1 held up; 2 classic groups ("dirty", "old-app"), 1 held up; 1 streams group (KIP-1071) ("streams-app"), 1 held up; 2 share groups (KIP-932) ("share-rc", "share-ru"), 1 held up`,
		`skipped: 3 records of a type no Kafka release writes skipped in __consumer_offsets, as the coordinators skip them (KIP-915)`,
		`consumer group "new-app" committed 2: BLOCKED`,
		`classic group "old-app" committed 0: 2 records to receive before the LSO`,
		`streams group "streams-app" committed 1: 1 record to receive before the LSO`,
		`classic group "dirty" committed 8: past the LSO`,
		`share group "share-rc" at start offset 2 (read_committed): BLOCKED: waiting at the LSO`,
		`share group "share-ru" at start offset 1 (read_uncommitted): reads past the LSO to the high watermark: not held`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("runbook lacks %q:\n%s", want, text)
		}
	}
}
