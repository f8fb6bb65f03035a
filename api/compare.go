package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// Departure is how a client's decision for an offset differs from Kafka's
// rule (the Java consumer's decision): "" when it does not.
func Departure(rule, client txnindex.Verdict) string {
	switch {
	case rule == client:
		return ""
	case client == txnindex.Unpredictable:
		return "unpredictable"
	case rule == txnindex.Aborted && client == txnindex.Delivered:
		return "aborted_delivered"
	case rule == txnindex.Control && client == txnindex.Delivered:
		return "control_delivered"
	case rule == txnindex.Delivered:
		return "committed_missed"
	case client == txnindex.Delivered:
		return "extra_delivered" // pending by Kafka's rule: read past the LSO
	}
	return ""
}

// compareRow is one offset (or one range of a gap) of WriteCompare.
type compareRow struct {
	From       int64             `json:"offset"`
	To         int64             `json:"to,omitempty"`
	Decisions  map[string]string `json:"decisions"`
	Departures map[string]string `json:"departures,omitempty"`
}

// WriteCompare writes, for every offset of l, the decision of each variant
// in vs for the consumer o describes (its Variant aside), and then the
// counts per variant: one NDJSON object per offset and a last one with
// the counts, or a text table whose marks (* and a note) show where a
// client departs from Kafka's rule, which the first variant, Java, is.
// A gap (no record, the same for every variant) is one row.
func WriteCompare(ctx context.Context, w io.Writer, l *txnindex.Log, o txnindex.ConsumeOptions, vs []txnindex.Variant, ndjson bool) error {
	decs := make([][]txnindex.Decision, len(vs))
	for i, v := range vs {
		o.Variant = v
		for d := range l.Decisions(o) {
			decs[i] = append(decs[i], d)
		}
	}
	bw := bufio.NewWriter(w)
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.String()
	}
	counts := make([]map[string]int64, len(vs))
	departs := make([]map[string]int64, len(vs))
	for i := range vs {
		counts[i], departs[i] = map[string]int64{}, map[string]int64{}
	}
	if !ndjson {
		fmt.Fprintf(bw, "# %s, %s from %d; departures from Kafka's rule (java) marked *\n%-10s", l, o.Isolation, o.From, "offset")
		for _, n := range names {
			fmt.Fprintf(bw, " %-16s", n)
		}
		bw.WriteString("\n")
	}
	at := make([]int, len(vs))
	enc := json.NewEncoder(bw)
	if len(decs) == 0 || len(decs[0]) == 0 {
		return bw.Flush()
	}
	for off := decs[0][0].From; off <= decs[0][len(decs[0])-1].To; off++ {
		if off&0xfff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		row := compareRow{From: off, Decisions: map[string]string{}}
		cur := make([]*txnindex.Decision, len(vs))
		for i := range vs {
			for at[i] < len(decs[i]) && decs[i][at[i]].To < off {
				at[i]++
			}
			if at[i] < len(decs[i]) && decs[i][at[i]].From <= off {
				cur[i] = &decs[i][at[i]]
			}
		}
		if cur[0] == nil {
			continue
		}
		to := off
		var text strings.Builder
		if cur[0].Verdict == txnindex.Missing {
			to, row.To = cur[0].To, cur[0].To // a gap: one row
			fmt.Fprintf(&text, "%-10s", fmt.Sprintf("%d-%d", off, to))
		} else {
			fmt.Fprintf(&text, "%-10d", off)
		}
		var notes []string
		for i, d := range cur {
			verdict := "none"
			if d != nil {
				verdict = d.Verdict.String()
			}
			n := to - off + 1
			counts[i][verdict] += n
			row.Decisions[names[i]] = verdict
			mark := " "
			if d != nil {
				if dep := Departure(cur[0].Verdict, d.Verdict); dep != "" {
					if row.Departures == nil {
						row.Departures = map[string]string{}
					}
					row.Departures[names[i]] = dep
					departs[i][dep] += n
					mark = "*"
					notes = append(notes, names[i]+": "+d.Reason())
				}
			}
			fmt.Fprintf(&text, " %-16s", verdict+mark)
		}
		if ndjson {
			if err := enc.Encode(row); err != nil {
				return err
			}
		} else {
			bw.WriteString(strings.TrimRight(text.String(), " "))
			bw.WriteString("\n")
			for _, n := range notes {
				fmt.Fprintf(bw, "%10s %s\n", "", n)
			}
		}
		off = to
	}
	if ndjson {
		type variantCounts struct {
			Variant    string           `json:"variant"`
			Counts     map[string]int64 `json:"counts"`
			Departures map[string]int64 `json:"departures"`
		}
		total := struct {
			Counts []variantCounts `json:"variant_counts"`
		}{}
		for i := range vs {
			total.Counts = append(total.Counts, variantCounts{names[i], counts[i], departs[i]})
		}
		if err := enc.Encode(total); err != nil {
			return err
		}
		return bw.Flush()
	}
	bw.WriteString("# counts (offsets per decision; departures from Kafka's rule)\n")
	for i := range vs {
		fmt.Fprintf(bw, "# %-13s %s", names[i], countLine(counts[i], []string{"delivered", "aborted", "control", "pending", "before_position", "gap", "unpredictable"}))
		if len(departs[i]) > 0 {
			fmt.Fprintf(bw, "; departures: %s", countLine(departs[i], []string{"aborted_delivered", "control_delivered", "committed_missed", "extra_delivered", "unpredictable"}))
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

func countLine(m map[string]int64, order []string) string {
	var parts []string
	for _, k := range order {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}
