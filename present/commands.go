package present

import (
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// Hints are the flags of txnscope that settle the questions a partition's
// files leave open, as the diagnosis's sentences name them
// (diagnosis.Hints): the CLI's and the pages' words.
var Hints = diagnosis.Hints{
	Coordinators: "--bootstrap",
	EverySegment: "--full-replay reads every segment",
}

// Diagnose is diagnosis.Diagnose as txnscope shows it, in the CLI, the
// pages, the JSON and the live stream: its open questions say which flag
// settles them (Hints, unless o says otherwise), and each transaction's
// commands are written from its remedy (Commands).
func Diagnose(l *txnindex.Log, o diagnosis.Options) *diagnosis.Diagnosis {
	if o.Hints == (diagnosis.Hints{}) {
		o.Hints = Hints
	}
	d := diagnosis.Diagnose(l, o)
	Commands(d)
	return d
}

// kcatMostRanges is how many kcat commands "to see them first" prints
// (one per range of the transaction's records); the rest are counted.
const kcatMostRanges = 5

// Commands writes the commands of every transaction d reports from its
// remedy (TxnCommands). It may be called again: each command is written
// whole from the remedy.
func Commands(d *diagnosis.Diagnosis) {
	for _, ts := range [][]diagnosis.OpenTxnReport{d.OpenTransactions, d.Unreplicated, d.MarkerRemoved} {
		for i := range ts {
			TxnCommands(&ts[i])
		}
	}
}

// TxnCommands writes t's commands from t.Remedy: the abort by start offset
// and by producer, the kcat lines that print what the abort discards (or
// describe-producers when none of it survives), find-hanging for a late
// transaction no coordinator decided, kafka-topics.sh --describe for a
// marker waiting on the replicas. A command the remedy does not call for
// is "".
func TxnCommands(t *diagnosis.OpenTxnReport) {
	r := &t.Remedy
	c := remedyCommands(r)
	t.AbortCommand, t.AbortByProducerCommand, t.ConfirmCommand, t.CheckCommand, t.Discards.PrintCommand = "", "", "", "", ""
	if r.Abort {
		t.AbortCommand = c.AbortStart(r.StartOffset)
		if r.StartUnknown {
			// Two commands that run as copied: START is set by hand
			// from the first one's answer.
			t.AbortCommand = c.AbortStartAfterDescribe()
		}
		if r.ByProducer {
			t.AbortByProducerCommand = c.AbortProducer(int64(r.ProducerID), r.ProducerEpoch, r.CoordinatorEpoch)
		}
		if r.PrintUnseen {
			t.Discards.PrintCommand = c.DescribeAndKcatPrint(r.StartOffset, r.PrintCount)
		} else if t.Discards.PrintCommand = c.KcatPrintRanges(r.Print, kcatMostRanges); t.Discards.PrintCommand == "" {
			// Nothing of it survives to print; the broker still
			// describes it.
			t.Discards.PrintCommand = c.DescribeProducers()
		}
	}
	if r.ConfirmHanging {
		t.ConfirmCommand = c.FindHanging(int64(r.MaxTxnTimeout / time.Minute))
	}
	if r.CheckReplicas {
		t.CheckCommand = c.DescribeTopic()
	}
}

// remedyCommands are the commands of r's partition: its topic quoted by
// ShellWord, or TopicVar, unquoted so that the shell expands it, when the
// topic is not known (a segment read alone).
func remedyCommands(r *diagnosis.Remedy) TopicCommands {
	if r.TopicUnknown {
		return UnknownTopicCommands(r.Bootstrap, r.Partition)
	}
	return NewTopicCommands(r.Bootstrap, r.Topic, r.Partition)
}
