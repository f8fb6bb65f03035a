package segsum

// DefaultMaxMemory is a quarter of the machine's memory (totalMemory), or
// 1 GiB where that is not known: the timeline of a large partition shares
// the machine with the broker's page cache and the rest of the server.
func DefaultMaxMemory() int64 {
	if t := totalMemory(); t > 0 {
		return t / 4
	}
	return 1 << 30
}
