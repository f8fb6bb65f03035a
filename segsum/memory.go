package segsum

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultMaxMemory is a quarter of the machine's memory (MemTotal in
// /proc/meminfo), or 1 GiB where that cannot be read: the timeline of a
// large partition shares the machine with the broker's page cache and the
// rest of the server.
func DefaultMaxMemory() int64 {
	if t := memTotal(); t > 0 {
		return t / 4
	}
	return 1 << 30
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
