// Package loader turns the untrusted bytes of Kafka's on-disk files, and the
// record sets of captured fetch responses, into txnindex inputs. It is
// internal to txnscope.
//
// # Reading
//
// The API is shaped like archive/zip and debug/elf: NewSegment(r, size,
// name) scans any io.ReaderAt and OpenSegment(path) opens a file read-only
// and must be Closed; parsed structure is exposed as plain fields. Nothing
// in this package opens a file for writing.
//
//   - NewSegment/OpenSegment scan a .log segment batch by batch, reading
//     only what the options ask for: with HeaderScanOptions, the 61-byte v2
//     header (plus the first record of a control batch, for the ABORT/COMMIT
//     type and coordinator epoch) or the 18/26-byte legacy header; with
//     DefaultScanOptions, each batch whole to check its CRC, and compressed
//     magic 0/1 wrappers decompressed to find their first offset.
//     (*SegmentFile).Records decodes one batch's records on demand.
//   - ReadOffsetIndex, ReadTimeIndex, ReadTxnIndexFile, ReadProducerSnapshot,
//     ReadOffsetCheckpoint, ReadLeaderEpochCheckpoint and
//     ReadPartitionMetadata decode the other files of a log directory.
//   - OpenPartition loads a <topic>-<partition> directory into a Partition
//     holding the *txnindex.Partition that txnindex.Build takes plus every
//     decoded file; OpenLogDir loads all partitions of a log directory.
//   - ParseRecordSet scans the records field of a fetch response;
//     RecordsOf decodes one of its batches.
//
// Which of these a path or an upload is (a log directory, a partition
// directory, one segment, a capture, kafka-dump-log.sh text) is found by
// package loader/input, whose Open and OpenBytes return the partitions to
// decide on. It sits above this package and loader/capture, which imports
// this one.
//
// # Damage
//
// Every problem is a *FormatError naming the file, the byte position (or
// line) and what was expected and found; errors.Is(err, ErrFormat) matches
// them all. Segment scans never fail on bad bytes: like the broker's
// LogSegment.recover they keep every batch before the first damage, stop
// there, and list the damage in SegmentFile.Damage. Decoders of the other
// files return what they could decode together with the first error.
//
// Inputs are treated as hostile: every length read from a file is checked
// against the bytes that remain before anything is allocated from it, and
// decompression is bounded (ScanOptions.MaxDecompressedSize, by default
// DefaultMaxDecompressedSize). The fuzz tests hold the package to "never
// panics, never returns more batches than bytes/17".
//
// # Iteration rules
//
// Segment scanning mirrors FileLogInputStream: fewer than 18 bytes left ends
// the scan (reported as trailing bytes), a size field below 14
// (RECORD_OVERHEAD_V0) is corrupt, a batch running past the end of the file
// is a truncated tail. ParseRecordSet mirrors ByteBufferLogInputStream
// instead: a short trailing batch is what a fetch cut at its byte limit
// looks like, so it is dropped (and reported). Magic 3 and above is
// reported as unknown magic in both.
//
// Batch fields follow Kafka's accessors: Attributes keeps only the low byte
// (DefaultRecordBatch.attributes casts to byte), Size includes the 12-byte
// LOG_OVERHEAD, CoordinatorEpoch is -1 and Control is txnindex.ControlNone
// unless the batch is a control batch with a record. For a compressed legacy
// wrapper LastOffset is the wrapper's offset field and BaseOffset is the
// first inner offset (AbstractLegacyRecordBatch.baseOffset); with
// HeaderScanOptions, which does not decompress, BaseOffset equals LastOffset
// and Records is 1.
//
// # Decompression
//
// Records are decompressed with klauspost/compress (gzip, snappy through
// s2, zstd) and pierrec/lz4 directly, the libraries franz-go's kgo uses,
// rather than through kgo's Decompressor: kgo's DefaultDecompressor is
// bounded only at math.MaxInt32 and cannot be given a smaller bound, and a
// loader of arbitrary files needs one. Decompress lends that bounded
// decoder to callers that decode through kgo's interface (the live
// watcher's read_committed filter). Snappy accepts the xerial framing
// snappy-java writes and raw blocks; magic 0 LZ4 frames get their
// historically wrong header checksum patched, as Kafka ignores it
// (Lz4BlockInputStream) and Wireshark rewrites it.
//
// # Partition directories
//
// OpenPartition follows LogLoader: segments are the <20 digits>.log files in
// base-offset order; .deleted and .cleaned files are ignored; .swap files
// below the lowest .cleaned offset replace the segments whose base offset
// lies in [lowest swap base, highest swap next offset) and later ones are
// ignored (KAFKA-6264); index files without a .log are orphans.
// ListSegments applies the same rules without scanning the segments (only
// a valid .swap, for where it ends), for segsum's on-demand scans. A segment with a .index but no .txnindex gets
// TxnIndexOnDisk with no entries (and TxnIndexAbsent), because Kafka
// creates .txnindex files lazily and LogSegment.sanityCheck passes a
// missing one; a segment without a .index is recovered by the broker, so
// its index is left to be rebuilt. The newest producer snapshot that decodes cleanly, among
// those the broker keeps on startup, seeds Input.Ongoing with its
// transactions that began before the first batch (first offset, epoch, last write time, coordinator epoch), and
// Input.Snapshot with every entry, as ProducerStateManager.loadFromSnapshot
// loads it. SeedSnapshots is that choice, the one routine every reader
// of a partition directory seeds its producer state with (OpenPartition,
// OpenPartitionTail, which logindex's tail scan asks too, and segsum's
// first window).
// LogStartOffset and HighWatermark come from the parent directory's
// log-start-offset-checkpoint and replication-offset-checkpoint.
package loader
