// Package testfixture builds the inputs the tests of several packages
// share (internal/cli, server, e2e, live, diagnosis, present), so that a
// command, a page and the browser are tested on one story: partition
// directories written as a broker writes them (kmsg-encoded v2 batches,
// producer snapshots, .txnindex files, checkpoints), log directories whose
// internal topics package scenario builds, kfake clusters with transactions
// left open and groups' commits on them, and partitions laid out in memory
// for txnindex.Build (LogBuilder).
//
// It is imported by tests only; a function that writes files or starts
// brokers takes the test's testing.TB, writes under its TempDir, closes
// what it starts at the test's cleanup and fails the test on error.
package testfixture
