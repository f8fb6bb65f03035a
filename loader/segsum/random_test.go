package segsum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// The randomized differential test: random partitions shaped as
// production leaves them (transactions interleaved and spanning segment
// rolls, aborts whose marker is segments after their data, the cleaner's
// gaps inside and at the ends of segments, transactions v2 markers at
// epoch+1 and epoch exhaustion, retention that deleted the first segments
// so that a transaction's start is known only from the producer .snapshot,
// a high watermark below the log end), written as real partition
// directories by package scenario (kmsg-encoded batches, .index,
// .timeindex, .txnindex, .snapshot, checkpoints). The oracle is one full
// pass: loader.OpenPartition of the whole directory and txnindex.Build,
// which segsum does not take part in.

// randomScenario writes a scenario file drawn from r. The high watermark
// and the log start are chosen once the log end is known (randomPartition).
// With noGaps, a step that would leave offsets missing (the cleaner's
// gaps) writes a plain batch instead: a log no cleaner touched.
func randomScenario(r *rand.Rand, noGaps bool) string {
	var b strings.Builder
	b.WriteString("topic rnd\n")
	type prod struct {
		name       string
		inTxn, tv2 bool
		sent       bool
	}
	var ps []*prod
	for i := range 1 + r.IntN(4) {
		p := &prod{name: fmt.Sprintf("t%d", i), tv2: r.IntN(2) == 0}
		fmt.Fprintf(&b, "producer %s transactional", p.name)
		if p.tv2 {
			b.WriteString(" tv2")
			if r.IntN(4) == 0 {
				// Near Short.MaxValue: markers exhaust the id.
				fmt.Fprintf(&b, " epoch %d", 32762+r.IntN(4))
			}
		}
		b.WriteString("\n")
		ps = append(ps, p)
	}
	b.WriteString("producer idem idempotent\n")
	steps := 20 + r.IntN(120)
	for range steps {
		switch x := r.IntN(100); {
		case x < 8:
			b.WriteString("roll\n")
		case x < 20 && noGaps:
			fmt.Fprintf(&b, "plain %d\n", 1+r.IntN(4))
		case x < 14:
			fmt.Fprintf(&b, "gap %d\n", 1+r.IntN(4))
		case x < 17:
			// A segment whose tail the cleaner emptied: the hole
			// runs to the next segment's first batch.
			fmt.Fprintf(&b, "gap %d\nroll\n", 1+r.IntN(4))
		case x < 20:
			// The head of a segment cleaned: its base offset is
			// below its first batch.
			fmt.Fprintf(&b, "roll\ngap %d\n", 1+r.IntN(4))
		case x < 26:
			fmt.Fprintf(&b, "plain %d\n", 1+r.IntN(3))
		case x < 30:
			fmt.Fprintf(&b, "send idem %d\n", 1+r.IntN(3))
		case x < 31:
			fmt.Fprintf(&b, "wait %d\n", r.IntN(100000))
		default:
			p := ps[r.IntN(len(ps))]
			switch {
			case !p.inTxn && r.IntN(20) == 0 && !p.tv2:
				fmt.Fprintf(&b, "bump %s\n", p.name)
			case !p.inTxn:
				fmt.Fprintf(&b, "begin %s\n", p.name)
				p.inTxn, p.sent = true, false
				if r.IntN(10) != 0 {
					fmt.Fprintf(&b, "send %s %d\n", p.name, 1+r.IntN(3))
					p.sent = true
				}
			case r.IntN(3) != 0 || !p.sent:
				fmt.Fprintf(&b, "send %s %d\n", p.name, 1+r.IntN(3))
				p.sent = true
			case r.IntN(3) == 0:
				fmt.Fprintf(&b, "abort %s\n", p.name)
				p.inTxn = false
			default:
				fmt.Fprintf(&b, "commit %s\n", p.name)
				p.inTxn = false
			}
		}
	}
	// Most transactions end; some stay open (a hanging one pins the LSO).
	for _, p := range ps {
		if p.inTxn && r.IntN(3) != 0 {
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "commit %s\n", p.name)
			} else {
				fmt.Fprintf(&b, "abort %s\n", p.name)
			}
		}
	}
	if r.IntN(3) == 0 {
		b.WriteString("plain\n")
	}
	return b.String()
}

