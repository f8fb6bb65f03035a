package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedSnapshotsFallsBackAsTheBroker: the one seeding routine takes the
// newest snapshot the broker keeps that decodes cleanly, at or below
// AtMost; a damaged one, one too large to read, a symlink and one the
// broker deletes on startup are passed over, each said (damage, or
// Deleted with why), and the next older is tried, as
// ProducerStateManager falls back from a corrupt snapshot.
func TestSeedSnapshotsFallsBackAsTheBroker(t *testing.T) {
	bases := []int64{0, 100, 200, 300}
	good := AppendProducerSnapshot(nil, []SnapshotEntry{{ProducerID: 7, Epoch: 1, LastOffset: 150, CurrentTxnFirstOffset: 120, Timestamp: 5, CoordinatorEpoch: 2}})
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff // the CRC no longer matches
	name := func(off int64) string { return fmt.Sprintf("%020d.snapshot", off) }
	for _, c := range []struct {
		name    string
		files   map[int64]string // offset: good, bad, huge, link
		o       SeedOptions
		want    int64 // the snapshot taken, -1 none
		damage  []string
		deleted []string
		read    int // snapshots decoded
	}{
		{"the newest clean", map[int64]string{100: "good", 200: "good", 300: "good"}, SeedOptions{AtMost: -1}, 300, nil, nil, 1},
		{"every one decoded for display", map[int64]string{100: "good", 200: "bad", 300: "good"}, SeedOptions{AtMost: -1, Every: true}, 300, []string{name(200)}, nil, 3},
		{"a damaged newest: the one before", map[int64]string{100: "good", 200: "good", 300: "bad"}, SeedOptions{AtMost: -1}, 200, []string{name(300)}, nil, 2},
		{"too large to read: damage, the one before", map[int64]string{100: "good", 300: "huge"}, SeedOptions{AtMost: -1}, 100, []string{name(300)}, nil, 1},
		{"a symlink: damage, the one before", map[int64]string{100: "good", 300: "link"}, SeedOptions{AtMost: -1}, 100, []string{name(300)}, nil, 1},
		{"none past AtMost", map[int64]string{100: "good", 200: "good", 300: "good"}, SeedOptions{AtMost: 250}, 200, nil, nil, 1},
		{"a stray one is the broker's to delete", map[int64]string{100: "good", 150: "good"}, SeedOptions{AtMost: -1}, 100, nil, []string{name(150)}, 1},
		{"a segment's, below the log start: kept until a restart", map[int64]string{100: "good", 200: "good"}, SeedOptions{AtMost: -1, LogStart: 250}, 200, nil, nil, 1},
		{"past the log end", map[int64]string{100: "good", 300: "good"}, SeedOptions{AtMost: -1, LogEnd: 250}, 100, nil, []string{name(300)}, 1},
		{"every one damaged", map[int64]string{100: "bad", 200: "bad"}, SeedOptions{AtMost: -1}, -1, []string{name(100), name(200)}, nil, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var names []string
			for off, kind := range c.files {
				path := filepath.Join(dir, name(off))
				names = append(names, name(off))
				var err error
				switch kind {
				case "good":
					err = os.WriteFile(path, good, 0o644)
				case "bad":
					err = os.WriteFile(path, bad, 0o644)
				case "huge":
					// Sparse: nothing of it is read.
					if err = os.WriteFile(path, good, 0o644); err == nil {
						err = os.Truncate(path, maxStateFile+1)
					}
				case "link":
					target := filepath.Join(t.TempDir(), "elsewhere")
					if err = os.WriteFile(target, good, 0o644); err == nil {
						err = os.Symlink(target, path)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			o := c.o
			o.Bases = bases
			if o.LogStart == 0 {
				o.LogStart = -1
			}
			if o.LogEnd == 0 {
				o.LogEnd = -1
			}
			sd, err := SeedSnapshots(dir, names, o)
			if err != nil {
				t.Fatal(err)
			}
			got := int64(-1)
			if sd.Snapshot != nil {
				got = sd.Snapshot.Offset
			}
			var damage, deleted []string
			for _, d := range sd.Damage {
				damage = append(damage, d.File)
			}
			for _, d := range sd.Deleted {
				deleted = append(deleted, d.Name)
			}
			if got != c.want || fmt.Sprint(damage) != fmt.Sprint(c.damage) || fmt.Sprint(deleted) != fmt.Sprint(c.deleted) || len(sd.Read) != c.read {
				t.Errorf("seeded from %d, damage %v, deleted %v, %d read; want %d, %v, %v, %d", got, damage, deleted, len(sd.Read), c.want, c.damage, c.deleted, c.read)
			}
			for _, d := range sd.Deleted {
				if !strings.HasPrefix(d.Reason, "deleted by the broker on startup") {
					t.Errorf("%s: reason %q", d.Name, d.Reason)
				}
			}
			// What it seeds a log whose first batch read is at 130:
			// the transaction open in it that began before, at 120.
			if sd.Snapshot != nil && sd.Snapshot.Offset >= 130 {
				if on := sd.Ongoing(130); len(on) != 1 || on[0].FirstOffset != 120 || on[0].CoordinatorEpoch != 2 {
					t.Errorf("Ongoing(130) = %+v", on)
				}
			}
		})
	}
}
