package layout

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	// maxLines: no Go or JS file over ~600 lines, so that each reads as one concern.
	maxLines = 600
	// maxServerLines bounds the command table's files (internal/cli): the
	// commands are flags, dispatch and wiring; logic lives in packages.
	// The server's files (server/) too: each holds one part of it.
	maxServerLines = 300
)

// allowed lists the files that may exceed maxLines, each with the reason it
// stays whole. An entry whose file is gone or has shrunk below the limit
// fails the test too, so the list never outlives its reasons.
// None today: every file fits.
var allowed = map[string]string{}

// root is the repository root: the nearest parent holding go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// source is one Go or JS file of the repository.
type source struct {
	rel       string // slash-separated, from the root
	lines     int    // as wc -l counts them
	generated bool
	imports   []string // Go only
}

// sources walks the tree as the go tool would: directories named testdata,
// vendor or node_modules, or starting with "." or "_", are not source.
func sources(t *testing.T, dir string) []source {
	t.Helper()
	var out []source
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || name == "vendor" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		isGo, isJS := strings.HasSuffix(name, ".go"), strings.HasSuffix(name, ".js")
		if !isGo && !isJS || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		s := source{rel: filepath.ToSlash(rel), lines: bytes.Count(b, []byte("\n"))}
		if isGo {
			f, err := parser.ParseFile(token.NewFileSet(), path, b, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			s.generated = ast.IsGenerated(f)
			for _, im := range f.Imports {
				p, err := strconv.Unquote(im.Path.Value)
				if err != nil {
					return err
				}
				s.imports = append(s.imports, p)
			}
		} else {
			// The Go convention (https://go.dev/s/generatedcode) on the first
			// line, as static/js/contract.js carries it.
			first, _, _ := bytes.Cut(b, []byte("\n"))
			s.generated = bytes.Contains(first, []byte("Code generated")) && bytes.Contains(first, []byte("DO NOT EDIT"))
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no Go or JS files below %s", dir)
	}
	return out
}

func TestFileSizes(t *testing.T) {
	dir := root(t)
	seen := map[string]bool{}
	for _, s := range sources(t, dir) {
		if s.generated {
			continue
		}
		if s.lines > maxLines {
			seen[s.rel] = true
			if _, ok := allowed[s.rel]; !ok {
				t.Errorf("%s: %d lines, over %d: split it by concern into files of its package, or add it to allowed (layout_test.go) with the reason it stays whole", s.rel, s.lines, maxLines)
			}
		}
		if strings.HasPrefix(s.rel, "internal/cli/") && strings.HasSuffix(s.rel, ".go") &&
			!strings.HasSuffix(s.rel, "_test.go") && s.lines > maxServerLines {
			t.Errorf("%s: %d lines, over %d: internal/cli is flags and wiring; move the logic into a package", s.rel, s.lines, maxServerLines)
		}
		if strings.HasPrefix(s.rel, "server/") && strings.HasSuffix(s.rel, ".go") &&
			!strings.HasSuffix(s.rel, "_test.go") && s.lines > maxServerLines {
			t.Errorf("%s: %d lines, over %d: split the server's file by what it serves", s.rel, s.lines, maxServerLines)
		}
	}
	for rel := range allowed {
		if !seen[rel] {
			t.Errorf("%s is in allowed but is gone or no longer over %d lines: remove its entry", rel, maxLines)
		}
	}
}

func TestHTTPTestOnlyInTests(t *testing.T) {
	for _, s := range sources(t, root(t)) {
		if strings.HasSuffix(s.rel, "_test.go") {
			continue
		}
		for _, p := range s.imports {
			if p == "net/http/httptest" {
				t.Errorf("%s imports net/http/httptest outside a _test.go file", s.rel)
			}
		}
	}
}