// randomOptions choose the shapes randomPartition may add beyond the
// scenario's.
type randomOptions struct {
	// overlapSegments: in about a third of the partitions, one or two
	// segments begin with a copy of the last batches of the segment
	// before, and sometimes take the copy's first offset as their base
	// offset (the chain of overlapping segments the broker loads as it
	// finds it, see overlap_test.go). Drawn from its own generator, so
	// the partitions are otherwise those of the seed without it.
	overlapSegments bool
	// noGaps: no step leaves offsets missing (randomScenario).
	noGaps bool
}

// randomPartitionWith writes the partition of seed, with the shapes o
// adds, into a new log dir and returns its directory and the scenario it
// was built from.
func randomPartitionWith(t testing.TB, seed uint64, o randomOptions) (string, string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	text := randomScenario(r, o.noGaps)
	// The broker takes a producer snapshot at every roll: most rolls
	// here write one (drawn apart from r, which drew the scenario).
	snaps := rand.New(rand.NewPCG(seed, 0x5a9))
	text = regexp.MustCompile(`(?m)^roll$`).ReplaceAllStringFunc(text, func(string) string {
		if snaps.IntN(4) == 0 {
			return "roll"
		}
		return "roll snapshot"
	})
	build := func(text string) *scenario.Built {
		sc, err := scenario.Parse(strings.NewReader(text), fmt.Sprintf("seed%d.txn", seed))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		b, err := sc.Build()
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		return b
	}
	b := build(text)
	leo := b.Log.LogEndOffset
	var bases []int64
	for _, s := range b.Log.Segments {
		bases = append(bases, s.BaseOffset)
	}
	// Retention deleted the first segments (LocalLog.deleteOldSegments):
	// their files go, the log start moves to the first kept segment's
	// base offset, or past it (DeleteRecords).
	drop := 0
	if len(bases) > 2 && r.IntN(3) == 0 {
		drop = 1 + r.IntN(len(bases)-2)
	}
	start := int64(0)
	if drop > 0 {
		start = bases[drop]
		if r.IntN(4) == 0 && drop+1 < len(bases) {
			start += r.Int64N(bases[drop+1] - bases[drop])
		}
		text += fmt.Sprintf("retain %d\n", start)
	}
	if r.IntN(3) == 0 && leo > start {
		text += fmt.Sprintf("hwm %d\n", start+r.Int64N(leo-start+1))
	}
	b = build(text)
	logDir := t.TempDir()
	if err := b.WriteDir(logDir); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(logDir, b.Dir)
	for _, base := range bases[:drop] {
		// The snapshots of the deleted segments go with them
		// (ProducerStateManager.deleteSnapshotsBefore the first kept).
		for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot"} {
			if err := os.Remove(filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext))); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	kept := bases[drop:]
	if len(kept) > 2 && r.IntN(4) == 0 {
		text += interruptedCleaning(t, r, dir, kept)
	} else if len(kept) > 2 && r.IntN(3) == 0 {
		// The cleaner removed a segment's batches without producer id,
		// or all of them (LogCleaner keeps an emptied segment's files).
		base := kept[r.IntN(len(kept)-1)]
		p := filepath.Join(dir, fmt.Sprintf("%020d.log", base))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all := r.IntN(2) == 0 // every batch: the segment is left empty
		if err := os.WriteFile(p, dropBatches(t, data, func(b *txnindex.Batch) bool { return all || !b.HasProducerID() }), 0o644); err != nil {
			t.Fatal(err)
		}
		text += fmt.Sprintf("# segment %d cleaned (all batches: %v)\n", base, all)
	}
	if o.overlapSegments && !strings.Contains(text, "# swap") {
		text += overlapRandom(t, rand.New(rand.NewPCG(seed, 0x0e71a9)), dir, kept)
	}
	return dir, text
}

