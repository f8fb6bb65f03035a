package txnindex

import "testing"

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
