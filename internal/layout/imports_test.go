package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/txnscope/txnscope/"

// architectureRow is one row of docs/architecture.md's package table.
type architectureRow struct {
	pkg      string   // slash path from the root, without a trailing slash
	imports  []string // the module's packages it may import
	anything bool     // "any"
}

// architecture reads the package table of docs/architecture.md: rows
// "| `pkg/` | job | `a`, `b` |", whose last column is "none…", "any" or a
// list of packages in backquotes.
func architecture(t *testing.T, dir string) (rows []architectureRow, doc string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc = string(b)
	_, rest, ok := strings.Cut(doc, "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	table, _, _ := strings.Cut(rest, "\n## ")
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "| "), " | ")
		if len(cells) != 3 {
			t.Fatalf("docs/architecture.md: row %q has %d cells, want 3", l, len(cells))
		}
		r := architectureRow{pkg: strings.TrimSuffix(strings.Trim(cells[0], "`"), "/")}
		switch last := cells[2]; {
		case last == "any":
			r.anything = true
		case strings.HasPrefix(last, "none"):
		default:
			for _, p := range strings.Split(last, ", ") {
				r.imports = append(r.imports, strings.Trim(p, "`"))
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md's Packages section has no rows")
	}
	return rows, doc
}

// rowFor is the row that governs package p: its own, or a "dir/..." row.
func rowFor(rows []architectureRow, p string) (architectureRow, bool) {
	for _, r := range rows {
		if r.pkg == p {
			return r, true
		}
		if base, ok := strings.CutSuffix(r.pkg, "/..."); ok && (p == base || strings.HasPrefix(p, base+"/")) {
			return r, true
		}
	}
	return architectureRow{}, false
}

// TestImportsFollowArchitecture: every package of the module is a row of
// docs/architecture.md's table, each imports only the module packages its
// row names (tests aside: a test may drive any package), every package a row
// names exists, and txnindex and diagnosis import no third-party module.
func TestImportsFollowArchitecture(t *testing.T) {
	dir := root(t)
	rows, _ := architecture(t, dir)
	pkgs := map[string]bool{}
	for _, s := range sources(t, dir) {
		if !strings.HasSuffix(s.rel, ".go") || !strings.Contains(s.rel, "/") {
			continue
		}
		p := filepath.ToSlash(filepath.Dir(s.rel))
		pkgs[p] = true
		if strings.HasSuffix(s.rel, "_test.go") {
			continue
		}
		r, ok := rowFor(rows, p)
		if !ok {
			continue // reported once below
		}
		for _, im := range s.imports {
			own, isOwn := strings.CutPrefix(im, module)
			if (p == "txnindex" || p == "diagnosis") && strings.Contains(strings.Split(im, "/")[0], ".") && !isOwn {
				t.Errorf("%s imports %s: %s uses the standard library only (and the module's packages its row names)", s.rel, im, p)
			}
			if !isOwn || r.anything || slices.Contains(r.imports, own) {
				continue
			}
			t.Errorf("%s imports %s, which docs/architecture.md's row for %s/ does not allow: move the code, or change the table with the reason", s.rel, own, r.pkg)
		}
	}
	for p := range pkgs {
		if _, ok := rowFor(rows, p); !ok {
			t.Errorf("package %s/ is not in docs/architecture.md's Packages table", p)
		}
	}
	for _, r := range rows {
		base := strings.TrimSuffix(r.pkg, "/...")
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(base))); err != nil || !st.IsDir() {
			t.Errorf("docs/architecture.md names %s/, which is not in the tree", r.pkg)
		}
		for _, im := range r.imports {
			if !pkgs[im] {
				t.Errorf("docs/architecture.md lets %s/ import %s, which is not a package of the tree", r.pkg, im)
			}
		}
	}
}

// TestStaticScriptsNamed: every script of static/js is named on the
// architecture page, so that a new one comes with its place in the order.
func TestStaticScriptsNamed(t *testing.T) {
	dir := root(t)
	_, doc := architecture(t, dir)
	js, err := filepath.Glob(filepath.Join(dir, "static", "js", "*.js"))
	if err != nil || len(js) == 0 {
		t.Fatalf("no static/js/*.js: %v", err)
	}
	for _, f := range js {
		if name := filepath.Base(f); name != "contract.js" && !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/architecture.md does not name static/js/%s", name)
		}
	}
}

// TestCmdIsMainsOnly: the packages under cmd/ are mains that call the
// command table; state, locks and types with methods belong in packages
// that can be tested and imported.
func TestCmdIsMainsOnly(t *testing.T) {
	dir := root(t)
	for _, s := range sources(t, dir) {
		if !strings.HasPrefix(s.rel, "cmd/") || !strings.HasSuffix(s.rel, ".go") {
			continue
		}
		for _, im := range s.imports {
			if im == "sync" || im == "sync/atomic" {
				t.Errorf("%s imports %s: cmd/ holds mains only", s.rel, im)
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, s.rel), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				t.Errorf("%s: method %s: cmd/ holds mains only", s.rel, fd.Name.Name)
			}
		}
	}
}
