package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// scriptRef is a program of scripts/ named the way the benchmark scripts,
// the docs and the Makefile run it: ./scripts/NAME or scripts/NAME.
var scriptRef = regexp.MustCompile(`(?:\./|\s|^|\x60|")scripts/([a-z0-9_-]+)`)

// TestScriptsNamedExist: every program or script of scripts/ that a
// benchmark script, a doc, the README or the Makefile names exists: a
// benchmark whose helper program was deleted fails at its first line, long
// after the figures it gave were written down.
func TestScriptsNamedExist(t *testing.T) {
	dir := root(t)
	var files []string
	for _, pat := range []string{"scripts/*.sh", "docs/*.md", "README.md", "Makefile", ".ci/*"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("only %d files to look in: %v", len(files), files)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range scriptRef.FindAllSubmatch(b, -1) {
			name := string(m[1])
			seen++
			if _, err := os.Stat(filepath.Join(dir, "scripts", name)); err == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "scripts", name+".sh")); err == nil {
				continue
			}
			rel, _ := filepath.Rel(dir, f)
			t.Errorf("%s names scripts/%s, which does not exist", rel, name)
		}
	}
	if seen == 0 {
		t.Fatal("no reference to scripts/ found: the pattern no longer matches")
	}
}
