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
				resp.FirstBatch = -1
				if len(resp.Batches) > 0 {
					if k := l.batchAtOrAfter(resp.Batches[0].BaseOffset); k < len(l.Batches) && l.Batches[k].BaseOffset == resp.Batches[0].BaseOffset &&
						k+len(resp.Batches) <= len(l.Batches) && l.Batches[k+len(resp.Batches)-1].BaseOffset == resp.Batches[len(resp.Batches)-1].BaseOffset {
						resp.FirstBatch = k
					}
				}
			}
			if !c.Process(&resp, f.Offset, emit) {
				return
			}
		}
	}
}
