package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/cli"
)

// exportDemo runs `server export --demo name` into a temp file.
func exportDemo(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".html")
	var so, se bytes.Buffer
	if code := cli.Run(context.Background(), []string{"export", "--demo", name, "--out", out}, &so, &se); code != exitOK {
		t.Fatalf("export: exit %d: %s%s", code, so.String(), se.String())
	}
	return out
}

// TestExportSelfContained checks the file without a browser: no URL of a
// server or an asset, and the data of both isolations.
func TestExportSelfContained(t *testing.T) {
	b, err := os.ReadFile(exportDemo(t, "interleaved"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, bad := range []string{`src="`, `rel="stylesheet"`, "/static/", `data-ws="/`, `href="/"`} {
		if strings.Contains(page, bad) {
			t.Errorf("the export holds %q", bad)
		}
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="txnscope-embedded">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no embedded data")
	}
	var d api.ExportData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatal(err)
	}
	for _, iso := range api.ExportIsolations {
		if len(d.Streams[iso]) < 3 || len(d.Reasons[iso]) == 0 || len(d.Batches[iso]) == 0 {
			t.Errorf("%s: %d messages, %d reasons, %d batches", iso, len(d.Streams[iso]), len(d.Reasons[iso]), len(d.Batches[iso]))
		}
	}
}

func TestExportUsage(t *testing.T) {
	for _, args := range [][]string{
		{"export", "--demo", "interleaved"},                                    // no --out
		{"export", "--out", "x.html"},                                          // no input
		{"export", "--demo", "nope", "--out", filepath.Join(t.TempDir(), "x")}, // unknown demo
		{"export", "--demo", "interleaved", "some/path", "--out", "x.html"},    // both
	} {
		var so, se bytes.Buffer
		if code := cli.Run(context.Background(), args, &so, &se); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, se.String())
		}
	}
}

// TestExportFileURL opens the export from file:// and checks that it draws
// the partition, switches isolation, explains a batch, and asks the network
// for nothing.
func TestExportFileURL(t *testing.T) {
	out := exportDemo(t, "interleaved")
	ctx, _, _ := browser(t, false)
	var mu sync.Mutex
	var requests []string
	chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *network.EventWebSocketCreated:
			requests = append(requests, e.URL)
		}
	})
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+out), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"lane-7", "lane-8", "lso", "hwm", "minimap", "legend"} {
		js := `(() => { const e = document.querySelector('[data-testid="` + id + `"]'); return !!e && !e.hidden && e.getBoundingClientRect().height > 0; })()`
		if !eval[bool](t, ctx, js) {
			t.Errorf("%s not shown", id)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="batch-list"] [data-decision="aborted"]').length`); n == 0 {
		t.Error("no aborted batch in the batch list")
	}
	if st := text(t, ctx, `[data-testid="status"]`); !strings.Contains(st, "static export") {
		t.Errorf("status %q", st)
	}

	// Hover and the detail panel work from the embedded data.
	x, y := hoverOffset(t, ctx, 3)
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="tooltip"] .reason').textContent.startsWith("aborted:")`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Errorf("tooltip reason: %v (%q)", err, text(t, ctx, `[data-testid="tooltip"]`))
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-reason"]`))); err != nil {
		t.Fatal(err)
	}
	if d := text(t, ctx, `[data-testid="detail"]`); !strings.Contains(d, "batch 2–4") || !strings.Contains(d, "00000000000000000000.txnindex") {
		t.Errorf("detail panel: %q", d)
	}
	screenshot(t, ctx, "TestExportFileURL")
	chromedp.Do(ctx, js(`document.querySelector('[data-testid="detail-close"]').click()`))

	// The isolation switch replays the other recording.
	before := eval[map[string]int](t, ctx, `window.txnscope.drawn()`)
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-testid="isolation"]`), "read_uncommitted"),
		js(`document.querySelector('[data-testid="isolation"]').dispatchEvent(new Event("change"))`),
		waitDone(2),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="batch-2"]').dataset.decision === "delivered"`, chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	after := eval[map[string]int](t, ctx, `window.txnscope.drawn()`)
	if before["aborted"] == 0 || after["aborted"] != 0 || after["delivered"] <= before["delivered"] {
		t.Errorf("drawn before %v, after %v: want the aborted batches delivered", before, after)
	}
	// The tooltip over the batch hovered before says what it is now.
	hoverOffset(t, ctx, 3)
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`(() => { const t = document.querySelector('[data-testid="tooltip"]'); return !t.hidden && t.dataset.decision === "delivered" && !t.textContent.includes("aborted ·"); })()`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Errorf("tooltip after the switch: %v (%q, decision %q)", err, text(t, ctx, `[data-testid="tooltip"]`), eval[string](t, ctx, `document.querySelector('[data-testid="tooltip"]').dataset.decision`))
	}
	screenshot(t, ctx, "TestExportFileURL-read_uncommitted")

	if n := eval[int](t, ctx, `performance.getEntriesByType("resource").length`); n != 0 {
		t.Errorf("%d resources loaded", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("network request %q", u)
		}
	}
	if len(requests) == 0 {
		t.Error("saw no request at all: is the network listener working?")
	}
}

// TestExportLessonFileURL opens the export from file:// and steps its
// lesson forward and back, checking the sentence and the decision shown
// against the step list the server computes; --scenario takes a name.
func TestExportLessonFileURL(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lesson.html")
	var so, se bytes.Buffer
	if code := cli.Run(context.Background(), []string{"export", "--scenario", "interleaved", "--out", out}, &so, &se); code != exitOK {
		t.Fatalf("export: exit %d: %s%s", code, so.String(), se.String())
	}
	ctx, _, cat := browser(t, false)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+out), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	checkStep(t, ctx, ls, 0)
	for n := 1; n <= 4; n++ {
		chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-next"]`)))
		checkStep(t, ctx, ls, n)
	}
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-prev"]`)))
	checkStep(t, ctx, ls, 3)
	b := ls.Steps[3].Batch
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('[data-testid="timeline"]').dataset.highlight === "%d-%d"`, b.From, b.To),
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("the timeline does not outline batch %d-%d: %v", b.From, b.To, err)
	}
	screenshot(t, ctx, "TestExportLessonFileURL")
}
