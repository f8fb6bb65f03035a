package logindex

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/txnindex"
)

// DefaultJoinBytes bounds the segment bytes of __consumer_offsets and
// __transaction_state read for the diagnosis join, over all their
// partitions: a busy cluster's offsets topic holds GiBs (100 MiB segments,
// offsets.topic.segment.bytes), and a page must not wait for all of it.
const DefaultJoinBytes = 64 << 20

// Join is what a log directory's internal topics say, for the diagnoses of
// its partitions (diagnosis.Join): read once, on the first partition
// opened, within JoinBytes.
type Join struct {
	Evidence txnindex.InternalEvidence
	// Read is what was read, in words: "50 __consumer_offsets and 50
	// __transaction_state partitions, 12.3 MiB".
	Read string
	// Partial is "" when every internal partition was read whole;
	// otherwise what was left out and what that means for the join.
	Partial string
}

// joinPart is one internal partition to read: its segments, and how many
// of the newest fit the budget.
type joinPart struct {
	e     *Entry
	bases []int64
	sizes []int64
	total int64
	from  int // index of the first segment read; len(bases) when none
}

// Join reads the internal topics' partitions of the directory once and
// caches what they say. The coordinators load these compacted topics from
// the log start to the end, the last record of a key winning
// (TransactionStateManager.loadTransactionMetadata,
// GroupMetadataManager.loadGroupsAndOffsets); where a partition is larger
// than its share of JoinBytes only its newest segments are read: a key
// found there has its latest value (compaction keeps the last), a key
// whose last record is older is missing, and the join says so (Partial),
// the coordinators counted incomplete (txnindex.TxnCoordinators.Complete:
// a producer id not found is then "unknown", not "no transactional id").
func (x *Index) Join(ctx context.Context) *Join {
	x.joinOnce.Do(func() { x.join = x.readJoin(ctx) })
	return x.join
}

func (x *Index) readJoin(ctx context.Context) *Join {
	budget := x.JoinBytes
	if budget <= 0 {
		budget = DefaultJoinBytes
	}
	var parts []*joinPart
	ids := &internaltopic.Internal{}
	for _, e := range append(x.Entries[:len(x.Entries):len(x.Entries)], x.MetadataEntries...) {
		if !joinTopics[e.Topic] {
			if !e.Internal && !e.Metadata {
				// A data partition's topic id, which share groups'
				// states name it by (its partition.metadata alone).
				if m, err := loader.ReadPartitionMetadataIn(e.Dir); err == nil && m != nil {
					ids.AddTopicID(m.TopicID, e.Topic)
				}
			}
			continue
		}
		jp := &joinPart{e: e}
		type seg struct{ base, size int64 }
		var segs []seg
		ents, _ := os.ReadDir(e.Dir) // unreadable: nothing to read
		for _, de := range ents {
			if b, ok := offsetName(de.Name(), ".log"); ok && de.Type().IsRegular() {
				if fi, err := de.Info(); err == nil {
					segs = append(segs, seg{b, fi.Size()})
				}
			}
		}
		slices.SortFunc(segs, func(a, b seg) int { return cmp.Compare(a.base, b.base) })
		for _, sg := range segs {
			jp.bases, jp.sizes = append(jp.bases, sg.base), append(jp.sizes, sg.size)
			jp.total += sg.size
		}
		parts = append(parts, jp)
	}
	j := &Join{}
	if len(parts) == 0 {
		return j
	}
	// Water-filling: the smallest partitions first, each taking its
	// newest segments up to an even share of what is left, so that small
	// partitions are read whole and the rest share the remainder.
	order := slices.Clone(parts)
	slices.SortStableFunc(order, func(a, b *joinPart) int { return cmp.Compare(a.total, b.total) })
	left := budget
	for i, jp := range order {
		share := left / int64(len(order)-i)
		jp.from = len(jp.bases)
		var took int64
		for k := len(jp.bases) - 1; k >= 0 && took+jp.sizes[k] <= share; k-- {
			took += jp.sizes[k]
			jp.from = k
		}
		left -= took
	}

	type result struct {
		in    *internaltopic.Internal
		err   error
		bytes int64
	}
	res := make([]result, len(parts))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 4, len(parts)) {
		wg.Go(func() {
			for i := range jobs {
				r := &res[i]
				r.in, r.bytes, r.err = x.readInternal(ctx, parts[i])
			}
		})
	}
	for i := range parts {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	in := ids
	var total int64
	var cut, unread []string
	var damagedRecords int64
	damagedFiles := 0
	txnWhole := true
	for i, r := range res {
		jp := parts[i]
		total += r.bytes
		switch {
		case r.err != nil:
			unread = append(unread, fmt.Sprintf("%s (%v)", jp.e.Name, r.err))
		case jp.from == len(jp.bases) && len(jp.bases) > 0:
			unread = append(unread, jp.e.Name+" (its newest segment alone is over the share of the bound)")
		case jp.from > 0:
			cut = append(cut, fmt.Sprintf("%s from offset %d", jp.e.Name, jp.bases[jp.from]))
		}
		if (r.err != nil || jp.from > 0 || jp.from == len(jp.bases) && len(jp.bases) > 0) && jp.e.Topic == internaltopic.TransactionStateTopic {
			txnWhole = false
		}
		if r.in != nil {
			damagedRecords += statsOf(r.in).Damaged
			damagedFiles += len(r.in.Damage())
			in.Merge(r.in)
		}
	}
	j.Evidence = in.Evidence()
	var read []string
	if in.Offsets != nil {
		read = append(read, j.Evidence.GroupsSource)
	}
	if txns := in.Txns; txns != nil {
		j.Evidence.Coordinators = txnindex.NewTxnCoordinators(slices.Clone(txns.States),
			txnWhole && txns.Covers(internaltopic.DefaultTransactionStatePartitions))
		read = append(read, fmt.Sprintf("%s of %s", txnindex.Plural(len(txns.Partitions), "partition", "partitions"), internaltopic.TransactionStateTopic))
	}
	if in.Shares != nil {
		read = append(read, j.Evidence.ShareSource)
	}
	if in.Cluster != nil {
		read = append(read, "the "+txnindex.ClusterMetadataTopic+" log")
	}
	j.Read = fmt.Sprintf("%s, %s read", strings.Join(read, " and "), txnindex.Bytes(total))
	var notes []string
	if len(cut) > 0 {
		notes = append(notes, fmt.Sprintf("only the newest segments of %s were read (%s): the join reads at most %s of the internal topics; a consumer group or transactional id whose last record is older is not shown",
			txnindex.Plural(len(cut), "internal partition", "internal partitions"), listSome(cut), txnindex.Bytes(budget)))
	}
	if len(unread) > 0 {
		notes = append(notes, fmt.Sprintf("%s not read (%s): their groups and transactional ids are not shown",
			txnindex.Plural(len(unread), "internal partition", "internal partitions"), listSome(unread)))
	}
	switch {
	case damagedRecords > 0:
		notes = append(notes, fmt.Sprintf("%s of the internal topics could not be decoded", txnindex.Plural(damagedRecords, "record", "records")))
	case damagedFiles > 0:
		notes = append(notes, fmt.Sprintf("%s in the internal topics' segments could not be read", txnindex.Plural(damagedFiles, "damaged batch", "damaged batches")))
	}
	j.Partial = strings.Join(notes, "; ")
	j.Evidence.Note = j.Partial
	return j
}

