package scenario

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
)

// checkIndexAgrees fails t unless txnindex.Build's rebuild of the
// aborted-transaction index from the built batches (Log.RebuiltIndex) is,
// segment by segment and entry by entry, the one the scenario writer worked
// out from the statements (Built.TxnIndex, the .txnindex files).
func checkIndexAgrees(t *testing.T, s *Scenario, b *Built) {
	t.Helper()
	if len(b.Log.RebuiltIndex) != len(b.TxnIndex) {
		t.Fatalf("%s: engine rebuilt %d segment indexes, scenario wrote %d", s.Name, len(b.Log.RebuiltIndex), len(b.TxnIndex))
	}
	for si := range b.TxnIndex {
		if got, want := b.Log.RebuiltIndex[si], b.TxnIndex[si]; !slices.Equal(got, want) {
			t.Fatalf("%s: segment %d (%s): txnindex.Build rebuilt\n%v\nthe scenario writes\n%v", s.Name, si, b.Log.Segments[si].Name, got, want)
		}
	}
}

// TestTxnIndexAgreesWithScenario: for every demo, and for random scenarios
// of interleaved producers that commit, abort (with and without data), never
// finish, roll segments and leave gaps, the engine's index rebuild agrees
// with the scenario's own. The random ones include aborts while another
// producer's transaction is open, which give an entry a lastStableOffset
// below its marker; the demos have none.
func TestTxnIndexAgreesWithScenario(t *testing.T) {
	demos, err := Demos()
	if err != nil {
		t.Fatal(err)
	}
	entries, pinned := 0, 0
	count := func(b *Built) {
		for _, es := range b.TxnIndex {
			for _, e := range es {
				entries++
				if e.LastStableOffset <= e.LastOffset {
					pinned++
				}
			}
		}
	}
	for _, s := range demos {
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		checkIndexAgrees(t, s, b)
		count(b)
	}
	r := rand.New(rand.NewPCG(16, 1))
	for i := range 500 {
		text := randomScenario(r)
		s, err := Parse(strings.NewReader(text), fmt.Sprintf("random-%d.txn", i))
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		b, err := s.Build()
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if t.Failed() {
			return
		}
		checkIndexAgrees(t, s, b)
		count(b)
	}
	// The random scenarios must reach the cases the rule is about.
	t.Logf("%d entries, %d pinned", entries, pinned)
	if entries < 500 || pinned < 100 {
		t.Fatalf("only %d index entries, %d with the LSO pinned by another producer", entries, pinned)
	}
}

// TestRandomScenariosLoad: random scenarios written to disk load back with
// the .txnindex files the scenario wrote and no mismatch against the
// engine's rebuild (the loader's own comparison), for a few seeds.
func TestRandomScenariosLoad(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	for i := range 20 {
		text := randomScenario(r)
		s, err := Parse(strings.NewReader(text), fmt.Sprintf("random-%d.txn", i))
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := b.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		p, err := loader.OpenPartition(filepath.Join(dir, b.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Damage) != 0 {
			t.Fatalf("damage: %v\n%s", p.Damage, text)
		}
		l := p.Build()
		if len(l.Mismatches) != 0 {
			t.Fatalf("mismatches %+v\n%s", l.Mismatches, text)
		}
		if len(l.Segments) != len(b.TxnIndex) {
			t.Fatalf("%d segments read back, %d written", len(l.Segments), len(b.TxnIndex))
		}
		for si, sg := range l.Segments {
			if !slices.Equal(sg.TxnIndex, b.TxnIndex[si]) {
				t.Fatalf("segment %d read back %v, wrote %v", si, sg.TxnIndex, b.TxnIndex[si])
			}
		}
	}
}

// randomScenario writes a scenario of three transactional producers and an
// idempotent one: transactions that commit, abort or stay open, aborts of
// transactions that sent nothing, plain records, epoch bumps, segment rolls
// and gaps, in random interleavings.
func randomScenario(r *rand.Rand) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "topic random partition %d\n", r.IntN(4))
	names := []string{"a", "b", "c"}
	for i, n := range names {
		fmt.Fprintf(&sb, "producer %s transactional id %d\n", n, 10+i)
	}
	sb.WriteString("producer idem idempotent id 20\n")
	open := map[string]bool{}
	for range 10 + r.IntN(60) {
		n := names[r.IntN(len(names))]
		switch k := r.IntN(20); {
		case k < 7:
			if !open[n] {
				fmt.Fprintf(&sb, "begin %s\n", n)
				open[n] = true
			}
			fmt.Fprintf(&sb, "send %s %d\n", n, 1+r.IntN(4))
		case k < 12:
			if !open[n] {
				// A transaction that sends nothing: its marker gets no
				// index entry.
				fmt.Fprintf(&sb, "begin %s\n", n)
			}
			verb := "commit"
			if r.IntN(2) == 0 {
				verb = "abort"
			}
			fmt.Fprintf(&sb, "%s %s\n", verb, n)
			open[n] = false
		case k < 14:
			fmt.Fprintf(&sb, "plain %d\n", 1+r.IntN(3))
		case k < 15:
			fmt.Fprintf(&sb, "send idem %d\n", 1+r.IntN(3))
		case k < 17:
			sb.WriteString("roll\n")
		case k < 18:
			fmt.Fprintf(&sb, "gap %d\n", 1+r.IntN(5))
		case k < 19:
			fmt.Fprintf(&sb, "bump %s\n", n)
		default:
			fmt.Fprintf(&sb, "wait %d\n", r.IntN(100_000))
		}
	}
	return sb.String()
}
