// Package present says the domain's facts in words, for the pages and the
// CLI alike: the words for verdicts, causes, transaction states and
// KIP-664 rules; the timeline's lane rule and labels; the diagnosis as a
// runbook and its one-line status; the shell commands printed and copied
// (kafka-transactions.sh, kcat, kafka-topics.sh), rendered from the
// diagnosis's remedies with their quoting, and the flags that settle what
// a partition's files leave open. It reads txnindex and diagnosis, which
// know nothing of it.
//
// The one format of counts and durations (txnindex.Count, Plural,
// Duration) stays in txnindex: the reasons and evidence the domain writes
// into the JSON carry counts and durations in that format too.
package present
