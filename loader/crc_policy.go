package loader

import (
	"sort"
	"strconv"
)

// ServedCRCs says how the CRCs of a partition's segments are checked, so
// that the batches a load keeps are the ones the broker serves. A broker
// checks a batch's CRC only when it recovers the batch's segment: at a
// start after an unclean shutdown, from the segment holding the recovery
// point to the end (LogLoader.recoverLog), where a failure truncates the
// log; after a clean shutdown (CleanShutdownFile) it recovers none. Every
// other batch it serves as it is, and a consumer that checks CRCs (the
// Java consumer's check.crcs, on by default) fails on a damaged one. So a
// batch whose CRC fails in a segment no start recovers is kept, and its
// failure noted; one in a segment a start recovers ends the segment's
// batches (Log.RecoveryTruncation says what that start then takes). With
// no recovery point known, every CRC is checked.
//
// The whole load, the tail read and segment windows (segsum) all take
// their scan options from it, so that they keep the same batches.
type ServedCRCs struct {
	clean         bool
	recoveryPoint int64
	known         bool
	bases         []int64 // the partition's segments' base offsets, ascending
	// trusted: no CRC is checked below the recovery point, not even for
	// a note (a tail read trusts them as it trusts the snapshot).
	trusted bool
}

// NewServedCRCs is the policy of the partition topic-partition whose
// segments start at bases (ascending), in a log directory whose
// checkpoint files cps holds (nil: none read).
func NewServedCRCs(cps *LogDirCheckpoints, topic string, partition int32, bases []int64) ServedCRCs {
	c := ServedCRCs{bases: bases}
	if cps == nil {
		return c
	}
	c.clean = cps.CleanShutdown
	c.recoveryPoint, c.known = cps.RecoveryPoint.Lookup(topic, partition)
	return c
}

// below reports whether the segment at base lies wholly below the
// recovery point: the next segment starts at or below it.
func (c ServedCRCs) below(base int64) bool {
	if !c.known {
		return false
	}
	k := sort.Search(len(c.bases), func(i int) bool { return c.bases[i] > base })
	return k < len(c.bases) && c.bases[k] <= c.recoveryPoint
}

// recovered reports whether a restart after an unclean shutdown
// recovers the segment at base (as txnindex.Log.RecoveryTruncation
// decides it): the recovery point is known, the log directory holds no
// clean shutdown marker, and the segment holds the recovery point or lies
// after it.
func (c ServedCRCs) recovered(base int64) bool {
	return c.known && !c.clean && !c.below(base)
}

// Options is o for the segment at base. It changes nothing when o checks
// no CRC.
func (c ServedCRCs) Options(o ScanOptions, base int64) ScanOptions {
	if !o.VerifyCRC {
		return o
	}
	switch {
	case c.clean:
		o.VerifyCRC, o.crcKept = false, cleanShutdownCRC
	case c.below(base) && c.trusted:
		o.VerifyCRC = false
	case c.below(base):
		o.VerifyCRC, o.crcKept = false, flushedCRC
	}
	return o
}

// Key tells policies apart for a cache of what segments hold.
func (c ServedCRCs) Key() string {
	switch {
	case c.clean:
		return "clean"
	case c.known:
		return "recovery point " + strconv.FormatInt(c.recoveryPoint, 10)
	}
	return ""
}
