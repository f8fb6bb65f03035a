package txnindex

import "slices"

// The Java consumer's aborted-transaction state between batches, for a
// step through its filter. Consumer.Process calls yield after a batch's
// bookkeeping, so inside yield these report the state the next batch will
// be filtered with.

// AbortedQueue returns the aborted-list elements of the current response
// that the Java consumer has not reached yet, in the order it pops them
// (CompletedFetch's abortedTransactions min-heap by first offset). It is
// nil for the other variants and for read_uncommitted. The slice aliases
// the consumer's state: copy it to keep it.
func (c *Consumer) AbortedQueue() []AbortedTransaction {
	if c.Variant != VariantJava || c.qi >= len(c.queue) {
		return nil
	}
	return c.queue[c.qi:]
}

// AbortedSet returns the Java consumer's aborted producer set
// (CompletedFetch.abortedProducerIds), each with the element that put it
// there, sorted by producer id. It is empty for the other variants.
func (c *Consumer) AbortedSet() []AbortedTransaction {
	if c.Variant != VariantJava || len(c.set) == 0 {
		return nil
	}
	out := make([]AbortedTransaction, 0, len(c.set))
	for _, a := range c.set {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b AbortedTransaction) int { return cmpInt64(int64(a.ProducerID), int64(b.ProducerID)) })
	return out
}
