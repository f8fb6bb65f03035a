package live

// The terminal rendering of a ClusterScan (diagnose --bootstrap).

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// WriteText renders the scan for a terminal: stuck partitions first
// (hanging ones flagged), each with its transactions, the command that ends
// each and the groups waiting; then the unknown ones and the brokers that
// failed; the clear partitions as ranges per topic.
func (s *ClusterScan) WriteText(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "cluster %s: %s in %s on %s, scanned in %s with %s\n",
		s.Bootstrap, txnindex.Plural(len(s.Partitions), "partition", "partitions"), txnindex.Plural(s.Topics, "topic", "topics"),
		txnindex.Plural(len(s.Brokers), "broker", "brokers"), txnindex.Duration(s.Duration), txnindex.Plural(s.RequestCount, "request", "requests"))
	n := func(v int) string { return txnindex.Count(int64(v)) }
	fmt.Fprintf(&sb, "  %s stuck (%s hanging), %s unknown, %s clear\n", n(s.Stuck), n(s.Hanging), n(s.Unknown), n(s.Clear))
	for i := range s.Partitions {
		p := &s.Partitions[i]
		if p.Err != "" || p.LSOLagOffsets == 0 {
			continue
		}
		word := "STUCK"
		if p.Hanging {
			word = "HANGING"
		}
		fmt.Fprintf(&sb, "\n%s %s (leader %d): LSO %d is %s behind the high watermark %d", word, txnindex.PartitionName(p.Topic, p.Partition), p.Leader,
			p.LastStableOffset, txnindex.Plural(p.LSOLagOffsets, "offset", "offsets"), p.HighWatermark)
		if p.LSOLagSource != "" {
			fmt.Fprintf(&sb, ", held for %s since the %s", fmtAge(p.LSOLagMs), p.LSOLagSource)
		}
		sb.WriteString("\n")
		if why := txnindex.TopicNameProblem(p.Topic); why != "" {
			// The broker named a topic Kafka would not create
			// (Topic.validate): its commands are comments that say so.
			fmt.Fprintf(&sb, "  topic name Kafka would reject: %s: %s; no command is printed for it\n", txnindex.TextWord(p.Topic), why)
		}
		for _, t := range p.Open {
			id := "no transactional id (no coordinator lists the producer)"
			if t.TransactionalID != "" {
				id = fmt.Sprintf("transactional id %q, %s on coordinator %d", t.TransactionalID, t.CoordinatorState, t.Coordinator)
			}
			fmt.Fprintf(&sb, "  open transaction: producer %d epoch %d from offset %d, %s", t.ProducerID, t.ProducerEpoch, t.FirstOffset, id)
			if t.StartTimestamp > 0 {
				fmt.Fprintf(&sb, ", started %s", time.UnixMilli(t.StartTimestamp).UTC().Format(time.RFC3339))
			}
			if t.TimeoutMs > 0 {
				fmt.Fprintf(&sb, ", timeout %s", txnindex.DurationMs(int64(t.TimeoutMs)))
			}
			fmt.Fprintf(&sb, "\n    %s: %s\n    to end it: %s\n", t.State, txnindex.OneLine(t.Reason), t.AbortCommand)
		}
		for _, g := range p.Groups {
			where := "behind it"
			if g.Blocked {
				where = "waiting at the LSO"
			}
			state := ""
			if g.State != "" {
				state = " (" + cmp.Or(groupStateWords[g.State], g.State) + ")"
			}
			members := ""
			if len(g.Members) > 0 {
				members = ", assigned to " + strings.Join(g.Members, ", ")
			}
			fmt.Fprintf(&sb, "  %s %q%s committed %d, %s, %s behind the high watermark%s\n", present.GroupKindLabel(g.Kind), g.Group, state, g.Committed, where, txnindex.Plural(g.LagOffsets, "offset", "offsets"), members)
		}
		writeShareGroups(&sb, p.ShareGroups)
		for _, n := range p.Notes {
			fmt.Fprintf(&sb, "  note: %s\n", txnindex.OneLine(n))
		}
	}
	for i := range s.Partitions {
		if p := &s.Partitions[i]; p.Err != "" {
			fmt.Fprintf(&sb, "\nUNKNOWN %s (leader %d): %s", txnindex.PartitionName(p.Topic, p.Partition), p.Leader, txnindex.OneLine(p.Err))
		}
	}
	if s.Unknown > 0 {
		sb.WriteString("\n")
	}
	for _, b := range s.Brokers {
		if b.Err != "" {
			fmt.Fprintf(&sb, "\nbroker %d (%s:%d): %s\n", b.ID, txnindex.TextWord(b.Host), b.Port, txnindex.OneLine(b.Err))
		}
	}
	if s.Clear > 0 {
		sb.WriteString("\nclear (lag 0):")
		writeClear(&sb, s.Partitions)
		sb.WriteString("\n")
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&sb, "note: %s\n", txnindex.OneLine(n))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// groupStateWords says ListGroups' group states (ConsumerGroupState,
// KIP-518) in words; JSON keeps Kafka's names.
var groupStateWords = map[string]string{
	"Empty":               "no members",
	"Stable":              "members consuming",
	"PreparingRebalance":  "rebalancing",
	"CompletingRebalance": "rebalancing",
	"Assigning":           "rebalancing",
	"Reconciling":         "rebalancing",
	"Dead":                "being removed",
}

// writeClear writes the clear partitions as "topic 0-4 6-9" per topic.
func writeClear(sb *strings.Builder, ps []PartitionLag) {
	byTopic := map[string][]int32{}
	var topics []string
	for i := range ps {
		p := &ps[i]
		if p.Err != "" || p.LSOLagOffsets > 0 {
			continue
		}
		if _, ok := byTopic[p.Topic]; !ok {
			topics = append(topics, p.Topic)
		}
		byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
	}
	slices.Sort(topics)
	for _, t := range topics {
		parts := byTopic[t]
		slices.Sort(parts)
		fmt.Fprintf(sb, "\n  %s", txnindex.TextWord(t))
		for i := 0; i < len(parts); {
			j := i
			for j+1 < len(parts) && parts[j+1] == parts[j]+1 {
				j++
			}
			if i == j {
				sb.WriteString(" " + strconv.Itoa(int(parts[i])))
			} else {
				fmt.Fprintf(sb, " %d-%d", parts[i], parts[j])
			}
			i = j + 1
		}
	}
}
