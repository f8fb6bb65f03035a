package web

import (
	"net/http"
	"strconv"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// clientsColumns is the most offsets the clients page shows at once (a gap
// is one column); its links page through the rest.
const clientsColumns = 100

// ClientsView is the clients page: the same offsets decided by every
// consumer variant, one row per client (txnindex.Log.Compare), the cells
// where a client departs from Kafka's rule (the Java row) marked.
type ClientsView struct {
	Name, Timeline string // topic-partition; the partition's timeline page
	Isolation      string
	Consumer       string   // the consumer every row plays, in words
	Offsets        []string // column headings: an offset, or a gap's range
	Rows           []ClientsRow
	Prev, Next     string // the pages before and after ("" when none)
}

// ClientsRow is one client's decisions over the page's offsets.
type ClientsRow struct {
	Client     string // the variant's name, for the test id
	Label      string // its name for people (present.ClientWords)
	Cells      []ClientsCell
	Delivered  int64 // offsets delivered on the page
	Departures int64 // offsets where it departs from Kafka's rule
}

// ClientsCell is one client's decision of one column.
type ClientsCell struct {
	Verdict   string // txnindex.Verdict's name, for data-decision
	Words     string // the verdict as a reader says it
	Departure string // txnindex.Departure, "" when none
	Reason    string
}

// Clients serves …/{partition}/clients?from=N&isolation=…&position=…&max_bytes=…:
// the same offsets as every client receives them, side by side.
func (u *UI) Clients() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, topic := r.PathValue("id"), r.PathValue("topic")
		p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
		if err != nil {
			http.Error(w, "partition is not a number", http.StatusBadRequest)
			return
		}
		l, ok := u.cat.Log(id, topic, int32(p))
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			render(w, r, NotFoundPage("No partition "+topic+"-"+strconv.FormatInt(p, 10)+" in source "+strconv.Quote(id)+"."))
			return
		}
		q := r.URL.Query()
		o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
		if s := q.Get("isolation"); s != "" {
			if o.Isolation, err = txnindex.ParseIsolation(s); err != nil {
				http.Error(w, "isolation: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		from := l.LogStartOffset
		for _, f := range []struct {
			name string
			dst  *int64
		}{{"position", &o.From}, {"from", &from}} {
			if s := q.Get(f.name); s != "" {
				if *f.dst, err = strconv.ParseInt(s, 10, 64); err != nil || *f.dst < -1 {
					http.Error(w, f.name+": not an offset", http.StatusBadRequest)
					return
				}
			}
		}
		if s := q.Get("max_bytes"); s != "" {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil || n <= 0 {
				http.Error(w, "max_bytes: not a positive size", http.StatusBadRequest)
				return
			}
			o.MaxBytes = int32(n)
		}
		base := "/sources/" + id + "/partitions/" + topic + "/" + strconv.FormatInt(p, 10)
		v := ClientsView{Name: topic + "-" + strconv.FormatInt(p, 10), Timeline: base, Isolation: o.Isolation.String()}
		v.Consumer = v.Isolation + " consumers from the log start"
		if o.From >= 0 {
			v.Consumer = v.Isolation + " consumers from offset " + i64(o.From)
		}
		v.Consumer += ", fetches of " + txnindex.Plural(int64(o.MaxBytes), "byte", "bytes")
		for _, vr := range txnindex.Variants {
			v.Rows = append(v.Rows, ClientsRow{Client: vr.String(), Label: present.ClientWords(vr)})
		}
		last := int64(-1)
		l.Compare(o, txnindex.Variants, from, from+clientsColumns-1, func(row *txnindex.CompareRow) bool {
			last = row.To
			head := i64(row.From)
			if row.To > row.From {
				head += "–" + i64(row.To)
			}
			v.Offsets = append(v.Offsets, head)
			for i, d := range row.Decisions {
				c := ClientsCell{Verdict: "none", Departure: row.Departures[i]}
				if d != nil {
					c.Verdict, c.Words, c.Reason = d.Verdict.String(), present.VerdictWords(d.Verdict), d.Reason()
					if d.Verdict == txnindex.Delivered {
						v.Rows[i].Delivered += row.To - row.From + 1
					}
				}
				if c.Departure != "" {
					v.Rows[i].Departures += row.To - row.From + 1
				}
				v.Rows[i].Cells = append(v.Rows[i].Cells, c)
			}
			return true
		})
		page := func(at int64) string {
			s := base + "/clients?from=" + i64(at) + "&isolation=" + v.Isolation + "&max_bytes=" + strconv.Itoa(int(o.MaxBytes))
			if o.From >= 0 {
				s += "&position=" + i64(o.From)
			}
			return s
		}
		if last >= 0 && last+1 < l.LogEndOffset {
			v.Next = page(last + 1)
		}
		if from > l.LogStartOffset {
			v.Prev = page(max(l.LogStartOffset, from-clientsColumns))
		}
		render(w, r, ClientsPage(v))
	})
}
