package txnindex

import (
	"strings"
	"testing"
)

// TestCoordinatorEpochEvidenceWords: with no marker of the producer in the
// log, the abort's coordinator epoch is 0 and the evidence says why the
// snapshot gave none: no snapshot read, no entry for the producer in it, or
// an entry whose coordinator epoch is still -1 (the broker's entry starts so
// and keeps it until a marker of the producer lands). An entry with one
// gives it.
func TestCoordinatorEpochEvidenceWords(t *testing.T) {
	snap := func(ps map[ProducerID]SnapshotProducer) *SnapshotInfo {
		return &SnapshotInfo{Name: "00000000000000000620.snapshot", Offset: 620, Producers: ps}
	}
	for _, tt := range []struct {
		name string
		snap *SnapshotInfo
		ce   int32
		want string
	}{
		{"NoSnapshot", nil, 0, "no producer snapshot was read"},
		{"NoEntry", snap(map[ProducerID]SnapshotProducer{8: {CoordinatorEpoch: 4}}), 0, "no entry for it in producer snapshot 00000000000000000620.snapshot"},
		{"EntryWithoutEpoch", snap(map[ProducerID]SnapshotProducer{7: {CoordinatorEpoch: -1}}), 0, "its entry in producer snapshot 00000000000000000620.snapshot has none (-1"},
		{"EntryWithEpoch", snap(map[ProducerID]SnapshotProducer{7: {CoordinatorEpoch: 5}}), 5, "producer snapshot 00000000000000000620.snapshot"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &Log{Snapshot: tt.snap}
			ce, src := l.CoordinatorEpochEvidence(7)
			if ce != tt.ce || !strings.Contains(src, tt.want) {
				t.Fatalf("coordinator epoch %d (%q), want %d and %q", ce, src, tt.ce, tt.want)
			}
		})
	}
}
