// Package load is where every command and the server open their input:
// it answers "open this input for this question within this memory
// budget" (Open), and is the one place that chooses how much of a
// partition is read. Package input finds what a path or an upload holds
// and reads it whole; the readers beneath it answer the rest (loader's
// whole and tail loads, segsum's segment windows, logindex's lazy listing
// of a log directory). This package, above all of them, chooses among
// them: input imports none of them (it imported logindex), and the
// commands import none of the choices.
//
// # Questions
//
// A Question says what is needed. Whole: every batch (inspect's report,
// export, serve's pages, --full-replay). Tail: the partition's end, read
// as broker recovery reads it, from the newest usable producer snapshot
// and the segments after it (loader.OpenPartitionTail: the LSO, the open
// transactions, and from a consumer position every decision), its answer
// equal to a whole load's. Window: one segment at a time, each from the
// producer state at its start (segsum.Store), whatever the partition's
// size. And, for any of them, LogDir: a log directory (a log.dirs entry)
// is listed at once and its partitions opened one at a time with the
// question (LogDir), so that a broker's thousands of partitions are read
// in the memory of one. AtSnapshot: the producer state the broker loads
// from one .snapshot file (inspect of it), no batch read. Every one of these
// seeds its producer state with the loader's one routine,
// loader.SeedSnapshots; docs/architecture.md walks through adding one.
//
// # The estimator
//
// Cost is what a load keeps in memory: the bytes it holds as they are (an
// upload's segment, for its records) and txnindex.LogBytes (128 bytes) a
// decoded batch, the one figure segsum's windows count with too. Before a
// byte is read, Estimate counts the batches from the segments' sizes and
// the mean batch size sampled at the first segment the load reads and the
// last (loader.MeanBatchSize); once read, CostOf counts them.
//
// # The policy
//
// Choose takes the question, its cost and the Budget and says which path
// answers it (a Plan), with the sentence the commands print when that is
// not the question's own: a load whose cost is over half of --max-memory
// (the other half is the collector's headroom, as segsum.Cache keeps it;
// the server's half is shared, so one partition it opens whole may take a
// quarter: Budget.OneLoad), over serve's --max-source-bytes or
// --max-source-batches, or an upload over --max-upload-memory, is read a
// segment window at a time when the
// question can be answered so (Question.Segments: decide's decisions and
// counts, the server's pages) and the input is a partition directory, and
// is refused otherwise (inspect's report). The tail's own "read: …" line,
// which snapshot it started from and why, is its loader.ReplayReport's.
package load