// overlapRandom, one time in three, puts at the head of one or two of
// dir's segments (bases) a copy of the last one to three batches of the
// segment before, and sometimes renames the segment's files to the copy's
// first offset; or makes the segment a copy of batches from the middle of
// the one before, renamed so. It returns a line for the scenario's text saying what it
// did.
func overlapRandom(t testing.TB, r *rand.Rand, dir string, bases []int64) string {
	t.Helper()
	if len(bases) < 2 || r.IntN(3) != 0 {
		return ""
	}
	name := func(base int64, ext string) string { return filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext)) }
	bases = append([]int64(nil), bases...)
	note := ""
	for range 1 + r.IntN(2) {
		k := 1 + r.IntN(len(bases)-1)
		src, err := os.ReadFile(name(bases[k-1], ".log"))
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		var offs []int64
		dropBatches(t, src, func(b *txnindex.Batch) bool {
			sizes, offs = append(sizes, int(b.Size)), append(offs, b.BaseOffset)
			return false
		})
		if len(sizes) == 0 {
			continue
		}
		// The copy: the last n batches, or (one time in four) n
		// batches from the middle that then make up the whole
		// segment, whose base becomes the copy's (a segment inside
		// the one before, see overlap_test.go).
		n := min(1+r.IntN(3), len(sizes))
		hi := len(sizes)
		inside := r.IntN(4) == 0 && len(sizes) > n
		if inside {
			hi = n + r.IntN(len(sizes)-n)
		}
		lo := hi - n
		var at, tail int
		for i, z := range sizes {
			if i < lo {
				at += z
			} else if i < hi {
				tail += z
			}
		}
		dst, err := os.ReadFile(name(bases[k], ".log"))
		if err != nil {
			t.Fatal(err)
		}
		if inside {
			dst = nil
		}
		if err := os.WriteFile(name(bases[k], ".log"), append(append([]byte{}, src[at:at+tail]...), dst...), 0o644); err != nil {
			t.Fatal(err)
		}
		note += fmt.Sprintf(" %d batches of %d copied to %d (inside: %v)", n, bases[k-1], bases[k], inside)
		if first := offs[lo]; (inside || r.IntN(2) == 0) && first > bases[k-1] {
			// The base offsets still ascend: the segment's base lies
			// inside the one before.
			for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex"} {
				if _, err := os.Stat(name(bases[k], ext)); err == nil {
					if err := os.Rename(name(bases[k], ext), name(first, ext)); err != nil {
						t.Fatal(err)
					}
				}
			}
			note += fmt.Sprintf(", renamed to %d", first)
			bases[k] = first
		}
	}
	if note == "" {
		return ""
	}
	return "# overlap:" + note + "\n"
}

// interruptedCleaning leaves dir as a broker stopped in the middle of a
// cleaning leaves it (LogCleaner's .cleaned then .swap files, which
// LogLoader.load completes or deletes on startup): a .swap of one or two
// segments with some batches without producer id removed, and sometimes a
// .cleaned file after it with a .swap past it, which the broker deletes.
// It returns a line for the scenario's text saying what it did.
func interruptedCleaning(t testing.TB, r *rand.Rand, dir string, bases []int64) string {
	t.Helper()
	name := func(base int64, ext string) string { return filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext)) }
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return data
	}
	write := func(p string, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k := r.IntN(len(bases) - 2)
	n := 1 + r.IntN(2)
	var log, txn []byte
	for _, b := range bases[k : k+n] {
		log = append(log, dropBatches(t, read(name(b, ".log")), func(b *txnindex.Batch) bool { return !b.HasProducerID() && r.IntN(2) == 0 })...)
		txn = append(txn, read(name(b, ".txnindex"))...)
	}
	write(name(bases[k], ".log.swap"), log)
	write(name(bases[k], ".index.swap"), nil)
	write(name(bases[k], ".timeindex.swap"), nil)
	if len(txn) > 0 {
		write(name(bases[k], ".txnindex.swap"), txn)
	}
	note := fmt.Sprintf("# swap of %d segments at %d", n, bases[k])
	if c := k + n; c+1 < len(bases) && r.IntN(2) == 0 {
		write(name(bases[c], ".log.cleaned"), read(name(bases[c], ".log")))
		write(name(bases[c+1], ".log.swap"), nil)
		note += fmt.Sprintf(", .cleaned at %d, invalid swap at %d", bases[c], bases[c+1])
	}
	return note + "\n"
}

