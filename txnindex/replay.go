package txnindex

import "iter"

// CapturedFetch is one fetch a real consumer sent and the response it got,
// for one partition.
type CapturedFetch struct {
	Offset    int64     // the fetch offset of the request; -1 if unknown
	Time      int64     // Unix milliseconds when the response was captured; 0 if unknown
	Isolation Isolation // the request's isolation level
	Response  FetchResponse
}

// Replay plays the consumer that received exactly these responses, in the
// order given, and yields its decisions. Each request's fetch offset is the
// consumer's position for its response (a position that jumps is a seek or
// an offset reset); offsets already decided by an earlier response are not
// decided again, so the stream stays in offset order for a consumer that
// only moves forward. l, when not nil, resolves reasons against the broker's
// view of the same partition.
func Replay(fetches []CapturedFetch, iso Isolation, v Variant, l *Log) iter.Seq[Decision] {
	return func(yield func(Decision) bool) {
		c := Consumer{Isolation: iso, Variant: v, Log: l}
		if v == VariantKafkaGo || v == VariantKafkaPython {
			// Neither filters: the Java consumer's decisions, with
			// what it skips delivered (decideUnfiltered).
			c.Variant = VariantJava
			y := yield
			yield = func(d Decision) bool { return y(unfiltered(v, iso == ReadCommitted, d)) }
		}
		decided := int64(-1) // highest offset decided so far
		emit := func(d Decision) bool {
			if d.To <= decided {
				return true
			}
			if d.From <= decided {
				d.From = decided + 1
			}
			decided = d.To
			return yield(d)
		}
		if v == VariantKafkaJS {
			replayKafkaJS(fetches, iso, l, emit)
			return
		}
		for i := range fetches {
			f := &fetches[i]
			if f.Offset >= 0 {
				c.Position = f.Offset
			} else if len(f.Response.Batches) > 0 && c.Position < f.Response.Batches[0].BaseOffset {
				c.Position = f.Response.Batches[0].BaseOffset
			}
			resp := f.Response
			if l != nil {
				// Link batches to the broker's view for reasons.
				resp.FirstBatch = l.linkBatches(resp.Batches)
			}
			if !c.Process(&resp, f.Offset, emit) {
				return
			}
		}
	}
}

// linkBatches returns the index in l of batches[0] when batches are l's
// batches from there on (by their base offsets), else -1.
func (l *Log) linkBatches(batches []Batch) int {
	if len(batches) == 0 {
		return -1
	}
	if k := l.BatchAtOrAfter(batches[0].BaseOffset); k < len(l.Batches) && l.Batches[k].BaseOffset == batches[0].BaseOffset &&
		k+len(batches) <= len(l.Batches) && l.Batches[k+len(batches)-1].BaseOffset == batches[len(batches)-1].BaseOffset {
		return k
	}
	return -1
}
