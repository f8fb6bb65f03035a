package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// groupsJSON is the part of diagnose's JSON on the groups.
type groupsJSON struct {
	Partitions []struct {
		Topic  string `json:"topic"`
		Groups []struct {
			Group   string `json:"group"`
			Kind    string `json:"group_kind"`
			Behind  bool   `json:"behind_lso"`
			Blocked bool   `json:"blocked"`
		} `json:"consumer_groups"`
		Shares []struct {
			Group     string `json:"group"`
			Start     int64  `json:"start_offset"`
			Isolation string `json:"isolation_level"`
			Held      bool   `json:"held"`
			MayBeHeld bool   `json:"may_be_held"`
			Blocked   bool   `json:"blocked"`
		} `json:"share_groups"`
		ByKind []struct {
			Kind     string   `json:"kind"`
			Groups   []string `json:"groups"`
			Affected []string `json:"affected"`
		} `json:"groups_by_kind"`
		Skipped int64 `json:"skipped_group_records"`
	} `json:"partitions"`
}

// TestDiagnoseGroupKinds: `diagnose DIR` on a log dir with groups of every
// kind names and counts them by kind on the stuck partition (JSON and
// text), places the share groups by their isolation level from
// __cluster_metadata (or says it is unknown without it), counts the
// records of unknown types it skipped, and exits 3 (the pinning
// transaction hangs). The page's panel is tested on the same log dir in
// package server (TestDiagnosisPanelGroupKinds).
func TestDiagnoseGroupKinds(t *testing.T) {
	tests := []struct {
		name     string
		metadata bool
		byKind   string
		shares   string // group start isolation held
		text     []string
	}{
		{"with __cluster_metadata: share-rc is read_committed, share-ru has the default", true,
			"consumer:new-app/new-app classic:audit+late-reader+orders-app/audit+orders-app streams:kstreams-app/kstreams-app share:share-rc+share-ru/share-rc",
			"share-rc 3 read_committed blocked|share-ru 1 read_uncommitted -",
			[]string{
				`share group "share-rc" at start offset 3 (read_committed): BLOCKED: waiting at the LSO`,
				`share group "share-ru" at start offset 1 (read_uncommitted): reads past the LSO to the high watermark: not held`,
			}},
		{"without it: the isolation level is unknown, both perhaps held", false,
			"consumer:new-app/new-app classic:audit+late-reader+orders-app/audit+orders-app streams:kstreams-app/kstreams-app share:share-rc+share-ru/share-rc+share-ru",
			"share-rc 3 unknown maybe|share-ru 1 unknown maybe",
			[]string{
				`share.isolation.level unknown: no __cluster_metadata in the log directory to read the group configs from (Kafka's default share.isolation.level is read_uncommitted, which the LSO does not hold)`,
				`share group "share-rc" at start offset 3 (isolation level unknown): waits at the LSO if it reads read_committed`,
				`share group "share-ru" at start offset 1 (isolation level unknown): 2 offsets below the LSO: held there if it reads read_committed`,
				`2 share groups (KIP-932) ("share-rc", "share-ru"), 2 held up or perhaps held up (isolation level unknown)`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testfixture.WriteGroupsLogDir(t, tt.metadata)
			const now = "2026-01-01T00:00:01Z"
			for _, args := range [][]string{{dir}, {"--full-replay", dir}} {
				code, js, errOut := runArgs(t, append([]string{"diagnose", "--format", "json", "--now", now}, args...)...)
				if code != exitHanging {
					t.Fatalf("%v: exit %d, want %d (hanging); stderr %s", args, code, exitHanging, errOut)
				}
				var got groupsJSON
				if err := json.Unmarshal([]byte(js), &got); err != nil {
					t.Fatal(err)
				}
				p := got.Partitions[0]
				if p.Topic != "orders" {
					t.Fatalf("first partition %s", p.Topic)
				}
				var kinds, shares []string
				for _, k := range p.ByKind {
					kinds = append(kinds, fmt.Sprintf("%s:%s/%s", k.Kind, strings.Join(k.Groups, "+"), strings.Join(k.Affected, "+")))
				}
				for _, s := range p.Shares {
					held := "-"
					switch {
					case s.Blocked:
						held = "blocked"
					case s.Held:
						held = "held"
					case s.MayBeHeld:
						held = "maybe"
					}
					lvl := s.Isolation
					if lvl == "" {
						lvl = "unknown"
					}
					shares = append(shares, fmt.Sprintf("%s %d %s %s", s.Group, s.Start, lvl, held))
				}
				if strings.Join(kinds, " ") != tt.byKind || strings.Join(shares, "|") != tt.shares {
					t.Errorf("%v: groups_by_kind %s\nwant %s\nshare_groups %q, want %q", args, strings.Join(kinds, " "), tt.byKind, shares, tt.shares)
				}
				if p.Skipped != 2 {
					t.Errorf("%v: skipped_group_records %d, want 2 (one in each topic)", args, p.Skipped)
				}
			}
			code, text, _ := runArgs(t, "diagnose", "--now", now, dir)
			if code != exitHanging {
				t.Fatalf("text: exit %d", code)
			}
			for _, w := range append([]string{
				`groups that read this partition, by kind: 1 consumer group (KIP-848) ("new-app"), 1 held up; 3 classic groups ("audit", "late-reader", "orders-app"), 2 held up; 1 streams group (KIP-1071) ("kstreams-app"), 1 held up`,
				`skipped: 2 records of a type no Kafka release writes skipped in __consumer_offsets and __share_group_state, as the coordinators skip them (KIP-915)`,
				`consumer group "new-app" committed 3: BLOCKED`,
				`streams group "kstreams-app" committed 1: 1 record to receive before the LSO`,
				`classic group "orders-app" committed 3: BLOCKED`,
			}, tt.text...) {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}

		})
	}
}
