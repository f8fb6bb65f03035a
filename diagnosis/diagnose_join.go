package diagnosis

import (
	"fmt"

	"github.com/txnscope/txnscope/txnindex"
)

// TxnJoin is what the transaction coordinator says about an open
// transaction (__transaction_state in a log dir, DescribeTransactions in
// live mode), embedded in OpenTxnReport. Empty when no coordinator state
// was read.
type TxnJoin struct {
	// TransactionalID is the id whose current producer id is the
	// transaction's ("" when none is).
	TransactionalID string `json:"transactional_id,omitempty"`
	// CoordinatorState is that id's state (Ongoing, CompleteCommit, …).
	CoordinatorState string `json:"coordinator_state,omitempty"`
	// CoordinatorPartitions are the partitions its current transaction
	// lists, as topic-partition.
	CoordinatorPartitions []string `json:"coordinator_partitions,omitempty"`
	// CoordinatorSource says where the state was read
	// ("__transaction_state-12" at an offset, or "DescribeTransactions").
	CoordinatorSource string `json:"coordinator_source,omitempty"`
	// HangingRule names the rule that decided the state: one of the Rule*
	// constants of Match (KIP-664's find-hanging steps), or RuleAge when
	// only the age decided.
	HangingRule string `json:"hanging_rule,omitempty"`
}

// DiagnosisJoin is what the broker's internal topics add to a partition's
// diagnosis, embedded in Diagnosis.
type DiagnosisJoin struct {
	// ConsumerGroups are the groups with a committed offset on the
	// partition, placed against its LSO (behind_lso: committed <= LSO,
	// the groups an open transaction holds up; blocked: at the LSO now).
	// Absent when no __consumer_offsets partition (or OffsetFetch) was
	// read.
	ConsumerGroups []txnindex.GroupPosition `json:"consumer_groups,omitempty"`
	// GroupsSource says where the offsets were read.
	GroupsSource string `json:"consumer_groups_source,omitempty"`
	// JoinNote says what the join could not read (a bound on what is
	// read of large internal topics, damaged records): the groups and
	// transactional ids shown may then be partial. "" when complete.
	JoinNote string `json:"join_note,omitempty"`
	// ConsumerGroupsTotal counts the groups; ConsumerGroups holds
	// ListCap of them (or the limit asked for), those behind the LSO
	// first (CapGroups).
	ConsumerGroupsTotal int `json:"consumer_groups_total,omitempty"`
	GroupsJoin
}

// Join adds the coordinators' word and the consumer groups to d, a
// diagnosis of l. An open transaction the coordinator will write no marker
// for (KIP-664: no transactional id, Dead, Complete*, Empty, or a
// transaction that does not list this partition) is hanging whatever its
// age; one whose coordinator lists the partition is not (its marker is
// still to come), whatever its age. Captures are left alone: their
// evidence is the broker's reported LSO, not a log dir's files.
func Join(l *txnindex.Log, d *Diagnosis, ev txnindex.InternalEvidence) { plog{l}.join(d, ev) }

func (l plog) join(d *Diagnosis, ev txnindex.InternalEvidence) {
	if d.Capture != nil {
		return
	}
	d.JoinNote = ev.Note
	for i := range d.OpenTransactions {
		r := &d.OpenTransactions[i]
		if r.Unseen {
			continue
		}
		if ev.Coordinators == nil {
			continue
		}
		m := ev.Coordinators.Match(l.Topic, l.Partition, r.ProducerID, r.ProducerEpoch)
		r.joinMatch(m)
	}
	if ev.HaveOffsets {
		d.ConsumerGroups = l.GroupPositions(ev.Offsets)
		if d.ConsumerGroups == nil {
			d.ConsumerGroups = []txnindex.GroupPosition{}
		}
		d.GroupsSource = ev.GroupsSource
	}
	l.joinGroups(d, ev)
	// Counted by kind first (joinGroups), from every group.
	d.capGroups(txnindex.ListLimit(d.limit))
}

// joinMatch applies a coordinator match to the report.
func (r *OpenTxnReport) joinMatch(m txnindex.CoordinatorMatch) {
	r.TransactionalID = m.TransactionalID
	if c := m.Coordinator; c != nil {
		r.CoordinatorState = c.State.String()
		r.CoordinatorSource = c.Source
		if c.Offset >= 0 {
			r.CoordinatorSource = fmt.Sprintf("%s offset %d", c.Source, c.Offset)
		}
		for _, tp := range c.Partitions {
			r.CoordinatorPartitions = append(r.CoordinatorPartitions, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
		}
	}
	if !m.Known {
		// Not knowing is not hanging: a late transaction stays late,
		// its hanging unconfirmed.
		r.Reason += "; coordinator: " + m.Reason
		return
	}
	r.HangingRule = m.Rule
	// The coordinator has answered: no command is left to confirm it.
	r.ConfirmCommand, r.Remedy.ConfirmHanging = "", false
	switch {
	case m.Hanging:
		r.State = StateHanging
		// The rule's name stays in HangingRule (JSON hanging_rule); the
		// text says it in words, as a person reads it.
		r.Reason = fmt.Sprintf("hanging whatever its age (KIP-664): %s; last write %s ago", m.Reason, fmtDur(r.AgeMs))
		if r.Late {
			r.Reason += ", late by the broker's rule too (ProducerStateManager.hasLateTransaction)"
		}
	case m.Prepared:
		r.State = StatePrepared
		r.Reason = fmt.Sprintf("prepared, waiting for its external transaction manager, not hanging (KIP-664): %s; last write %s ago", m.Reason, fmtDur(r.AgeMs))
		if r.Late {
			r.Reason += "; the broker counts it late (PartitionsWithLateTransactionsCount), but find-hanging does not list it"
		}
		r.AbortBreaks = fmt.Sprintf("aborting it breaks the two-phase commit of %q: its external transaction manager may already have decided to commit, and the other participants of that decision would commit while these records are discarded; ask that manager to end it (or it to recover) before aborting", m.TransactionalID)
	case r.State == StateLate:
		// find-hanging asks the coordinator about a late transaction and
		// reports it only when the coordinator will write no marker; this
		// one's coordinator lists the partition.
		r.Reason = fmt.Sprintf("no write for %s, longer than transaction.max.timeout.ms plus the broker's %s, so the broker calls it late (ProducerStateManager.hasLateTransaction), but not hanging (KIP-664): %s; if the coordinator does not end it, it is stuck on the coordinator, not on this partition",
			fmtDur(r.AgeMs), txnindex.Duration(LateTransactionBuffer), m.Reason)
	default:
		r.Reason += fmt.Sprintf("; not hanging (KIP-664): %s", m.Reason)
	}
}

// JoinMatch applies a coordinator match to the report as Join does, for
// live mode, which reads the coordinators with DescribeTransactions and
// decides which matches stand (the partition and the coordinator are read
// at two moments).
func (r *OpenTxnReport) JoinMatch(m txnindex.CoordinatorMatch) { r.joinMatch(m) }
