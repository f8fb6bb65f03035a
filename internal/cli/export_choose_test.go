package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportSeveralPartitionsNamesAFew: export of a log directory of many
// partitions without --topic and --partition named every one of them in
// its one-line usage error (169 KB for 20,001 partitions), each as the
// directory spelled it, so a topic holding a newline split the line. It
// names the first 100 now, each as terminal text names a partition, and
// counts the rest.
func TestExportSeveralPartitionsNamesAFew(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a\nb-0"}
	for i := range 150 {
		names = append(names, fmt.Sprintf("t%03d-0", i))
	}
	for _, n := range names {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := runArgs(t, "export", "--out", filepath.Join(t.TempDir(), "x.html"), dir)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a usage error", code == exitUsage},
		{"one line", strings.Count(errOut, "\n") == 1},
		{"the odd name quoted", strings.Contains(errOut, `"a\nb"-0`)},
		{"the first partitions named", strings.Contains(errOut, "t000-0, t001-0")},
		{"the rest counted", strings.Contains(errOut, "… and 51 more")},
		{"short", len(errOut) < 2000},
	} {
		if !tc.ok {
			t.Errorf("%s: exit %d, stderr (%d bytes) %.600q", tc.name, code, len(errOut), errOut)
		}
	}
}