// readInternal reads jp's segments from jp.from on into a partition and
// replays them as the coordinator would. The segment files are closed
// before it returns.
func (x *Index) readInternal(ctx context.Context, jp *joinPart) (*internaltopic.Internal, int64, error) {
	if jp.from >= len(jp.bases) && !(jp.e.Metadata && len(jp.bases) == 0) {
		// Nothing fits the budget; a metadata log with no segment may
		// still hold snapshots.
		return nil, 0, nil
	}
	e := jp.e
	in := &txnindex.Partition{Topic: e.Topic, Partition: e.Partition, LogStartOffset: -1, HighWatermark: -1}
	if x.Checkpoints != nil {
		if v, ok := x.Checkpoints.LogStartOffset.Lookup(e.Topic, e.Partition); ok {
			in.LogStartOffset = v
		}
	}
	if jp.from > 0 {
		// What is below the first segment read is not replayed: it
		// stands as not there, as below a log start.
		in.LogStartOffset = max(in.LogStartOffset, jp.bases[jp.from])
	}
	p := &loader.Partition{Dir: e.Dir, Input: in, RecoveryPoint: -1, CleanerOffset: -1}
	defer func() {
		for _, s := range p.Segments {
			s.Log.Close()
		}
	}()
	var n int64
	for k := jp.from; k < len(jp.bases); k++ {
		f, err := loader.OpenSegmentContext(ctx, filepath.Join(e.Dir, fmt.Sprintf("%020d.log", jp.bases[k])), loader.DefaultScanOptions)
		if err != nil {
			return nil, n, err
		}
		n += f.Size
		si := int32(len(p.Segments))
		p.Segments = append(p.Segments, &loader.SegmentFiles{Log: f})
		in.Segments = append(in.Segments, f.Segment())
		for _, b := range f.Batches {
			b.Segment = si
			in.Batches = append(in.Batches, b)
		}
	}
	if e.Metadata {
		// The snapshots hold the image the deleted segments held.
		p.KRaftSnapshots = loader.ListKRaftSnapshots(e.Dir)
	}
	it := &internaltopic.Internal{}
	if err := it.Read(p); err != nil {
		return nil, n, err
	}
	return it, n, nil
}

// joinTopics are the topics whose partitions the join reads.
var joinTopics = map[string]bool{internaltopic.ConsumerOffsetsTopic: true, internaltopic.TransactionStateTopic: true,
	internaltopic.ShareGroupStateTopic: true, MetadataTopic: true}

// statsOf is the record counts of what one internal partition said.
func statsOf(in *internaltopic.Internal) *internaltopic.Stats {
	var s internaltopic.Stats
	switch {
	case in.Offsets != nil:
		s = in.Offsets.Stats
	case in.Txns != nil:
		s = in.Txns.Stats
	case in.Shares != nil:
		s = in.Shares.Stats
	case in.Cluster != nil:
		s = in.Cluster.Stats
	}
	return &s
}

// listSome is the first few of names, and how many more.
func listSome(names []string) string {
	const show = 3
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:show], ", ") + fmt.Sprintf(" and %d more", len(names)-show)
}

// offsetName parses Kafka's <20 digits><ext> file names.
func offsetName(name, ext string) (int64, bool) {
	s, ok := strings.CutSuffix(name, ext)
	if !ok || len(s) != 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil && v >= 0
}
