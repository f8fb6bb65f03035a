package present

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// ClientsLine is the diagnosis's sentence on the clients that depart from
// Kafka's rule, "" when none does: "kafka-go 0.4 (segmentio) and
// kafka-python 2.0 would deliver 102 aborted records and 14 control
// markers from this partition; kafkajs 2.2.4 3 aborted records; the Java
// consumer, librdkafka, franz-go, Sarama and kafka-python 2.2+ none of them".
// Clients that deliver the same are named together, those that deliver
// most first.
func ClientsLine(d *diagnosis.Diagnosis) string {
	r := d.ClientDepartures
	if r == nil {
		return ""
	}
	type group struct {
		names []string
		c     txnindex.ClientDeparture
	}
	var groups []group
	// kafka-python 2.2 and later, asked for read_committed, filter as
	// the Java consumer does (fetcher.py's PartitionRecords: the aborted
	// list by first offset, consumed up to each batch's last offset, an
	// ABORT marker taking its producer out).
	// IBM/sarama filters as the Java consumer does (internal/difftest
	// checks it against the Java variant).
	none := []string{"the Java consumer", "librdkafka", "franz-go", "Sarama"}
	for _, c := range r.Clients {
		if !c.Any() {
			none = append(none, clientName(c.Client))
			continue
		}
		name, c := clientName(c.Client), c
		c.Client = ""
		i := 0
		for i < len(groups) && groups[i].c != c {
			i++
		}
		if i == len(groups) {
			groups = append(groups, group{c: c})
		}
		groups[i].names = append(groups[i].names, name)
	}
	none = append(none, "kafka-python 2.2+")
	// The clients that deliver most first.
	slices.SortStableFunc(groups, func(x, y group) int {
		return cmp.Compare(y.c.AbortedDelivered+y.c.ControlDelivered+y.c.UndecidedDelivered, x.c.AbortedDelivered+x.c.ControlDelivered+x.c.UndecidedDelivered)
	})
	where := "from this partition"
	switch {
	case r.Capped:
		where = fmt.Sprintf("from offsets %d to %d (the first %s of the partition; the rest was not counted)", r.From, r.To, txnindex.Plural(r.Decided, "batch", "batches"))
	case r.From > d.LogStartOffset || r.To < d.LogEndOffset-1:
		where = fmt.Sprintf("from offsets %d to %d (those read)", r.From, r.To)
	}
	var parts []string
	for i, g := range groups {
		var what []string
		if g.c.AbortedDelivered > 0 {
			what = append(what, txnindex.Plural(g.c.AbortedDelivered, "aborted record", "aborted records"))
		}
		if g.c.ControlDelivered > 0 {
			what = append(what, txnindex.Plural(g.c.ControlDelivered, "control marker", "control markers"))
		}
		if g.c.UndecidedDelivered > 0 {
			what = append(what, txnindex.Plural(g.c.UndecidedDelivered, "record", "records")+" of transactions still open")
		}
		p := andList(g.names) + " " + andList(what)
		if i == 0 {
			p = andList(g.names) + " would deliver " + andList(what) + " " + where
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ") + "; " + andList(none) + " none of them"
}

// andList joins words as a sentence lists them: "a", "a and b", "a, b and c".
func andList(ws []string) string {
	if n := len(ws); n > 1 {
		return strings.Join(ws[:n-1], ", ") + " and " + ws[n-1]
	}
	return strings.Join(ws, "")
}

// runbookClients writes ClientsLine and the command that shows each offset.
func runbookClients(sb *strings.Builder, d *diagnosis.Diagnosis) {
	line := ClientsLine(d)
	if line == "" {
		return
	}
	fmt.Fprintf(sb, "\n  clients that depart from Kafka's rule, asked for read_committed from the start: %s\n", line)
	fmt.Fprintf(sb, "    each offset, client by client, and why: txnscope decide --compare-variants with the same input\n")
}

// ClientWords names a consumer's rules for people, with the versions whose
// behaviour each variant plays: kafka-python's is 2.0's, which has no
// read_committed (kafka-python 2.2 added it, and applies Kafka's rule).
func ClientWords(v txnindex.Variant) string {
	switch v {
	case txnindex.VariantJava:
		return "Java consumer"
	case txnindex.VariantKafkaJS:
		return "kafkajs 2.2.4"
	case txnindex.VariantKafkaGo:
		return "kafka-go 0.4 (segmentio)"
	case txnindex.VariantKafkaPython:
		return "kafka-python 2.0"
	}
	return v.String()
}

// clientName is ClientWords for a variant's name in a report.
func clientName(id string) string {
	if v, err := txnindex.ParseVariant(id); err == nil {
		return ClientWords(v)
	}
	return id
}
