package diagnosis

// OffsetsUnknownReport says why a diagnosis has no offsets: the partition
// directory holds no .log segment (a copy that left them out), so its log
// start, log end, high watermark and LSO cannot be read; they are -1 in
// the JSON, never 0, and Evidence says what the other files show of them
// (KRaft snapshots, producer snapshots, index files without their .log).
type OffsetsUnknownReport struct {
	Reason   string   `json:"reason"`
	Evidence []string `json:"evidence"`
}

// offsetsUnknown blanks d's offsets when l was read from a directory with
// no .log segment.
func (l plog) offsetsUnknown(d *Diagnosis) {
	if !l.NoSegment {
		return
	}
	d.LogStartOffset, d.LogEndOffset, d.HighWatermark, d.LastStableOffset = -1, -1, -1, -1
	d.HighWatermarkSource, d.LSOLagOffsets = "unknown", 0
	ev := l.NoSegmentEvidence
	if ev == nil {
		ev = []string{}
	}
	d.OffsetsUnknown = &OffsetsUnknownReport{
		Reason:   "no .log segment in the partition directory: its log start, log end, high watermark and last stable offset cannot be read",
		Evidence: ev,
	}
}
