package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/txnscope/txnscope/loader"
)

// loadNames names the --load paths for the page headings: each by its base
// name when those tell the loads apart, else every one by its path relative
// to the deepest directory they all share, so that two partition
// directories named t-0 read a/t-0 and b/t-0 rather than two identical
// headings. A heading never shows an absolute path (the tooltip does).
// The same path loaded twice is numbered.
func loadNames(paths []string) []string {
	abs := make([]string, len(paths))
	bases := map[string]int{}
	for i, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			a = filepath.Clean(p)
		}
		abs[i] = a
		bases[filepath.Base(a)]++
	}
	names := make([]string, len(paths))
	distinct := true
	for i, a := range abs {
		names[i] = filepath.Base(a)
		distinct = distinct && bases[names[i]] == 1
	}
	if !distinct {
		common := filepath.Dir(abs[0])
		for _, a := range abs[1:] {
			for common != filepath.Dir(common) && !strings.HasPrefix(a, common+string(filepath.Separator)) {
				common = filepath.Dir(common)
			}
		}
		for i, a := range abs {
			if rel, err := filepath.Rel(common, a); err == nil && rel != "." {
				names[i] = filepath.ToSlash(rel)
			}
		}
	}
	seen := map[string]int{}
	for i, n := range names {
		seen[n]++
		if seen[n] > 1 {
			names[i] = fmt.Sprintf("%s (%d)", n, seen[n])
		}
	}
	return names
}

// loadTitle is "<root shown as>/<partition dir relative to it> (kind)" and
// the absolute path of what was read (the partition directory, else root).
func loadTitle(root, shown string, f *loader.Partition, kind string) (title, full string) {
	full = root
	if f != nil && f.Dir != "" {
		full = f.Dir
		if rel, err := filepath.Rel(root, f.Dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			shown += "/" + filepath.ToSlash(rel)
		}
	}
	if abs, err := filepath.Abs(full); err == nil {
		full = abs
	}
	return fmt.Sprintf("%s (%s)", shown, kind), full
}
