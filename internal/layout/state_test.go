package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// processState are the package-level variables that hold state for the
// whole process, each with why it is not a server's field.
var processState = map[string]string{
	// The directory the embedded demos are written to once, shared by
	// every command and server of the process and removed at its end.
	"scenario/gen.demoRoot": "the demos' files",
	// Decoders are costly to build and hold no data between uses.
	"loader.zstdPool": "a pool of zstd decoders",
	// The embedded assets' content hashes, computed once: they cannot
	// change while the process runs.
	"static.hashOnce": "the assets' hashes",
	// A log directory's checkpoint files parsed once and reused only
	// while their size, time and mode (and the directory's) are
	// unchanged, bounded to 16 directories: every caller sees the files
	// as they are, as if it had read them itself.
	"loader.cpCache": "parsed checkpoint files, checked against the files",
}

// TestNoPackageCaches: a cache, a lock or a counter lives in a field of
// what owns it (the server, its API, a catalog), never in a package-level
// variable that every server of the process, and every test, would share.
// Caught: a package-level var whose type is a sync or sync/atomic type, or
// a struct holding one.
func TestNoPackageCaches(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "scripts" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				held := holdsSync(vs.Type)
				for _, v := range vs.Values {
					if u, ok := v.(*ast.UnaryExpr); ok {
						v = u.X
					}
					if c, ok := v.(*ast.CompositeLit); ok {
						held = held || holdsSync(c.Type)
					}
				}
				if !held {
					continue
				}
				for _, n := range vs.Names {
					key := filepath.ToSlash(filepath.Dir(rel)) + "." + n.Name
					if _, ok := processState[key]; !ok {
						t.Errorf("%s: package-level %s holds a sync or atomic value: make it a field of what owns it", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holdsSync reports whether the type expression e is a sync or
// sync/atomic type, or a struct with a field of one.
func holdsSync(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && (x.Name == "sync" || x.Name == "atomic")
	case *ast.StructType:
		for _, f := range e.Fields.List {
			if holdsSync(f.Type) {
				return true
			}
		}
	case *ast.StarExpr:
		return holdsSync(e.X)
	}
	return false
}
