package diagnosis

import "github.com/txnscope/txnscope/txnindex"

// Compaction is the cleaner's evidence on l, for the tests outside the
// package.
func Compaction(l *txnindex.Log) *CompactionReport { return plog{l}.compaction(Hints{}) }
