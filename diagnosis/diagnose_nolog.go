package diagnosis

import (
	"fmt"
	"strings"
)

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

// runbookOffsets is the runbook's offsets line.
func (d *Diagnosis) runbookOffsets(sb *strings.Builder) {
	u := d.OffsetsUnknown
	if u == nil {
		fmt.Fprintf(sb, "  log start %d, log end %d, high watermark %d (%s), last stable offset %d\n",
			d.LogStartOffset, d.LogEndOffset, d.HighWatermark, d.HighWatermarkSource, d.LastStableOffset)
		return
	}
	fmt.Fprintf(sb, "  offsets unknown: %s\n", u.Reason)
	if len(u.Evidence) > 0 {
		sb.WriteString("  what the directory shows:\n")
	}
	for _, e := range u.Evidence {
		fmt.Fprintf(sb, "    - %s\n", e)
	}
}
