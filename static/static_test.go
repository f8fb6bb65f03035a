package static

import (
	"io/fs"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	p := Path("js/timeline.js")
	if !strings.HasPrefix(p, "/static/js/timeline.js?v=") || len(p) != len("/static/js/timeline.js?v=")+12 {
		t.Fatalf("Path = %q", p)
	}
	for _, c := range []struct {
		url, cache string
		code       int
	}{
		{p, "immutable", 200},
		{"/static/js/timeline.js", "no-cache", 200},
		{Path("css/app.css"), "immutable", 200},
		{"/static/nope.js", "", 404},
		{"/static/", "", 404},
	} {
		rec := httptest.NewRecorder()
		Handler().ServeHTTP(rec, httptest.NewRequest("GET", c.url, nil))
		if rec.Code != c.code || !strings.Contains(rec.Header().Get("Cache-Control"), c.cache) {
			t.Errorf("%s: %d %q", c.url, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
}

// TestTimelineScriptsComplete fails when a script in js/ is in no page's
// list: a new timeline file must be added to TimelineScripts (in its place
// in the load order), or the pages and the export would run without it.
func TestTimelineScriptsComplete(t *testing.T) {
	// The pages' other scripts, each linked on its own by package web.
	others := map[string]bool{"js/cluster.js": true, "js/diagnosis.js": true, "js/index.js": true, "js/lesson.js": true, "js/live.js": true, "js/upload.js": true}
	for _, s := range HeadScripts {
		others[s] = true
	}
	listed := map[string]bool{}
	for _, s := range TimelineScripts {
		if listed[s] || others[s] {
			t.Errorf("%s listed twice", s)
		}
		listed[s] = true
		if _, err := FS.ReadFile(s); err != nil {
			t.Errorf("TimelineScripts lists %s: %v", s, err)
		}
	}
	if n := len(TimelineScripts); n < 2 || TimelineScripts[0] != "js/contract.js" || TimelineScripts[n-1] != "js/timeline.js" {
		t.Errorf("TimelineScripts = %v: contract.js (the constants) must run first and timeline.js (the start) last", TimelineScripts)
	}
	files, err := fs.Glob(FS, "js/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !listed[f] && !others[f] {
			t.Errorf("%s is in static/js but in no list of scripts: add it to TimelineScripts", f)
		}
	}
	if len(files) != len(listed)+len(others) {
		t.Errorf("%d files in js/, %d listed", len(files), len(listed)+len(others))
	}
}

// TestOneNumberFormat: every script writes numbers as the server and the
// CLI do (txnindex.Count: 1,234,567). toLocaleString() without a
// locale follows the reader's browser (1.234.567 in German), and a page
// mixing both reads as two formats.
func TestOneNumberFormat(t *testing.T) {
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, err := fs.ReadFile(FS, p)
		if err != nil {
			return err
		}
		if p != "js/format.js" && (strings.Contains(string(b), ".toLocaleString(") || strings.Contains(string(b), `\u202f`)) {
			t.Errorf("%s formats a number its own way (toLocaleString, or thin-space separators): use window.txnscopeFormat (format.js)", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDarkThemeOnePalette: app.css declares the dark theme twice, for the
// system's preference and for the toggle's choice. CSS has no rule that
// applies under a media query or an attribute, so the palette is written
// out in each; this holds the two copies to the same declarations.
func TestDarkThemeOnePalette(t *testing.T) {
	css, err := fs.ReadFile(FS, "css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	block := func(opening string) []string {
		_, rest, ok := strings.Cut(string(css), opening)
		if !ok {
			t.Fatalf("app.css has no %q", opening)
		}
		body, _, _ := strings.Cut(rest, "}")
		var decls []string
		for d := range strings.SplitSeq(body, ";") {
			if d = strings.Join(strings.Fields(d), " "); d != "" {
				decls = append(decls, d)
			}
		}
		return decls
	}
	system := block(`:root:not([data-theme="light"]) {`)
	chosen := block(`:root[data-theme="dark"] {`)
	if len(system) < 40 || strings.Join(system, ";") != strings.Join(chosen, ";") {
		t.Errorf("the dark theme's two copies differ:\nsystem: %q\nchosen: %q", system, chosen)
	}
}
