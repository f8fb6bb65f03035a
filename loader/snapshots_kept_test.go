package loader

import (
	"fmt"
	"strings"
	"testing"
)

// TestSnapshotsKeptAroundTheLogStart: each row is a partition's segments,
// its log start (the larger of log-start-offset-checkpoint and the first
// segment's base) and its snapshots; kept are those the running broker
// still holds. A segment's snapshot at or below the log start stays until
// the next restart (retention leaves the one at the new first segment,
// DeleteRecords the one of the segment it moved the log start into);
// truncateAndReload deletes it then, which is why its presence says the
// broker has not restarted.
func TestSnapshotsKeptAroundTheLogStart(t *testing.T) {
	for _, tt := range []struct {
		name     string
		bases    []int64
		logStart int64
		snaps    []int64
		kept     string
	}{
		{"retention: the snapshot at the new first segment, at the log start", []int64{500, 700}, 500, []int64{500, 700}, "500 700"},
		{"DeleteRecords inside the first segment: its snapshot below the log start is kept", []int64{500, 700}, 540, []int64{500, 700}, "500 700"},
		{"DeleteRecords into the second segment: both segments' snapshots are kept", []int64{500, 700, 900}, 750, []int64{500, 700, 900}, "500 700 900"},
		{"a snapshot below the first segment is a stray", []int64{500, 700}, 540, []int64{300, 700}, "700"},
		{"past the log end", []int64{500, 700}, 500, []int64{500, 1200}, "500"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, o := range tt.snaps {
				names = append(names, fmt.Sprintf("%020d.snapshot", o))
			}
			kept, _ := SnapshotsKept(names, tt.bases, 0, 0, tt.logStart, 1000)
			var got []string
			for _, n := range kept {
				off, _, _ := splitSegmentName(n)
				got = append(got, fmt.Sprint(off))
			}
			if strings.Join(got, " ") != tt.kept {
				t.Errorf("kept %v, want %s", got, tt.kept)
			}
		})
	}
}
