// Package internaltopic reads the broker's own internal topics from a
// loaded log directory: __consumer_offsets, into the committed offsets of
// every group and each group's kind (classic, KIP-848 consumer, KIP-932
// share, KIP-1071 streams); __transaction_state, into every transactional
// id's coordinator state; __share_group_state, into every share group's
// start offset per partition; and the KRaft metadata log, for topic names
// by id and the group and topic configs. Records are decoded with
// franz-go's kmsg where it has their types (OffsetCommitKey/Value,
// GroupMetadataKey, TxnMetadataKey/Value), else from the message
// definitions' fields with a bounded sticky reader (wire), and replayed
// the way the coordinators load these partitions when they become their
// leader, so the result is what they would serve (OffsetFetch,
// DescribeTransactions, DescribeShareGroupOffsets). Record types no Kafka
// release writes are counted and skipped, as the coordinators skip them
// (KIP-915).
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
