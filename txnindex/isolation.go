package txnindex

import "fmt"

// Isolation is the consumer's isolation.level.
type Isolation int8

// Isolation levels, with the FetchRequest v4 wire values.
const (
	ReadUncommitted Isolation = 0
	ReadCommitted   Isolation = 1
)

// String returns the config value.
func (i Isolation) String() string {
	if i == ReadCommitted {
		return "read_committed"
	}
	return "read_uncommitted"
}

// ParseIsolation parses "read_committed" or "read_uncommitted".
func ParseIsolation(s string) (Isolation, error) {
	switch s {
	case "read_committed":
		return ReadCommitted, nil
	case "read_uncommitted":
		return ReadUncommitted, nil
	}
	return 0, fmt.Errorf("txnindex: unknown isolation level %q (want read_committed or read_uncommitted)", s)
}
