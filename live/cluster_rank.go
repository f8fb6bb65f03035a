package live

// The order in which a ClusterScan lists its partitions (cluster.go).

import (
	"cmp"
	"slices"
	"strings"
)

// rank orders partitions: stuck first, hanging before open, then by lag
// seconds and offsets; unknown ones next; clear ones last; ties by topic and
// partition.
func rank(ps []PartitionLag) {
	class := func(p *PartitionLag) int {
		switch {
		case p.Err != "":
			return 3
		case p.LSOLagOffsets > 0 && p.Hanging:
			return 0
		case p.LSOLagOffsets > 0:
			return 1
		}
		return 4
	}
	slices.SortStableFunc(ps, func(a, b PartitionLag) int {
		if c := class(&a) - class(&b); c != 0 {
			return c
		}
		if c := cmp.Compare(b.LSOLagMs, a.LSOLagMs); c != 0 {
			return c
		}
		if c := cmp.Compare(b.LSOLagOffsets, a.LSOLagOffsets); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
}
