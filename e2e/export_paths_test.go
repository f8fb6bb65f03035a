package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/cli"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// domText is everything a person can read or copy from a page: the text,
// every attribute (titles, data-* a copy button copies) and the title.
const domText = `document.title + "\n" + document.documentElement.outerHTML`

// TestExportNoLocalPaths exports a scenario file (built in a temporary
// directory) and a log directory given by its absolute path, opens each
// from file:// and finds neither path, nor the temporary directory, in the
// page: the subtitle is the scenario's title, the partition from the log
// directory's base name (or the partition directory alone) with the date of
// the export, or --title.
func TestExportNoLocalPaths(t *testing.T) {
	ctx, _, _ := browser(t, false)
	dir := t.TempDir()
	scen := filepath.Join(dir, "my-class.txn")
	src, err := os.ReadFile(filepath.Join("..", "scenario", "demos", "stuck-lso.txn"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "kafka-logs")
	var so, se bytes.Buffer
	if code := cli.Run(context.Background(), []string{"scenario", "build", scen, "--out", logs}, &so, &se); code != exitOK {
		t.Fatalf("scenario build: exit %d: %s", code, se.String())
	}
	for _, tc := range []struct {
		name  string
		args  []string
		title string
	}{
		{"scenario", []string{"--scenario", scen}, "A stuck LSO: an abandoned transaction pins every read_committed consumer"},
		{"path", []string{logs}, "demo-stuck-lso-0 from kafka-logs (log directory), exported " + time.Now().UTC().Format(time.DateOnly)},
		{"partition dir", []string{filepath.Join(logs, "demo-stuck-lso-0")}, "demo-stuck-lso-0 (partition directory), exported " + time.Now().UTC().Format(time.DateOnly)},
		{"title", []string{"--title", "orders, Tuesday", logs}, "orders, Tuesday"},
	} {
		out := filepath.Join(t.TempDir(), tc.name+".html")
		so.Reset()
		se.Reset()
		if code := cli.Run(context.Background(), append([]string{"export", "--out", out}, tc.args...), &so, &se); code != exitOK {
			t.Fatalf("%s: export: exit %d: %s", tc.name, code, se.String())
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+out), waitDone(1)); err != nil {
			t.Fatal(err)
		}
		// The file as written, and the DOM as drawn (whose "link to this
		// step" is, rightly, where the reader opened the file).
		file, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for what, page := range map[string]string{"file": string(file), "DOM": eval[string](t, ctx, domText)} {
			for _, local := range []string{dir, os.TempDir() + "/txnscope-export-"} {
				if i := strings.Index(page, local); i >= 0 {
					t.Errorf("%s: the exported %s holds the local path %q: …%s…", tc.name, what, local, page[max(i-80, 0):min(i+120, len(page))])
				}
			}
		}
		if strings.Contains(string(file), filepath.Dir(out)) {
			t.Errorf("%s: the exported file holds its own directory", tc.name)
		}
		if got := strings.TrimSpace(text(t, ctx, `[data-testid="source-title"]`)); got != tc.title {
			t.Errorf("%s: subtitle %q, want %q", tc.name, got, tc.title)
		}
	}
}

// TestLoadTitleRelative: a --load source's page names the partition by its
// path under the loaded root; the full path is only its tooltip.
func TestLoadTitleRelative(t *testing.T) {
	root := testfixture.WriteJoinLogDir(t, txnindex.TopicPartition{Topic: "orders", Partition: 1})
	ld, err := input.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("load1", root, ld))
	s := cat.find("load1", "orders", 0)
	if s == nil {
		t.Fatal("orders-0 not loaded")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	want := filepath.Base(root) + "/orders-0 (log directory)"
	if got := strings.TrimSpace(text(t, ctx, `[data-testid="source-title"]`)); got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if tip, _ := attr(ctx, `[data-testid="source-title"]`, "title"); tip != filepath.Join(root, "orders-0") {
		t.Errorf("tooltip %q, want the full path %q", tip, filepath.Join(root, "orders-0"))
	}
	if n := eval[int](t, ctx, fmt.Sprintf(`document.body.innerText.split(%q).length - 1`, root)); n != 0 {
		t.Errorf("the page's text holds the full path %d times", n)
	}
}