// consumers are the consumers every window is compared for.
func consumers(full *txnindex.Log, r *rand.Rand) []txnindex.ConsumeOptions {
	cs := []txnindex.ConsumeOptions{
		{From: -1, Isolation: txnindex.ReadCommitted},
		{From: -1, Isolation: txnindex.ReadUncommitted},
		{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: 200},
		{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantLibrdkafka},
		{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantFranzGo},
		// The clients that depart from Kafka's rule: a window's consumer
		// enters where a full pass's does, as kafkajs's refetch of a
		// filtered tail stays within one segment (a fetch reads one).
		{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantKafkaJS},
		{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantKafkaJS, MaxBytes: 200},
		{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantKafkaGo},
		{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantKafkaPython},
	}
	if full.LogEndOffset > full.LogStartOffset {
		from := full.LogStartOffset + r.Int64N(full.LogEndOffset-full.LogStartOffset)
		cs = append(cs, txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted},
			txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadUncommitted, MaxBytes: 300})
	}
	return cs
}

// differ compares the segment windows of dir with one full pass, and
// returns the first difference, "" when there is none.
func differ(t testing.TB, dir string, seed uint64) string {
	t.Helper()
	p, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := p.Build()
	st, err := Open(dir, Options{Scan: loader.DefaultScanOptions, MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	only, err := Open(dir, Options{Scan: loader.DefaultScanOptions, MaxMemory: 1 << 30, DecisionsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ov, err := st.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.Segments) != len(p.Segments) {
		return fmt.Sprintf("%d segments, the loader %d", len(ov.Segments), len(p.Segments))
	}
	for k, s := range p.Segments {
		if ov.Segments[k].Name != s.Log.Name {
			return fmt.Sprintf("segment %d is %s, the loader's %s", k, ov.Segments[k].Name, s.Log.Name)
		}
	}
	if want := (Bounds{full.LogStartOffset, full.LogEndOffset, full.HighWatermark, full.LastStableOffset}); ov.Bounds != want {
		return fmt.Sprintf("bounds %+v, full pass %+v", ov.Bounds, want)
	}
	want := countsOf(full, len(ov.Segments))
	for k, g := range ov.Segments {
		w := want[k]
		if g.NonTransactional != w.NonTransactional || g.Committed != w.Committed || g.Aborted != w.Aborted || g.Open != w.Open || g.Control != w.Control {
			return fmt.Sprintf("segment %d counts: overview %+v, full pass %+v", k, g, w)
		}
	}
	r := rand.New(rand.NewPCG(seed, 7))
	for _, o := range consumers(full, r) {
		var want, got []canon
		for d := range full.Decisions(o) {
			want = append(want, canonOf(&d))
		}
		for k := range ov.Segments {
			w, err := st.Window(ctx, k, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range w.Len() {
				got = append(got, canonOf(ptr(w.Decision(i))))
			}
		}
		if d := firstDiffer(o, "segments", got, want); d != "" {
			return d
		}
		// Windows seeded with only what their decisions read decide
		// the same.
		got = nil
		for k := range ov.Segments {
			w, err := only.Window(ctx, k, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range w.Len() {
				got = append(got, canonOf(ptr(w.Decision(i))))
			}
		}
		if d := firstDiffer(o, "segments, decisions only", got, want); d != "" {
			return d
		}
		// Views of random ranges, and of every single offset of a
		// small log, give the full pass's decisions that overlap them.
		var views [][2]int64
		for range 4 {
			if full.LogEndOffset <= 0 {
				break
			}
			from := r.Int64N(full.LogEndOffset + 2)
			views = append(views, [2]int64{from, from + r.Int64N(20)})
		}
		for off := int64(0); off <= full.LogEndOffset && full.LogEndOffset <= 1000; off++ {
			views = append(views, [2]int64{off, off})
		}
		for _, v := range views {
			from, to := v[0], v[1]
			var in, exp []canon
			if err := st.Decisions(ctx, from, to, o, func(_ *Window, d *txnindex.Decision) bool { in = append(in, canonOf(d)); return true }); err != nil {
				t.Fatal(err)
			}
			for _, c := range want {
				if c.To >= from && c.From <= to {
					exp = append(exp, c)
				}
			}
			if fmt.Sprint(in) != fmt.Sprint(exp) {
				return fmt.Sprintf("%+v: view [%d,%d]:\n segments  %+v\n full pass %+v", o, from, to, in, exp)
			}
		}
	}
	return ""
}

// firstDiffer is the first decision where got (the windows') and want (a
// full pass's) differ, "" when none.
func firstDiffer(o txnindex.ConsumeOptions, what string, got, want []canon) string {
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			return fmt.Sprintf("%+v: decision %d of %d (%s) and %d (full pass):\n segments  %+v\n full pass %+v",
				o, i, len(got), what, len(want), got[i:min(i+2, len(got))], want[i:min(i+2, len(want))])
		}
	}
	return ""
}

// countsOf is what the overview should count per segment: each batch's
// records by what a full pass says became of its transaction.
func countsOf(full *txnindex.Log, n int) []SegmentView {
	want := make([]SegmentView, n)
	for i := range full.Batches {
		b := &full.Batches[i]
		v := &want[b.Segment]
		switch tx := full.TxnOf(i); {
		case b.IsControl():
			v.Control += int64(b.Records)
		case tx == nil:
			v.NonTransactional += int64(b.Records)
		case tx.State == txnindex.TxnCommitted:
			v.Committed += int64(b.Records)
		case tx.State == txnindex.TxnAborted:
			v.Aborted += int64(b.Records)
		default:
			v.Open += int64(b.Records)
		}
	}
	return want
}

// randomSeeds are the fixed seeds TestRandomPartitionsEqualFullPass runs.
var randomSeeds = func() []uint64 {
	var s []uint64
	for i := range uint64(150) {
		s = append(s, 1+i*0x9e37)
	}
	return s
}()

// TestRandomPartitionsEqualFullPass: on many random production-shaped
// partitions, every segment window's decisions, the views of random
// ranges, the bounds and the overview's counts equal one full pass.
func TestRandomPartitionsEqualFullPass(t *testing.T) {
	segs, spanning, swept, swapped, overlapped, inside := 0, 0, 0, 0, 0, 0
	for _, seed := range randomSeeds {
		dir, text := randomPartitionWith(t, seed, randomOptions{overlapSegments: true})
		if d := differ(t, dir, seed); d != "" {
			t.Fatalf("seed %d: %s\nscenario:\n%s", seed, d, text)
		}
		p, _ := loader.OpenPartition(dir)
		l := p.Build()
		segs += len(l.Segments)
		spanning += spanningAborts(l)
		if l.LogStartOffset > 0 {
			swept++
		}
		if strings.Contains(text, "# swap") {
			swapped++
		}
		if strings.Contains(text, "# overlap") {
			overlapped++
		}
		if strings.Contains(text, "(inside: true), renamed") {
			inside++
		}
	}
	if spanning == 0 || swept == 0 || swapped == 0 || overlapped == 0 || inside == 0 {
		t.Fatalf("%d aborts spanning segments, %d partitions after retention, %d mid-cleaning, %d with overlapping segments (%d with a segment inside the one before): the seeds miss the cases this test is for", spanning, swept, swapped, overlapped, inside)
	}
	t.Logf("%d partitions, %d segments, %d aborts spanning segments, %d after retention, %d mid-cleaning, %d with overlapping segments (%d with a segment inside the one before)", len(randomSeeds), segs, spanning, swept, swapped, overlapped, inside)
}

// FuzzWindowsEqualFullPass is TestRandomPartitionsEqualFullPass for any
// seed (make fuzz); the corpus in testdata holds seeds that found bugs.
func FuzzWindowsEqualFullPass(f *testing.F) {
	for _, s := range randomSeeds[:10] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		dir, text := randomPartitionWith(t, seed, randomOptions{overlapSegments: true})
		if d := differ(t, dir, seed); d != "" {
			t.Fatalf("seed %d: %s\nscenario:\n%s", seed, d, text)
		}
	})
}
