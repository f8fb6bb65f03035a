package live

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// Printer prints updates as `txnscope watch` does: one JSON object per
// update and line, or text. In text it prints a partition only when
// something about it changed, so a quiet topic stays quiet; mismatches and
// errors are always printed.
type Printer struct {
	out  io.Writer
	json bool
	last map[int32]string // per partition: what was printed last
}

// NewPrinter prints to out, in JSON lines if json, else in text.
func NewPrinter(out io.Writer, json bool) *Printer {
	return &Printer{out: out, json: json, last: map[int32]string{}}
}

// Print writes what u changed.
func (pr *Printer) Print(u Update) error {
	if pr.json {
		b, err := jsonid.Marshal(u)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(pr.out, "%s\n", b)
		return err
	}
	var sb strings.Builder
	if u.Err != "" {
		fmt.Fprintf(&sb, "%s  connection problem: %s; retrying in %s\n", u.Time.Format("15:04:05.000"), u.Err, u.RetryIn)
	}
	for _, p := range u.Partitions {
		var ps strings.Builder
		fmt.Fprintf(&ps, "  %s  leader %d  HWM %d  LSO %d", txnindex.PartitionName(u.Topic, p.Partition), p.Leader, p.HighWatermark, p.EngineLSO)
		if p.BrokerLSO != p.EngineLSO || p.ListedLSO != p.EngineLSO {
			fmt.Fprintf(&ps, " (broker: Fetch %d, ListOffsets %d)", p.BrokerLSO, p.ListedLSO)
		}
		if n := p.HighWatermark - p.EngineLSO; n > 0 {
			fmt.Fprintf(&ps, "  %s held back", txnindex.Plural(n, "offset", "offsets"))
		}
		fmt.Fprintf(&ps, "  window %d-%d (%s", p.WindowStart, p.WindowEnd, txnindex.Plural(p.Batches, "batch", "batches"))
		if p.Dropped > 0 {
			fmt.Fprintf(&ps, ", %s dropped", txnindex.Count(int64(p.Dropped)))
		}
		fmt.Fprintf(&ps, ")  read_committed delivered %s\n", txnindex.Count(int64(p.Delivered)))
		for _, o := range p.Open {
			id := o.TransactionalID
			if id == "" {
				id = "(transactional id unknown)"
			} else {
				id = strconv.Quote(id)
			}
			pin := ""
			if o.PinsLSO {
				pin = ", pins the LSO"
			}
			state := "open"
			if o.Hanging {
				state = "HANGING"
			}
			fmt.Fprintf(&ps, "    %s transaction: producer %d epoch %d %s from offset %d%s\n      %s\n      to end it: %s\n",
				state, o.ProducerID, o.ProducerEpoch, id, o.FirstOffset, pin, o.Reason, o.AbortCommand)
		}
		groups := groupLines(&p)
		ps.WriteString(groups)
		// Print a partition again when its offsets, its transactions or
		// the groups it holds up change, not because an age ticked.
		key := fmt.Sprint(p.Leader, p.HighWatermark, p.EngineLSO, p.BrokerLSO, p.ListedLSO, p.WindowStart, p.WindowEnd, p.Delivered)
		for _, o := range p.Open {
			key += fmt.Sprint(" ", o.ProducerID, o.FirstOffset, o.TransactionalID, o.CoordinatorState, o.Hanging)
		}
		key += groups
		if pr.last[p.Partition] == key && len(p.Mismatches) == 0 {
			continue
		}
		pr.last[p.Partition] = key
		text := ps.String()
		move := ""
		if p.PrevEngineLSO >= 0 && p.PrevEngineLSO != p.EngineLSO {
			move = fmt.Sprintf("  (LSO moved %d -> %d)", p.PrevEngineLSO, p.EngineLSO)
		}
		if p.NewBatches > 0 {
			move += "  +" + txnindex.Plural(p.NewBatches, "batch", "batches")
		}
		sb.WriteString(strings.Replace(text, "\n", move+"\n", 1))
	}
	for _, m := range u.Mismatches {
		fmt.Fprintf(&sb, "  !!! MISMATCH engine vs broker: %s\n", m)
	}
	for _, n := range u.Notes {
		fmt.Fprintf(&sb, "  note: %s\n", n)
	}
	if sb.Len() == 0 {
		return nil
	}
	_, err := fmt.Fprintf(pr.out, "%s update %d\n%s", u.Time.Format("15:04:05.000"), u.Seq, sb.String())
	return err
}

// groupLines are the groups an LSO that lags holds up (committed at or
// below it), in the words of diagnose's runbook.
func groupLines(p *PartitionView) string {
	d := p.Diagnosis
	if d == nil || d.ConsumerGroups == nil {
		return ""
	}
	var sb strings.Builder
	for _, g := range d.ConsumerGroups {
		if !g.BehindLSO {
			continue
		}
		what := txnindex.Plural(g.RecordsToLSO, "record", "records") + " to receive before the LSO"
		switch {
		case g.Blocked:
			what = "BLOCKED: waiting at the LSO, receives nothing until it moves"
		case g.RecordsToLSO < 0:
			what = txnindex.Plural(g.OffsetsToLSO, "offset", "offsets") + " below the LSO (records not counted: below the window)"
		}
		fmt.Fprintf(&sb, "    %s %q committed %d: %s\n", present.GroupKindLabel(g.Kind), g.Group, g.Offset, what)
	}
	for _, s := range d.ShareGroups {
		if s.Held || s.MayBeHeld {
			fmt.Fprintf(&sb, "    %s\n", present.ShareLine(s))
		}
	}
	if n := txnindex.More(d.ConsumerGroups, d.ConsumerGroupsTotal); n > 0 {
		fmt.Fprintf(&sb, "    %s\n", txnindex.MoreText(n, "group", "groups"))
	}
	return sb.String()
}
