package e2e

// The inputs the browser tests build: partition directories written as a
// broker writes them (kmsg-encoded v2 batches, producer snapshots,
// .txnindex files, checkpoints), log directories with the internal topics
// built by package scenario, and kfake clusters. internal/cli's tests
// build the same inputs under the same names, so that a page is tested on
// the story the command is.
