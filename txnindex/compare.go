package txnindex

// Departure is how a client's verdict for an offset differs from Kafka's
// rule (rule, the Java consumer's verdict): "" when it does not;
// aborted_delivered, control_delivered, committed_missed (Kafka's rule
// delivers it, the client does not), extra_delivered (delivered where
// Kafka's rule has it pending, below the position or a gap) or
// unpredictable.
func Departure(rule, client Verdict) string {
	switch {
	case rule == client:
		return ""
	case client == Unpredictable:
		return "unpredictable"
	case rule == Aborted && client == Delivered:
		return "aborted_delivered"
	case rule == Control && client == Delivered:
		return "control_delivered"
	case rule == Delivered:
		return "committed_missed"
	case client == Delivered:
		return "extra_delivered"
	}
	return ""
}

// CompareRow is one offset of Log.Compare, or one gap (the same for every
// variant) as a range.
type CompareRow struct {
	From, To int64
	// Decisions holds each variant's decision for the offsets, in the
	// order of the variants given; nil where a variant has none.
	Decisions []*Decision
	// Departures holds, per variant, Departure from the first variant's
	// verdict ("" where none).
	Departures []string
}

// Compare decides l for each variant of vs with the consumer o describes
// (its Variant aside) and yields, in offset order, a row per offset (per
// gap) from the first variant's first decision to its last, within
// [from, to] (to < 0: to the end). The first variant is Kafka's rule the
// others are compared with (VariantJava in Variants). It holds every
// variant's decisions, a few per batch, while it runs.
func (l *Log) Compare(o ConsumeOptions, vs []Variant, from, to int64, yield func(*CompareRow) bool) {
	decs := make([][]Decision, len(vs))
	for i, v := range vs {
		o.Variant = v
		for d := range l.Decisions(o) {
			if d.To >= from && (to < 0 || d.From <= to) {
				decs[i] = append(decs[i], d)
			}
		}
	}
	if len(vs) == 0 || len(decs[0]) == 0 {
		return
	}
	at := make([]int, len(vs))
	row := CompareRow{Decisions: make([]*Decision, len(vs)), Departures: make([]string, len(vs))}
	end := decs[0][len(decs[0])-1].To
	if to >= 0 {
		end = min(end, to)
	}
	for off := max(from, decs[0][0].From); off <= end; off++ {
		for i := range vs {
			for at[i] < len(decs[i]) && decs[i][at[i]].To < off {
				at[i]++
			}
			row.Decisions[i] = nil
			if at[i] < len(decs[i]) && decs[i][at[i]].From <= off {
				row.Decisions[i] = &decs[i][at[i]]
			}
		}
		rule := row.Decisions[0]
		if rule == nil {
			continue
		}
		row.From, row.To = off, off
		if rule.Verdict == Missing {
			row.To = min(rule.To, end)
		}
		for i, d := range row.Decisions {
			row.Departures[i] = ""
			if d != nil {
				row.Departures[i] = Departure(rule.Verdict, d.Verdict)
			}
		}
		if !yield(&row) {
			return
		}
		off = row.To
	}
}
