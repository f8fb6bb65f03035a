// Package internaltopic reads the broker's own internal topics from a
// loaded log directory: __consumer_offsets, into the committed offsets of
// every consumer group, and __transaction_state, into every transactional
// id's coordinator state. Records are decoded with franz-go's kmsg
// (OffsetCommitKey/Value, GroupMetadataKey, TxnMetadataKey/Value) and
// replayed the way the group and transaction coordinators load these
// partitions when they become their leader, so the result is what those
// coordinators would serve (OffsetFetch, DescribeTransactions).
//
// Segments are read through package loader, with its damage rules; a
// record whose key or value does not decode is listed in Damage with its
// segment file and batch position, and the other records still count.
// Strings are bounded as Kafka bounds them (MaxStringLen), partitions of a
// transaction by MaxTxnPartitions, and the damage list by a fixed count.
//
// The results feed txnindex: GroupOffsets.For gives the
// []txnindex.GroupOffset that (*txnindex.Log).GroupPositions places
// against a partition's LSO, and TxnStates.Coordinators the
// *txnindex.TxnCoordinators whose Match applies KIP-664's hanging rule to
// an open transaction.
package internaltopic
