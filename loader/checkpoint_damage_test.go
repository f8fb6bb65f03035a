package loader

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedCheckpointSaysWhatTheBrokerDoes: a log directory's offset
// checkpoint that Kafka's reader fails on is reported with what a broker
// does with it. A bad version, count or field count is CheckpointFile's
// IOException, which takes the log directory offline; a partition or
// offset that does not parse is the formatter's NumberFormatException. The
// recovery points and log starts are then not used at startup, and a
// running broker replaces each file from memory.
func TestDamagedCheckpointSaysWhatTheBrokerDoes(t *testing.T) {
	cases := []struct {
		name, file, body string
		want, not        []string
	}{
		{name: "recovery point, a field missing", file: RecoveryPointOffsetCheckpoint, body: "0\n1\norders 0\n",
			want: []string{"line 3", "IOException", "marks this log directory offline", "recovery point 0 for every partition", "log.flush.offset.checkpoint.interval.ms", "txnscope uses the lines before it"}},
		{name: "recovery point, an offset that does not parse", file: RecoveryPointOffsetCheckpoint, body: "0\n1\norders 0 4\x00\n",
			want: []string{"NumberFormatException", "recovery point 0 for every partition"}, not: []string{"offline"}},
		{name: "log start, a bad version", file: LogStartOffsetCheckpoint, body: "1\n0\n",
			want: []string{"IOException", "offline", "each log starts at its first segment", "log.flush.start.offset.checkpoint.interval.ms"}},
		{name: "high watermarks, a count that does not match", file: ReplicationOffsetCheckpoint, body: "0\n2\norders 0 4\n",
			want: []string{"expected 2 entries, found 1", "IOException", "offline", "replica.high.watermark.checkpoint.interval.ms"}, not: []string{"at startup"}},
		{name: "cleaner offsets, a partition that does not parse", file: CleanerOffsetCheckpoint, body: "0\n1\norders x 4\n",
			want: []string{"NumberFormatException", "txnscope uses the lines before it"}, not: []string{"offline", "replaces"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, c.file), []byte(c.body))
			cps, err := readLogDirCheckpoints(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(cps.Damage) != 1 {
				t.Fatalf("damage %v, want one", cps.Damage)
			}
			msg := cps.Damage[0].Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(msg, n) {
					t.Errorf("%q says %q", msg, n)
				}
			}
		})
	}
}
