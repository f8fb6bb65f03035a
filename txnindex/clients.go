package txnindex

import "math"

// The clients that do not follow Kafka's read_committed rule, each from its
// own source:
//
// kafka-go (segmentio/kafka-go 0.4.x, up to v0.4.50) sends the isolation
// level it is given (conn.go, ReadBatchWith), so the broker stops its
// fetches at the LSO, but read.go's readFetchResponseHeaderV5/V10 read the
// aborted-transactions list into a local that is never used, and
// message_reader.go never tests the control attribute (0x20): every record
// below the LSO reaches the application, aborted ones and COMMIT/ABORT
// markers (a 4-byte key: version 0, type 0 ABORT or 1 COMMIT) included.
// Upstream issue segmentio/kafka-go#1332 is open. Nothing it delivers
// depends on fetch sizes: its position is always the last record read + 1.
//
// kafka-python 2.0.x has no read_committed: its fetcher.py hard-codes
// isolation level READ_UNCOMMITTED (Fetcher.__init__), and KafkaConsumer
// rejects an isolation_level setting ("Unrecognized configs", group.py).
// It reads to the high watermark, and 2.0.0 to 2.0.5's
// _unpack_message_set yields every record of every batch, control batches
// included (2.0.6 skips control batches; this variant is 2.0.2's).
//
// kafkajs 2.2.4 (readUncommitted: false is its default) filters record by
// record: src/consumer/batch.js drops the records below the fetch offset,
// then src/consumer/filterAbortedMessages.js walks the rest once, and for
// each record moves at most one entry from the head of the response's
// aborted list (kept in the broker's order, which is marker order, the
// order of the .txnindex) into its set of aborted producers when the
// record's offset reaches that entry's first offset; an ABORT marker
// removes its producer; a transactional record of a producer in the set is
// dropped. Control records are dropped after. So a transaction whose entry
// waits behind another's in the list leaks until enough records have
// passed. Where it fetches next: src/consumer/runner.js resolves each
// delivered record's offset (processEachMessage), and, for a response that
// delivered nothing, batch.lastOffset(), its last record at or past the
// fetch offset (handleBatch, isEmptyDueToFiltering); the next fetch starts
// at the resolved offset + 1 (offsetManager resolveOffset). A response
// whose tail was filtered out is therefore fetched again from the record
// after the last delivered one, with a new aborted list, unless eachBatch
// auto-resolves the whole response (ConsumeOptions.EachBatch). Its fetches
// ask for maxBytesPerPartition (1 MiB by default) per partition
// (consumerGroup.js). src/protocol/requests/fetch/v4/decodeMessages.js
// drops a partial trailing batch; src/protocol/message/compression throws
// KafkaJSNotImplemented for snappy, lz4 and zstd unless codec packages are
// registered, which fails the whole response. Not modelled: a data record
// whose key is the four bytes 00000000 counts as an ABORT marker too
// (isAbortMarker tests the key only), and the log does not hold keys.

// decideUnfiltered decides for kafka-go and kafka-python: the Java
// consumer's decisions (read_committed fetches for kafka-go, whose broker
// stops at the LSO; read_uncommitted ones for kafka-python), with every
// record the Java consumer would skip delivered. Their positions move as
// the Java consumer's does, to each batch's end.
func (l *Log) decideUnfiltered(o ConsumeOptions, yield func(Decision) bool) {
	v, rc := o.Variant, o.Isolation == ReadCommitted
	o.Variant = VariantJava
	if v == VariantKafkaPython {
		o.Isolation = ReadUncommitted
	}
	l.decide(o, func(d Decision) bool { return yield(unfiltered(v, rc, d)) })
}

// unfiltered is the Java consumer's decision d as kafka-go or kafka-python
// (v) makes it: what Java skips, delivered. rc: the application asked for
// read_committed, so an aborted record delivered departs from it, even
// where the Java consumer's own decision (kafka-python's read_uncommitted
// one) delivers it too.
func unfiltered(v Variant, rc bool, d Decision) Decision {
	d.Variant = v
	switch {
	case d.Verdict == Control:
		d.Verdict, d.Cause = Delivered, CauseControlDelivered
	case d.Verdict == Aborted:
		d.Verdict, d.Cause = Delivered, CauseAbortedDelivered
	case rc && d.Verdict == Delivered && d.Txn != nil && d.Txn.State == TxnAborted && d.Batch != nil && d.Batch.IsTransactional() && d.Txn.listedFor(d.Batch):
		// kafka-python's read_uncommitted decision delivers it where
		// Kafka's read_committed rule skips it. A transaction no entry
		// lists, Kafka's rule delivers too: no departure.
		d.Cause = CauseAbortedDelivered
	}
	return d
}

