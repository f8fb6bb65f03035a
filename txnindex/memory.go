package txnindex

// LogBytesPerBatch is the one figure for what a built Log keeps in memory
// per batch, all its tables counted: what a load of a partition costs
// (package loader/source estimates and bounds loads with it) and what a
// segment window holds (segsum's LRU). A Batch is 64 bytes. A
// transaction's Txn is 96 bytes, and a transaction spans at least two
// batches, its data and its marker: at most 48 bytes a batch. The rest
// (producers, gaps, aborted-transaction entries, the segments' .index
// entries) is a few bytes a batch in any real log, covered by the 16 left.
// Measured: 86.9 bytes a batch on the generated partitions of
// docs/benchmarks.md, 105 on 10M batches of 1 KiB.
const LogBytesPerBatch = 128

// LogBytes is what a Log built from n batches keeps in memory
// (LogBytesPerBatch each).
func LogBytes(n int64) int64 { return n * LogBytesPerBatch }
