package scenario

import (
	"os"
)

// ParseFile reads and parses the scenario file name (`txnscope scenario
// build FILE`, `txnscope export --scenario FILE.txn`).
func ParseFile(name string) (*Scenario, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, name)
}

// WriteTemp writes the built files into a new temporary log directory,
// named after pattern as os.MkdirTemp names it, and returns that
// directory; the partition directory is b.Dir inside it. The caller
// removes it. Nothing is left behind when writing fails.
func (b *Built) WriteTemp(pattern string) (string, error) {
	tmp, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	if err := b.WriteDir(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}
