package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseFileWriteTemp: a scenario file read from disk builds into a
// temporary log directory holding its partition directory and every file
// the build made; a missing file is an error naming it.
func TestParseFileWriteTemp(t *testing.T) {
	name := filepath.Join(t.TempDir(), "abort.txn")
	text := "topic orders partition 3\nproducer p transactional id 7\nbegin p\nsend p 2\nabort p\n"
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	root, err := b.WriteTemp("txnscope-scenario-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	if b.Dir != "orders-3" || !strings.Contains(filepath.Base(root), "txnscope-scenario-test-") {
		t.Fatalf("wrote %s into %s", b.Dir, root)
	}
	for _, f := range b.Files {
		if _, err := os.Stat(filepath.Join(root, f.Path)); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFile(name + ".missing"); err == nil || !strings.Contains(err.Error(), "abort.txn.missing") {
		t.Fatalf("missing file: %v", err)
	}
}
