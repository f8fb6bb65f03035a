package diagnosis

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
