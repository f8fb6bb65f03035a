package diagnosis

import (
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// Remedy is what ends a transaction the report lists, and what shows the
// records aborting it discards, in Kafka's terms: the partition, the
// producer with its epochs, where the transaction starts and which of its
// records survive. Package present renders it as the kafka-transactions.sh,
// kcat and kafka-topics.sh commands of the report (OpenTxnReport's
// AbortCommand, AbortByProducerCommand, ConfirmCommand, CheckCommand and
// Discards.PrintCommand); the diagnosis writes no command itself.
type Remedy struct {
	Topic string
	// TopicUnknown: Topic is only a label (a segment read alone, named by
	// its base offset): the commands cannot name the topic.
	TopicUnknown bool
	Partition    int32
	// Bootstrap is the brokers' address as the caller gave it; "" when
	// none was given.
	Bootstrap string

	// Abort: kafka-transactions.sh abort ends the transaction. With
	// --start-offset StartOffset the tool finds the producer through
	// DescribeProducers (currentTxnStartOffset) and fills in its epochs.
	Abort       bool
	StartOffset int64
	// StartUnknown: the LSO a capture reported sits on the log start, so
	// the transaction may have begun before it: DescribeProducers'
	// CurrentTransactionStartOffset names the start to abort at.
	StartUnknown bool
	// ByProducer: the producer is known, so the abort can name it, its
	// epoch and the coordinator epoch (the broker fences a marker whose
	// coordinator epoch is below the producer's).
	ByProducer       bool
	ProducerID       txnindex.ProducerID
	ProducerEpoch    int16
	CoordinatorEpoch int32

	// Print are the ranges of the transaction's records that survive, each
	// with its records (kcat counts records, not offsets); none left: the
	// broker still describes the producer (DescribeProducers).
	Print []PrintRange
	// PrintUnseen, for a transaction a capture never saw: describe the
	// producers, then print PrintCount records from StartOffset.
	PrintUnseen bool
	PrintCount  int64

	// ConfirmHanging: a late transaction no coordinator evidence decided:
	// find-hanging asks the coordinator (KIP-664). MaxTxnTimeout is the
	// transaction.max.timeout.ms the diagnosis assumed when it is not the
	// broker default (0 otherwise), for the tool's own threshold.
	ConfirmHanging bool
	MaxTxnTimeout  time.Duration

	// CheckReplicas: a decided transaction whose marker waits for the high
	// watermark: the topic's replicas and ISR say why it has not moved.
	CheckReplicas bool
}

// PrintRange is a range of offsets whose records to print, and how many
// records it holds: fewer than its offsets when the log cleaner removed
// some.
type PrintRange struct {
	txnindex.OffsetRange
	Records int64
}

// remedy is the partition part of a remedy of l.
func (l plog) remedy(bootstrap string) Remedy {
	return Remedy{Topic: l.Topic, TopicUnknown: l.TopicUnknown, Partition: l.Partition, Bootstrap: bootstrap}
}
