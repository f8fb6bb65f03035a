package api

import (
	"net/http"

	"github.com/txnscope/txnscope/txnindex"
)

// FetchJSON is one captured Fetch response for the partition: what a real
// consumer asked for and what the broker answered.
type FetchJSON struct {
	N          int    `json:"n"`           // position in the capture, from 0
	Offset     int64  `json:"offset"`      // the request's fetch offset, −1 if unknown
	Time       int64  `json:"time_ms"`     // Unix ms the response was captured, 0 if unknown
	Isolation  string `json:"isolation"`   // the request's isolation level
	Error      int16  `json:"error_code"`  // the partition's error code, 0 for none
	FirstBatch *int64 `json:"first_batch"` // base offset of the first batch returned, null if none
	LastOffset *int64 `json:"last_offset"` // last offset of the last batch returned, null if none
	Batches    int    `json:"batches"`
	Bytes      int64  `json:"bytes"`
	Partial    int64  `json:"partial_bytes"` // a truncated trailing batch, dropped by clients

	HighWatermark    int64 `json:"high_watermark"`
	LastStableOffset int64 `json:"last_stable_offset"`
	LogStartOffset   int64 `json:"log_start_offset"`

	// Aborted is the aborted-transactions list; null when the broker sent
	// a null list (read_uncommitted), which clients treat differently from
	// an empty one.
	Aborted []FetchAbortedJSON `json:"aborted_transactions"`
}

// FetchAbortedJSON is one entry of a response's aborted-transactions list.
// The producer id is a number with a string twin past 2^53 (jsonid: kfake's
// ids are above).
type FetchAbortedJSON struct {
	ProducerID  int64 `json:"producer_id"`
	FirstOffset int64 `json:"first_offset"`
}

// Fetches serves GET .../fetches: the partition's captured Fetch responses
// in capture order; an empty list for a source that is not a capture.
func (a *API) Fetches() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		_, l, err := a.partition(r)
		if err != nil {
			return err
		}
		out := make([]FetchJSON, 0, len(l.Fetches))
		for i := range l.Fetches {
			out = append(out, fetchJSON(i, &l.Fetches[i]))
		}
		return writeJSON(w, map[string]any{"version": Version, "fetches": out})
	})
}

func fetchJSON(n int, f *txnindex.CapturedFetch) FetchJSON {
	rs := &f.Response
	j := FetchJSON{N: n, Offset: f.Offset, Time: f.Time, Isolation: f.Isolation.String(), Error: int16(rs.Err),
		Batches: len(rs.Batches), Bytes: rs.Bytes, Partial: rs.PartialBytes,
		HighWatermark: rs.HighWatermark, LastStableOffset: rs.LastStableOffset, LogStartOffset: rs.LogStartOffset}
	if len(rs.Batches) > 0 {
		first, last := rs.Batches[0].BaseOffset, rs.Batches[len(rs.Batches)-1].LastOffset()
		j.FirstBatch, j.LastOffset = &first, &last
	}
	if rs.AbortedTransactions != nil {
		j.Aborted = make([]FetchAbortedJSON, 0, len(rs.AbortedTransactions))
		for _, at := range rs.AbortedTransactions {
			j.Aborted = append(j.Aborted, FetchAbortedJSON{ProducerID: int64(at.ProducerID), FirstOffset: at.FirstOffset})
		}
	}
	return j
}
