package txnindex

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden decision streams in testdata/")

// TestGoldenDecisions renders whole decision streams, reasons included, for
// scenarios that exercise every cause, and compares them with
// testdata/*.golden. Reviewers read the diff of those files; regenerate with
// `go test ./txnindex -run Golden -update`.
func TestGoldenDecisions(t *testing.T) {
	scenarios := []struct {
		name string
		log  func() *logBuilder
		opts []ConsumeOptions
	}{
		{"interleaved", func() *logBuilder {
			return newLog().plain(-1, 2).txn(7, 3).txn(8, 2).txn(7, 2).commit(8).plain(-1, 1).abort(7).txn(8, 4).commit(8)
		}, []ConsumeOptions{{Isolation: ReadCommitted}, {Isolation: ReadUncommitted}, {From: 4, Isolation: ReadCommitted, MaxBytes: 100}}},
		{"spanning-segments", func() *logBuilder {
			return newLog().txn(3, 4).plain(-1, 2).roll().txn(3, 4).roll().abort(3).plain(-1, 2)
		}, []ConsumeOptions{{Isolation: ReadCommitted}, {From: 7, Isolation: ReadCommitted}}},
		{"stuck-lso", func() *logBuilder {
			return newLog().txn(5, 2).commit(5).txn(6, 3).txn(5, 2).commit(5).plain(-1, 3)
		}, []ConsumeOptions{{Isolation: ReadCommitted}, {Isolation: ReadUncommitted}}},
		{"compacted", func() *logBuilder {
			return newLog().plain(-1, 2).skip(3).abort(4).emptied(4, 2, false).txn(4, 1).plain(4, 1).commit(4).roll().skip(2).plain(-1, 1)
		}, []ConsumeOptions{{Isolation: ReadCommitted}}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			l := sc.log().build()
			var sb strings.Builder
			fmt.Fprintf(&sb, "%s\n", l)
			for _, tx := range l.Txns {
				fmt.Fprintf(&sb, "txn producer %d [%d,%d] %s marker %d\n", tx.ProducerID, tx.FirstOffset, tx.LastDataOffset, tx.State, tx.MarkerOffset)
			}
			for si, es := range l.RebuiltIndex {
				for _, e := range es {
					fmt.Fprintf(&sb, "%s: %s\n", l.Segments[si].TxnIndexName(), e)
				}
			}
			for _, o := range sc.opts {
				fmt.Fprintf(&sb, "\n# %s from %d max_bytes %d\n", o.Isolation, o.From, o.MaxBytes)
				for d := range l.Decisions(o) {
					fmt.Fprintf(&sb, "%d-%d %s %s fetch=%d ru=%s | %s\n", d.From, d.To, d.Verdict, d.Cause, d.FetchOffset, d.Uncommitted, d.Reason())
				}
			}
			path := filepath.Join("testdata", sc.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if got := sb.String(); got != string(want) {
				t.Errorf("decisions differ from %s (run with -update and review the diff):\n%s", path, got)
			}
		})
	}
}