// kafkajs is the state of one kafkajs pass.
type kafkajs struct {
	l      *Log
	o      ConsumeOptions
	txns   txnCursor
	runs   []Decision
	set    map[ProducerID]AbortedTransaction
	remain []AbortedTransaction
	// stopFrom is the first batch of the response the pass cannot get
	// past (-1: none), stopAt the batch in it that stops it, stopWhy why:
	// CauseClientCannotDecode, CauseClientUnpredictable or
	// CauseClientNoRecord.
	stopFrom, stopAt int
	stopWhy          Cause
}

// decideKafkaJS plays kafkajs's fetch loop (see the comment above) and
// yields what it decides, in offset order, like decide.
func (l *Log) decideKafkaJS(o ConsumeOptions, yield func(Decision) bool) {
	// Every decision says whose it is, the gaps' too, as kafka-go's and
	// kafka-python's do (unfiltered).
	y := yield
	yield = func(d Decision) bool { d.Variant = VariantKafkaJS; return y(d) }
	from := max(o.From, l.LogStartOffset)
	maxOffset := l.HighWatermark
	if o.Isolation == ReadCommitted {
		maxOffset = l.LastStableOffset
	}
	gw := gapWalk{gaps: l.Gaps}
	gw.skip()
	emit := func(d *Decision) bool {
		if d.From > gw.next && !gw.yieldBefore(d.From, yield) {
			return false
		}
		return yield(*d)
	}
	k := kafkajs{l: l, o: o, stopFrom: -1, stopAt: -1, set: map[ProducerID]AbortedTransaction{}}
	next := 0                    // first batch not wholly decided
	done := int64(math.MinInt64) // offsets of batch next below done are decided
	skipped := func(upto int) bool {
		for ; next < upto; next++ {
			b := &l.Batches[next]
			d := l.unfetched(next, &k.txns)
			d.From = max(d.From, done)
			d.Verdict, d.Uncommitted, d.Cause, d.Bound = BeforePosition, BeforePosition, CauseBelowPosition, from
			if b.LastOffset() < l.LogStartOffset {
				d.Cause, d.Bound = CauseBelowLogStart, l.LogStartOffset
			}
			if d.From <= d.To && !emit(&d) {
				return false
			}
		}
		return true
	}
	var resp FetchResponse
	pos := from
	for pos < maxOffset {
		l.FetchInto(FetchRequest{Offset: pos, MaxBytes: o.MaxBytes, Isolation: o.Isolation, AbortedToReadEnd: o.AbortedToReadEnd}, &resp)
		if resp.Err != FetchOK || len(resp.Batches) == 0 {
			break
		}
		if !skipped(resp.FirstBatch) {
			return
		}
		newPos := k.response(&resp, pos, done)
		for i := range k.runs {
			d := &k.runs[i]
			if d.Verdict != BeforePosition {
				if d.From >= newPos {
					break
				}
				d.To = min(d.To, newPos-1)
			}
			if !emit(d) {
				return
			}
		}
		if newPos <= pos {
			done = max(done, pos)
			if k.stopFrom < 0 {
				// No record at or past the position: runner.js's
				// handleBatch resolves nothing for a response whose
				// batch.isEmpty() and that had no raw messages (only
				// batches the cleaner emptied), so the same fetch
				// comes back, again and again.
				k.stopFrom, k.stopAt, k.stopWhy = resp.FirstBatch, resp.FirstBatch, CauseClientNoRecord
			}
			break // stuck: a batch it cannot decode or predict, or no record to move past
		}
		// The batches wholly below the new position are decided; a batch
		// that holds it is fetched again.
		for next < resp.FirstBatch+len(resp.Batches) && l.Batches[next].LastOffset() < newPos {
			next++
		}
		pos, done = newPos, newPos
	}
	upto := next
	for upto < len(l.Batches) && l.Batches[upto].LastOffset() < pos {
		upto++
	}
	if !skipped(upto) {
		return
	}
	for ; next < len(l.Batches); next++ {
		b := &l.Batches[next]
		d := l.unfetched(next, &k.txns)
		d.From = max(d.From, done)
		d.Verdict, d.Bound = Pending, maxOffset
		switch {
		case b.LastOffset() >= maxOffset && o.Isolation == ReadCommitted:
			d.Cause = CauseAtOrAboveLSO
		case b.LastOffset() >= maxOffset:
			d.Cause = CauseAtOrAboveHWM
		case k.stopFrom >= 0 && next >= k.stopFrom:
			d.Cause, d.Bound = k.stopWhy, l.Batches[k.stopAt].BaseOffset
			if k.stopWhy == CauseClientUnpredictable {
				d.Verdict = Unpredictable
			}
		default:
			d.Cause, d.Bound = CauseUnreachable, pos
		}
		switch {
		case b.Records == 0 && b.Magic() >= 2:
			d.Uncommitted = Missing
		case b.IsControl():
			d.Uncommitted = Control
		case b.LastOffset() < l.HighWatermark:
			d.Uncommitted = Delivered
		default:
			d.Uncommitted = Pending
		}
		if d.From <= d.To && !emit(&d) {
			return
		}
	}
	gw.yieldRest(yield)
}

