package diagnosis

import (
	"fmt"
	"strings"
)

// TieredReport is the diagnosis' account of tiered storage.
type TieredReport struct {
	LogStartOffset      int64    `json:"log_start_offset"`       // the partition's
	LocalLogStartOffset int64    `json:"local_log_start_offset"` // the first local segment's base
	Evidence            []string `json:"evidence"`
}

func (l plog) tieredReport(d *Diagnosis) {
	if l.Tiered == nil || d.OffsetsUnknown != nil {
		return
	}
	d.Tiered = &TieredReport{LogStartOffset: l.LSOFloor(), LocalLogStartOffset: l.LogStartOffset, Evidence: l.Tiered.Evidence}
	d.LogStartOffset = l.LSOFloor()
}

func (d *Diagnosis) runbookTiered(sb *strings.Builder) {
	t := d.Tiered
	if t == nil {
		return
	}
	fmt.Fprintf(sb, "  tiered storage (KIP-405): offsets %d-%d are in remote storage, the first local segment begins at %d; the broker takes the log start from log-start-offset-checkpoint as it is (LogLoader.load with remote storage)\n",
		t.LogStartOffset, t.LocalLogStartOffset-1, t.LocalLogStartOffset)
	for _, e := range t.Evidence {
		fmt.Fprintf(sb, "    - %s\n", e)
	}
}
