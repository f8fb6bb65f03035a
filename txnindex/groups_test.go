package txnindex

import (
	"encoding/json"
	"fmt"
	"testing"
)

func groupAt(group string, off int64) GroupOffset {
	return GroupOffset{Group: group, Topic: "t", Partition: 0, Offset: off, LeaderEpoch: -1, CommitTimestamp: 1,
		ExpireTimestamp: -1, ProducerID: -1, Source: "__consumer_offsets-0", RecordOffset: 0}
}

// TestPlaceGroups: a committed offset at or below the LSO is behind it
// (affected), at it blocked; past it (a read_uncommitted consumer) not
// affected; below it, the offsets to the LSO; out of range outside the log.
func TestPlaceGroups(t *testing.T) {
	offsets := []GroupOffset{
		groupAt("waits-exactly-at-lso", 100),
		groupAt("waits-past-lso", 150),
		groupAt("still-reading", 40),
		groupAt("below-log-start", 5),
		groupAt("past-log-end", 201),
		groupAt("at-log-end", 200),
		{Group: "other-partition", Topic: "t", Partition: 1, Offset: 100},
		{Group: "other-topic", Topic: "u", Partition: 0, Offset: 100},
	}
	got := PlaceGroups(offsets, "t", 0, 100, 10, 200)
	want := map[string]struct {
		behind   bool
		blocked  bool
		toLSO    int64
		outRange bool
	}{
		"waits-exactly-at-lso": {true, true, 0, false},
		"waits-past-lso":       {false, false, 0, false},
		"still-reading":        {true, false, 60, false},
		"below-log-start":      {true, false, 95, true},
		"past-log-end":         {false, false, 0, true},
		"at-log-end":           {false, false, 0, false},
	}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		if i > 0 && got[i-1].Group >= g.Group {
			t.Errorf("not sorted by group at %d", i)
		}
		w, ok := want[g.Group]
		if !ok {
			t.Errorf("unexpected group %q", g.Group)
			continue
		}
		if g.BehindLSO != w.behind || g.Blocked != w.blocked || g.OffsetsToLSO != w.toLSO || g.OutOfRange != w.outRange {
			t.Errorf("%s: behind=%v blocked=%v offsets=%d out=%v, want %v %v %d %v", g.Group, g.BehindLSO, g.Blocked, g.OffsetsToLSO, g.OutOfRange, w.behind, w.blocked, w.toLSO, w.outRange)
		}
		if (g.BehindLSO && !g.Blocked) != (g.RecordsToLSO == -1) {
			t.Errorf("%s: records_to_lso %d without a log", g.Group, g.RecordsToLSO)
		}
	}
}

// TestGroupPositionsCountRecords: records to the LSO are delivered
// records, not offsets: markers, aborted data and compacted offsets are
// offsets a consumer passes without receiving anything.
func TestGroupPositionsCountRecords(t *testing.T) {
	// 0-4 plain, 5-7 pid 1 aborted, 8 ABORT, 9-10 gap, 11-13 pid 2
	// committed, 14 COMMIT, 15-16 pid 3 open (pins LSO 15), 17-18 plain.
	l := newLog().plain(-1, 5).txn(1, 3).abort(1).skip(2).txn(2, 3).commit(2).txn(3, 2).plain(-1, 2).build()
	if l.LastStableOffset != 15 {
		t.Fatalf("LSO %d, want 15", l.LastStableOffset)
	}
	tests := []struct {
		committed int64
		records   int64
		behind    bool
		blocked   bool
	}{
		{0, 5 + 3, true, false},  // 5 plain + 3 committed
		{2, 3 + 3, true, false},  // inside the first batch: its last 3 records
		{5, 3, true, false},      // at the aborted transaction: it delivers nothing
		{8, 3, true, false},      // at the ABORT marker
		{10, 3, true, false},     // in the compacted gap
		{12, 2, true, false},     // inside the committed batch
		{14, 0, true, true},      // at the COMMIT marker: nothing left to receive, one offset short: blocked
		{15, 0, true, true},      // at the LSO: waits
		{18, 0, false, false},    // past the LSO, below the HWM: a read_uncommitted position, not held
		{-1, 5 + 3, true, false}, // below the log start: resumes at the log start (earliest)
	}
	var offsets []GroupOffset
	for i, tt := range tests {
		offsets = append(offsets, groupAt(fmt.Sprintf("g%02d", i), tt.committed))
	}
	got := l.GroupPositions(offsets)
	for i, tt := range tests {
		g := got[i]
		if g.Offset != tt.committed || g.RecordsToLSO != tt.records || g.BehindLSO != tt.behind || g.Blocked != tt.blocked {
			t.Errorf("committed %d: records %d behind %v blocked %v, want %d %v %v", g.Offset, g.RecordsToLSO, g.BehindLSO, g.Blocked, tt.records, tt.behind, tt.blocked)
		}
		// The one-walk count equals a consumer started at the offset.
		if g.BehindLSO {
			c := NewCounts(max(g.Offset, l.LogStartOffset), l.LastStableOffset-1)
			for d := range l.Decisions(ConsumeOptions{From: g.Offset, Isolation: ReadCommitted}) {
				c.Add(&d)
			}
			if c.Delivered != g.RecordsToLSO {
				t.Errorf("committed %d: walk counted %d, a consumer from there %d", g.Offset, g.RecordsToLSO, c.Delivered)
			}
		}
	}
}

// TestGroupPositionsNoOpenTransaction: with the LSO at the high
// watermark, a group at the log end waits for new data, not for a
// transaction; it is at the LSO, so behind_lso and blocked are still true
// (it receives nothing); a group below has records to go.
func TestGroupPositionsNoOpenTransaction(t *testing.T) {
	l := newLog().plain(-1, 4).txn(1, 2).commit(1).build()
	got := l.GroupPositions([]GroupOffset{groupAt("a", 7), groupAt("b", 0)})
	if !got[0].BehindLSO || !got[0].Blocked || !got[1].BehindLSO || got[1].Blocked || got[1].RecordsToLSO != 6 {
		t.Fatalf("%+v", got)
	}
}

// TestGroupPositionJSON: the field names the diagnosis JSON carries
// (group, committed_offset, commit_timestamp, behind_lso,
// records_to_lso).
func TestGroupPositionJSON(t *testing.T) {
	b, err := json.Marshal(GroupPosition{GroupOffset: groupAt("g", 3), BehindLSO: true})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"group", "topic", "partition", "committed_offset", "commit_timestamp", "behind_lso", "blocked", "records_to_lso", "offsets_to_lso", "producer_id", "source", "source_offset"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	if m["behind_lso"] != true || m["committed_offset"] != float64(3) {
		t.Errorf("%s", b)
	}
}
