// Package gen makes the partitions txnscope shows and measures when no user
// file is given:
//
//   - Demos: the scenarios embedded in package scenario, each built into a
//     real partition directory (segments, indexes, snapshot, checkpoints)
//     in a private temporary directory and read back through package
//     loader, exactly as a user's files are.
//   - Big: the 1M-batch demo that exercises the timeline's level-of-detail
//     path, laid out header by header in memory by a Writer.
//   - Writer: batch headers laid out as a broker appends them (offsets,
//     positions, sequences, timestamps, segment rolls) without encoding a
//     byte; tests use it to build partitions of a chosen shape.
//   - WriteDir: a synthetic but realistic partition directory of real v2
//     batches on disk, for the scan benchmarks (scripts/genpartition,
//     scripts/bench-scan.sh).
//
// Big and WriteDir draw from fixed seeds, so the pages, screenshots and
// benchmark figures made from them are reproducible.
package gen
