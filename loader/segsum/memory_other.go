//go:build !linux

package segsum

// totalMemory is not known here: DefaultMaxMemory falls back to 1 GiB.
func totalMemory() int64 { return 0 }
