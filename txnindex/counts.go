package txnindex

// Counts is what a consumer does with the records of the offsets
// [From, To]: the true record counts of a range that UIs derive from
// high-watermark arithmetic and get wrong on transactional topics
// (kafbat/kafka-ui#450: "Message Count isn't always accurate"; markers and
// aborted records are offsets too).
//
// Records are counted, not offsets: a batch counts its recordsCount, and
// a batch the range cuts counts the offsets inside the range, capped at
// its records (compaction may have removed records inside a batch while
// keeping its offsets, KIP-98's retained last offset). Offsets without a
// record (removed by the cleaner between batches or inside a batch the
// range holds whole, or in a batch it emptied) count as Missing.
type Counts struct {
	From           int64 `json:"from"`
	To             int64 `json:"to"`
	Batches        int64 `json:"batches"` // batches overlapping the range
	Delivered      int64 `json:"delivered_records"`
	Aborted        int64 `json:"aborted_records"`
	ControlMarkers int64 `json:"control_markers"`
	Pending        int64 `json:"pending_records"` // at or past the LSO (read_committed) or HWM
	BeforePosition int64 `json:"before_position_records"`
	Missing        int64 `json:"missing_offsets"`
	// LastReached is the last offset in the range that the consumer's
	// position moves past (delivered, aborted or a marker); -1 if none.
	LastReached int64 `json:"last_reached_offset"`
}

// NewCounts returns empty counts of [from, to].
func NewCounts(from, to int64) Counts { return Counts{From: from, To: to, LastReached: -1} }

// Add counts the part of d that lies in [c.From, c.To]. Decisions are
// added in offset order, each once.
func (c *Counts) Add(d *Decision) {
	from, to := max(d.From, c.From), min(d.To, c.To)
	if from > to {
		return
	}
	n := to - from + 1
	if d.Batch != nil {
		c.Batches++
	}
	if d.Verdict == Missing {
		c.Missing += n // a gap, or a batch the cleaner emptied
		return
	}
	if b := d.Batch; b != nil {
		r := min(n, int64(b.Records))
		if from == b.BaseOffset && to == b.LastOffset() {
			// The whole batch: its offsets without a record are the
			// cleaner's holes, as `decide --format ndjson` writes them
			// (a batch the range or the position cuts cannot say where
			// its records are, so its holes are not counted).
			c.Missing += n - r
		}
		n = r
	}
	switch d.Verdict {
	case Delivered:
		c.Delivered += n
	case Aborted:
		c.Aborted += n
	case Control:
		c.ControlMarkers += n
	case Pending:
		c.Pending += n
	case BeforePosition:
		c.BeforePosition += n
	}
	if d.Verdict == Delivered || d.Verdict == Aborted || d.Verdict == Control {
		c.LastReached = max(c.LastReached, to)
	}
}

// Records is every record counted (markers included, missing offsets not).
func (c *Counts) Records() int64 {
	return c.Delivered + c.Aborted + c.ControlMarkers + c.Pending + c.BeforePosition
}

// OffsetRange is an inclusive range of offsets.
type OffsetRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}
