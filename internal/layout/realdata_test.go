package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxRealData is the bound on the real files the tests read: a
// clone stays small.
const maxRealData = 5 << 20

// TestRealDataListed: testdata/realdata/README.md lists every file of the
// directory, with its size, source repository, licence and what it is, and
// nothing that is not there; each file's source directory is a row of the
// README's sources table (repository, commit, licence); the whole
// directory stays under 5 MB.
func TestRealDataListed(t *testing.T) {
	dir := filepath.Join(root(t), "testdata", "realdata")
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sources, files := map[string]bool{}, map[string][]string{}
	head, every, ok := strings.Cut(string(b), "\n## Every file\n")
	if !ok {
		t.Fatal(`testdata/realdata/README.md has no "## Every file" section`)
	}
	for _, l := range strings.Split(head, "\n") {
		if c := cells(l); len(c) == 5 && strings.HasPrefix(c[1], "github:") {
			sources[strings.Trim(c[0], "`")] = true
		}
	}
	for _, l := range strings.Split(every, "\n") {
		if c := cells(l); len(c) == 5 && strings.HasPrefix(c[0], "`") {
			files[strings.Trim(c[0], "`")] = c
		}
	}
	if len(sources) == 0 || len(files) == 0 {
		t.Fatalf("README: %d sources, %d files read from its tables", len(sources), len(files))
	}
	var total int64
	seen := map[string]bool{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		st, err := d.Info()
		if err != nil {
			return err
		}
		total += st.Size()
		if rel == "README.md" {
			return nil
		}
		seen[rel] = true
		c, ok := files[rel]
		switch {
		case !ok:
			t.Errorf("%s is not listed in testdata/realdata/README.md (## Every file: path, bytes, source repo, licence, what it is)", rel)
		case c[1] != strconv.FormatInt(st.Size(), 10):
			t.Errorf("%s: README says %s bytes, the file has %d", rel, c[1], st.Size())
		case !sources[strings.Split(rel, "/")[0]]:
			t.Errorf("%s: its directory %s is not in the README's sources table", rel, strings.Split(rel, "/")[0])
		case !strings.HasPrefix(c[2], "github:") || c[3] == "" || c[4] == "":
			t.Errorf("%s: README row lacks the source repository, licence or what it is: %q", rel, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range files {
		if !seen[rel] {
			t.Errorf("testdata/realdata/README.md lists %s, which is not there", rel)
		}
	}
	if total > maxRealData {
		t.Errorf("testdata/realdata holds %d bytes, over %d: keep the real files small", total, maxRealData)
	}
	t.Logf("%d files, %d bytes", len(seen), total)
}

// cells splits a Markdown table row into its trimmed cells; nil for any
// other line.
func cells(line string) []string {
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	var out []string
	for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}
