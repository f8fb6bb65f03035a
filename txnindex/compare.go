package txnindex

import "iter"

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
// others are compared with (VariantJava in Variants). The variants' passes
// run side by side, each a decision ahead at most: memory does not grow
// with the log, and the passes stop past to.
func (l *Log) Compare(o ConsumeOptions, vs []Variant, from, to int64, yield func(*CompareRow) bool) {
	if len(vs) == 0 {
		return
	}
	type pass struct {
		next func() (Decision, bool)
		cur  Decision
		ok   bool
	}
	ps := make([]pass, len(vs))
	for i, v := range vs {
		o.Variant = v
		next, stop := iter.Pull(l.Decisions(o))
		defer stop()
		ps[i].next = next
		ps[i].cur, ps[i].ok = next()
	}
	row := CompareRow{Decisions: make([]*Decision, len(vs)), Departures: make([]string, len(vs))}
	for off := from; to < 0 || off <= to; off++ {
		for i := range ps {
			p := &ps[i]
			for p.ok && p.cur.To < off {
				p.cur, p.ok = p.next()
			}
			row.Decisions[i] = nil
			if p.ok && p.cur.From <= off {
				row.Decisions[i] = &p.cur
			}
		}
		rule := row.Decisions[0]
		if rule == nil {
			if !ps[0].ok {
				return // past the first variant's last decision
			}
			off = ps[0].cur.From - 1 // no decision here: on to the next one
			continue
		}
		row.From, row.To = off, off
		if rule.Verdict == Missing {
			row.To = rule.To
			if to >= 0 {
				row.To = min(row.To, to)
			}
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
