package server

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadNames(t *testing.T) {
	for _, tt := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"one load is its base name", []string{"/var/lib/kafka/data"}, []string{"data"}},
		{"distinct base names stay short", []string{"/a/orders-0", "/b/payments-1"}, []string{"orders-0", "payments-1"}},
		{"same base names by their path below the shared directory", []string{"/x/a/t-0", "/x/b/t-0"}, []string{"a/t-0", "b/t-0"}},
		{"log dirs of two disks", []string{"/data1/kafka", "/data2/kafka", "/data3/other"}, []string{"data1/kafka", "data2/kafka", "data3/other"}},
		{"deeper and shallower", []string{"/x/t-0", "/x/y/t-0"}, []string{"t-0", "y/t-0"}},
		{"the same path twice is numbered", []string{"/x/t-0", "/x/t-0"}, []string{"t-0", "t-0 (2)"}},
		{"a trailing slash is the same directory", []string{"/x/a/t-0/", "/x/b/t-0"}, []string{"a/t-0", "b/t-0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := loadNames(tt.paths); !slices.Equal(got, tt.want) {
				t.Errorf("loadNames(%q) = %q, want %q", tt.paths, got, tt.want)
			}
		})
	}
}

// TestServeTellsLoadsApart: two --load partition directories of the same
// name are headed by their paths below the directory they share, and a
// log directory by its name, never by an absolute path.
func TestServeTellsLoadsApart(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		writeScenario(t, "../scenario/demos/interleaved.txn", filepath.Join(root, d))
	}
	parts, _ := filepath.Glob(filepath.Join(root, "a", "*-0"))
	if len(parts) != 1 {
		t.Fatalf("partitions %v", parts)
	}
	part := filepath.Base(parts[0])
	s := startServe(t, loads(filepath.Join(root, "a", part), filepath.Join(root, "b", part), filepath.Join(root, "b")))
	page := getPage(t, s.url("/"))
	for _, want := range []string{"a/" + part + " (partition directory)", "b/" + part + " (partition directory)", ">b (log directory)<"} {
		if !strings.Contains(page, want) {
			t.Errorf("the index does not head a load %q", want)
		}
	}
	if strings.Contains(page, root) {
		t.Errorf("the index shows the absolute path %s outside a tooltip", root)
	}
}
