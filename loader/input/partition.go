package input

import (
	"fmt"
	"iter"

	"github.com/txnscope/txnscope/txnindex"
)

// Partition is one partition to decide on: the broker's view (Log) and,
// for a capture, the fetches a real consumer received.
type Partition struct {
	Log       *txnindex.Log
	Fetches   []txnindex.CapturedFetch // nil unless from a capture
	Isolation txnindex.Isolation       // the captured consumer's isolation level
}

// Decisions are the engine's consumer from o.From for files, and the
// consumer that received exactly the captured responses for a capture
// (o.From and o.MaxBytes are then the real consumer's own).
func (p *Partition) Decisions(o txnindex.ConsumeOptions) iter.Seq[txnindex.Decision] {
	if p.Fetches != nil {
		return txnindex.Replay(p.Fetches, p.Isolation, o.Variant, p.Log)
	}
	return p.Log.Decisions(o)
}

// Describe says which consumer Decisions emulates, for a header line.
func (p *Partition) Describe(o txnindex.ConsumeOptions) string {
	if p.Fetches != nil {
		return fmt.Sprintf("replay of %s, %s rules", txnindex.Plural(len(p.Fetches), "captured "+p.Isolation.String()+" fetch", "captured "+p.Isolation.String()+" fetches"), o.Variant)
	}
	return DescribeConsumer(o)
}

// DescribeConsumer says which consumer o emulates reading a log, for a
// header line: "read_committed from log start, max bytes 1048576, java
// rules".
func DescribeConsumer(o txnindex.ConsumeOptions) string {
	from := "log start"
	if o.From >= 0 {
		from = fmt.Sprint(o.From)
	}
	return fmt.Sprintf("%s from %s, max bytes %d, %s rules", o.Isolation, from, o.MaxBytes, o.Variant)
}
