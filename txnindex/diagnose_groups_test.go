package txnindex

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPlaceShareGroups: a share group at or below the LSO is held when it
// reads read_committed (blocked at the LSO), not held when it reads
// read_uncommitted (set, or Kafka's default when the configs were read
// and the group has none), perhaps held when no config was read; past
// the LSO never held.
func TestPlaceShareGroups(t *testing.T) {
	const lso = 10
	rc, ru := ShareReadCommitted, ShareReadUncommitted
	tests := []struct {
		name      string
		start     int64
		level     *ShareIsolation // nil: the group has no config
		known     bool            // the configs were read
		isolation ShareIsolation
		held      string // "held", "blocked", "maybe", "no"
	}{
		{"read_committed below the LSO: held", 4, &rc, true, rc, "held"},
		{"read_committed at the LSO: blocked", lso, &rc, true, rc, "blocked"},
		{"read_committed past the LSO: not held", lso + 3, &rc, true, rc, "no"},
		{"read_uncommitted below the LSO: not held", 4, &ru, true, ru, "no"},
		{"no config, configs read: the default, read_uncommitted, not held", 4, nil, true, ru, "no"},
		{"configs not read, below the LSO: perhaps held", 4, nil, false, ShareIsolationUnknown, "maybe"},
		{"configs not read, past the LSO: not held", lso + 1, nil, false, ShareIsolationUnknown, "no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iso := map[string]ShareIsolation{}
			if tt.level != nil {
				iso["s"] = *tt.level
			}
			st := []ShareGroupState{{Group: "s", Topic: "t", Partition: 0, StartOffset: tt.start}, {Group: "elsewhere", Topic: "t", Partition: 1, StartOffset: 0}}
			ps := PlaceShareGroups(st, "t", 0, lso, iso, tt.known, "where")
			if len(ps) != 1 {
				t.Fatalf("%d positions", len(ps))
			}
			p := ps[0]
			held := "no"
			switch {
			case p.Blocked:
				held = "blocked"
			case p.Held:
				held = "held"
			case p.MayBeHeld:
				held = "maybe"
			}
			if held != tt.held || p.Isolation != tt.isolation || p.BehindLSO != (tt.start <= lso) {
				t.Errorf("%+v: %s, want %s, level %q", p, held, tt.held, tt.isolation)
			}
		})
	}
}

// TestDiagnoseGroupsByKind: a stuck partition's diagnosis names the groups
// of each kind that read it (committed offsets of classic, consumer and
// streams groups; share groups' start offsets) and those held up, in the
// JSON and the runbook, with the records of unknown types skipped.
func TestDiagnoseGroupsByKind(t *testing.T) {
	// 0-1 plain, 2-4 pid 1 open (pins LSO 2), 5-9 plain.
	l := newLog().plain(-1, 2).txn(1, 3).plain(-1, 5).build()
	d := l.Diagnose(DiagnoseOptions{Position: -1})
	kinded := func(g string, off int64, k GroupKind) GroupOffset {
		o := groupAt(g, off)
		o.Kind = k
		return o
	}
	ev := InternalEvidence{HaveOffsets: true, GroupsSource: "__consumer_offsets",
		Offsets: []GroupOffset{kinded("new-app", 2, GroupConsumer), kinded("old-app", 0, GroupClassic), kinded("streams-app", 1, GroupStreams), kinded("dirty", 8, GroupClassic)}}
	ev.HaveShareStates, ev.ShareSource, ev.IsolationKnown, ev.IsolationSource = true, "__share_group_state", true, "the group configs"
	ev.ShareStates = []ShareGroupState{{Group: "share-rc", Topic: "t", StartOffset: 2}, {Group: "share-ru", Topic: "t", StartOffset: 1}}
	ev.ShareIsolation = map[string]ShareIsolation{"share-rc": ShareReadCommitted}
	ev.SkippedRecords, ev.SkippedWhere = 3, "__consumer_offsets"
	l.Join(d, ev)

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
	text := d.Runbook()
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