// response filters one fetch response from pos as kafkajs does, leaving
// its decisions in k.runs (offsets below pos first, when not decided yet:
// below done), and returns the position kafkajs fetches from next; pos when
// it cannot move.
func (k *kafkajs) response(resp *FetchResponse, pos, done int64) int64 {
	k.runs = k.runs[:0]
	for i := range resp.Batches {
		if c := resp.Batches[i].Compression(); !k.o.KafkaJSCodecs && c >= CompressionSnappy && c <= CompressionZstd {
			// The whole response fails to decode: nothing of it is
			// delivered, and the same fetch fails again.
			k.stopFrom, k.stopAt, k.stopWhy = resp.FirstBatch, max(resp.FirstBatch, -1)+i, CauseClientCannotDecode
			return pos
		}
	}
	clear(k.set)
	k.remain = append(k.remain[:0], resp.AbortedTransactions...)
	iso := 0
	if k.o.Isolation == ReadCommitted {
		iso = 1
	}
	lastWithin, lastDelivered := int64(-1), int64(-1)
	for i := range resp.Batches {
		bi := -1
		if resp.FirstBatch >= 0 {
			bi = resp.FirstBatch + i
		}
		b := &resp.Batches[i]
		base := Decision{From: b.BaseOffset, To: b.LastOffset(), Batch: b, BatchIndex: int32(bi), FetchOffset: pos}
		if k.l != nil && bi >= 0 {
			base.Txn = k.txns.of(k.l, bi)
		}
		cl := &batchClasses[iso][b.classIndex()]
		base.Verdict, base.Cause, base.Uncommitted = cl.verdict, cl.cause, cl.uncommitted
		if b.BaseOffset < pos && done <= b.BaseOffset {
			d := base
			d.To, d.Verdict, d.Uncommitted, d.Cause, d.Bound = pos-1, BeforePosition, BeforePosition, CauseBelowPosition, pos
			k.runs = append(k.runs, d)
		}
		first := max(b.BaseOffset, pos)
		last := b.LastOffset()
		if first > last {
			continue
		}
		switch {
		case b.Records == 0 && b.Magic() >= 2:
			// No record: nothing for the filter, nothing to resolve.
			d := base
			d.From = first
			k.runs = append(k.runs, d)
			continue
		case b.Magic() < 2 || int64(b.Records) == last-b.BaseOffset+1 || len(k.remain)+len(k.set) == 0:
			// One record per offset, or a filter with nothing to do.
		default:
			// A compacted batch: which of its offsets still hold a
			// record decides how many entries its records move, and
			// so what this response delivers and where the next
			// fetch starts.
			k.stopFrom, k.stopAt, k.stopWhy = resp.FirstBatch, bi, CauseClientUnpredictable
			return pos
		}
		lastWithin = last
		if b.Magic() < 2 || int64(b.Records) != last-b.BaseOffset+1 {
			d := base
			d.From = first
			k.runs = append(k.runs, d)
			if d.Verdict == Delivered {
				lastDelivered = last
			}
			continue
		}
		for off := first; off <= last; off++ {
			d := base
			d.From, d.To = off, off
			k.record(b, off, &d)
			if d.Verdict == Delivered {
				lastDelivered = off
			}
			if n := len(k.runs); n > 0 && k.runs[n-1].BatchIndex == d.BatchIndex && k.runs[n-1].To == off-1 &&
				k.runs[n-1].Verdict == d.Verdict && k.runs[n-1].Cause == d.Cause && k.runs[n-1].Abort == d.Abort && k.runs[n-1].Bound == d.Bound {
				k.runs[n-1].To = off
				continue
			}
			k.runs = append(k.runs, d)
		}
	}
	return k.finish(pos, lastWithin, lastDelivered)
}

