package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

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
// the counts, or a text table whose marks (* and the client's reason) show
// where a client departs from Kafka's rule, which the first variant, Java,
// is (txnindex.Log.Compare). A gap is one row.
func WriteCompare(ctx context.Context, w io.Writer, l *txnindex.Log, o txnindex.ConsumeOptions, vs []txnindex.Variant, ndjson bool) error {
	bw := bufio.NewWriter(w)
	names := make([]string, len(vs))
	counts := make([]map[string]int64, len(vs))
	departs := make([]map[string]int64, len(vs))
	for i, v := range vs {
		names[i], counts[i], departs[i] = v.String(), map[string]int64{}, map[string]int64{}
	}
	if !ndjson {
		from := "log start"
		if o.From >= 0 {
			from = fmt.Sprint(o.From)
		}
		fmt.Fprintf(bw, "# %s, %s from %s; departures from Kafka's rule (java) marked *\n%-10s", l, o.Isolation, from, "offset")
		for _, n := range names {
			fmt.Fprintf(bw, " %-16s", n)
		}
		bw.WriteString("\n")
	}
	enc := json.NewEncoder(bw)
	var err error
	n := 0
	l.Compare(o, vs, 0, -1, func(r *txnindex.CompareRow) bool {
		if n++; n&0xfff == 0 && ctx.Err() != nil {
			err = ctx.Err()
			return false
		}
		row := compareRow{From: r.From, Decisions: map[string]string{}}
		var text strings.Builder
		if r.Decisions[0].Verdict == txnindex.Missing {
			row.To = r.To
			fmt.Fprintf(&text, "%-10s", fmt.Sprintf("%d-%d", r.From, r.To))
		} else {
			fmt.Fprintf(&text, "%-10d", r.From)
		}
		var notes []string
		for i, d := range r.Decisions {
			verdict := "none"
			if d != nil {
				verdict = d.Verdict.String()
			}
			counts[i][verdict] += r.To - r.From + 1
			row.Decisions[names[i]] = verdict
			mark := " "
			if dep := r.Departures[i]; dep != "" {
				if row.Departures == nil {
					row.Departures = map[string]string{}
				}
				row.Departures[names[i]] = dep
				departs[i][dep] += r.To - r.From + 1
				mark = "*"
				notes = append(notes, names[i]+": "+d.Reason())
			}
			fmt.Fprintf(&text, " %-16s", verdict+mark)
		}
		if ndjson {
			err = enc.Encode(row)
			return err == nil
		}
		bw.WriteString(strings.TrimRight(text.String(), " "))
		bw.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(bw, "%10s %s\n", "", n)
		}
		return true
	})
	if err != nil {
		return err
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
			parts = append(parts, k+" "+txnindex.Count(m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// Compare serves GET .../compare: what `txnscope decide --compare-variants
// --format ndjson` writes for the partition, with the consumer options of
// .../decisions (the variant among them is ignored: every variant is
// compared): one object per offset with each client's decision and its
// departure from Kafka's rule, then the counts per client.
func (a *API) Compare() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		l, o, _, _, err := a.rangeQuery(r, false)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		if err := WriteCompare(r.Context(), w, l, o, txnindex.Variants, true); err != nil && r.Context().Err() == nil {
			return err
		}
		return nil
	})
}