// finish is the position after a response: past the last delivered record
// (eachMessage), or past the last record at or after the fetch offset when
// it delivered none or eachBatch resolves it all.
func (k *kafkajs) finish(pos, lastWithin, lastDelivered int64) int64 {
	switch {
	case lastDelivered >= 0 && !k.o.EachBatch:
		return lastDelivered + 1
	case lastWithin >= 0:
		return lastWithin + 1
	}
	return pos
}

// record runs filterAbortedMessages's step for the record at off of b.
func (k *kafkajs) record(b *Batch, off int64, d *Decision) {
	if len(k.remain) > 0 && off >= k.remain[0].FirstOffset {
		k.set[k.remain[0].ProducerID] = k.remain[0]
		k.remain = k.remain[1:]
	}
	if b.IsControl() {
		if b.IsAbortMarker() {
			delete(k.set, b.ProducerID)
		}
		return // its verdict is Control, from its class
	}
	if el, in := k.set[b.ProducerID]; in && b.IsTransactional() {
		d.Verdict, d.Cause, d.Abort = Aborted, CauseAbortedTxn, el
		if k.l != nil {
			d.AbortInfo = k.l.LookupAbort(el.ProducerID, el.FirstOffset)
		}
		return
	}
	if k.o.Isolation != ReadCommitted || d.Verdict != Delivered || d.Txn == nil || d.Txn.State != TxnAborted || !b.IsTransactional() || !d.Txn.listedFor(b) {
		return
	}
	// Kafka's rule skips it; kafkajs has not moved this producer's entry
	// into its set. Bound counts the entries still ahead of it (0: the
	// response does not list it), Abort is the head of the list.
	d.Cause = CauseAbortedDelivered
	d.Bound = 0
	for i, a := range k.remain {
		if a.ProducerID == b.ProducerID && a.FirstOffset <= off {
			d.Bound, d.Abort = int64(i+1), k.remain[0]
			break
		}
	}
}

// replayKafkaJS is Replay for kafkajs: each captured response filtered as
// kafkajs filters it from its fetch offset, the offsets it settles (those
// below the position it fetches from next) yielded; a filtered tail is
// left to the fetch that reads it again, if the capture holds it.
func replayKafkaJS(fetches []CapturedFetch, iso Isolation, l *Log, emit func(Decision) bool) {
	k := kafkajs{l: l, o: ConsumeOptions{Isolation: iso, Variant: VariantKafkaJS}, stopFrom: -1, stopAt: -1, set: map[ProducerID]AbortedTransaction{}}
	pos := int64(0)
	for i := range fetches {
		f := &fetches[i]
		resp := f.Response
		if f.Offset >= 0 {
			pos = f.Offset
		} else if len(resp.Batches) > 0 && pos < resp.Batches[0].BaseOffset {
			pos = resp.Batches[0].BaseOffset
		}
		if len(resp.Batches) == 0 {
			continue
		}
		if l != nil {
			resp.FirstBatch = l.linkBatches(resp.Batches)
		}
		newPos := k.response(&resp, pos, math.MinInt64)
		for j := range k.runs {
			d := k.runs[j]
			if d.Verdict != BeforePosition {
				if d.From >= newPos {
					break
				}
				d.To = min(d.To, newPos-1)
			}
			d.Variant = VariantKafkaJS
			if !emit(d) {
				return
			}
		}
		pos = max(pos, newPos)
	}
}

// AsClient is the Java consumer's decision d as client v makes it, for a
// consumer that plays the Java consumer's fetch loop (the lessons):
// kafka-go and kafka-python deliver what Java skips (readCommitted: the
// application asked for read_committed); any other variant's is d, its
// Variant set. kafka-python's fetches are read_uncommitted ones: the
// caller fetches them so.
func AsClient(v Variant, readCommitted bool, d Decision) Decision {
	if v == VariantKafkaGo || v == VariantKafkaPython {
		return unfiltered(v, readCommitted, d)
	}
	d.Variant = v
	return d
}
