package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testtool"
	loaderinput "github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/server"
)

// waitTimeline waits until the page is the timeline of source id and its
// stream has been drawn. The page navigates meanwhile, which ends a
// chromedp.Poll with "target navigated", so it asks again until then.
func waitTimeline(id string) chromedp.Action[chromedp.Void] {
	js := fmt.Sprintf(`location.pathname.startsWith("/sources/%s/") && !!document.querySelector('[data-testid="timeline"]')`, id)
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok, err := chromedp.Evaluate[bool](js)(ctx, tg)
			if err == nil && ok {
				_, err := waitDone(1)(ctx, tg)
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no timeline of %s after 20 s (last: %v)", id, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// checkLanes checks that every producer lane of the uploaded segment is
// drawn.
func checkLanes(t *testing.T, ctx context.Context) {
	t.Helper()
	ld, err := loaderinput.Open(uploadSegment)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions[0].Log.Producers) < 2 {
		t.Fatalf("the segment has %d producers", len(ld.Partitions[0].Log.Producers))
	}
	// A transactional producer has its row, the idempotent ones share the
	// non-transactional row (present.LaneRows).
	for _, p := range ld.Partitions[0].Log.Producers {
		id := fmt.Sprintf("lane-%d", p.ID)
		if !p.Transactional {
			id = "lane-none"
		}
		js := fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="%s"]'); return !!e && e.getBoundingClientRect().height > 0; })()`, id)
		if !eval[bool](t, ctx, js) {
			t.Errorf("%s (producer %d) not drawn", id, p.ID)
		}
	}
}

// TestUIUpload picks a real segment in the index page's file input and
// follows the page to the new source's timeline: lanes drawn, the file
// name in the title. Then it drops a truncated copy on the page's heading
// (not the zone: anywhere on the page works) and checks that the timeline
// lists the damage with its byte position.
func TestUIUpload(t *testing.T) {
	path := testtool.Need(t, "chromium")
	b := readFile(t, uploadSegment)
	s := startServe(t)
	// Started after the server so that it closes first: the server's
	// shutdown need not wait for the browser's preconnected sockets.
	ctx := startChromium(t, path)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="drop-zone"]`))); err != nil {
		t.Fatal(err)
	}
	if zone := text(t, ctx, `[data-testid="drop-zone"]`); !strings.Contains(zone, "up to 256 MiB, kept in memory, never saved") || !strings.Contains(zone, "A directory cannot be uploaded") {
		t.Errorf("drop zone text %q", zone)
	}
	seg := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(seg, b, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="upload-input"]`), []string{seg}),
		waitTimeline("upload-1")); err != nil {
		t.Fatalf("%v; status %q", err, eval[string](t, ctx, `(document.querySelector('[data-testid="upload-status"]') || {}).textContent || ""`))
	}
	checkLanes(t, ctx)
	if title := text(t, ctx, `[data-testid="summary"] h1 small`); title != "00000000000000000000.log (segment)" {
		t.Errorf("title %q, want the file name and kind", title)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="load-problems"]').length`); n != 0 {
		t.Errorf("%d problem lists for an intact segment", n)
	}
	screenshot(t, ctx, "TestUIUpload")

	// The same file cut inside its fifth batch, dropped on the heading.
	ld, err := loaderinput.Open(uploadSegment)
	if err != nil {
		t.Fatal(err)
	}
	fifth := ld.Partitions[0].Log.Batches[4]
	cut := b[:fifth.Position()+int64(fifth.Size)-10]
	drop := fmt.Sprintf(`(() => {
		const bytes = Uint8Array.from(atob(%q), (c) => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], "cut.log"));
		const h = document.querySelector("main h1");
		h.dispatchEvent(new DragEvent("dragenter", {dataTransfer: dt, bubbles: true, cancelable: true}));
		h.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`, base64.StdEncoding.EncodeToString(cut))
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="drop-zone"]`))); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, drop)
	// With problems the page stays a moment on the index, listing them.
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="upload-status"]').classList.contains("done")`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatal(err)
	}
	if st := text(t, ctx, `[data-testid="upload-status"]`); !strings.Contains(st, fmt.Sprintf("byte %#x", fifth.Position())) {
		t.Errorf("upload status %q does not list the problem", st)
	}
	if err := chromedp.Do(ctx, waitTimeline("upload-2")); err != nil {
		t.Fatal(err)
	}
	probs := text(t, ctx, `[data-testid="load-problems"]`)
	if !strings.Contains(probs, "cut.log") || !strings.Contains(probs, fmt.Sprintf("byte %#x", fifth.Position())) || !strings.Contains(probs, "truncated") {
		t.Errorf("timeline problems %q", probs)
	}
	screenshot(t, ctx, "TestUIUploadProblems")
}

// TestUIUploadOverLimit: a file over --max-upload-bytes gets the server's
// 413 text in the status, and the page stays on the index.
func TestUIUploadOverLimit(t *testing.T) {
	path := testtool.Need(t, "chromium")
	b := readFile(t, uploadSegment)
	// A name with markup: the status must show it as text.
	file := filepath.Join(t.TempDir(), "<b>big.log")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, func(o *server.Options) { o.MaxUploadBytes = 1000 })
	ctx := startChromium(t, path)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="drop-zone"]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="upload-input"]`), []string{file}),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="upload-status"]').classList.contains("error")`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatal(err)
	}
	want := "<b>big.log is larger than this server's upload limit of 1000 B (1000 bytes, serve --max-upload-bytes)"
	if st := text(t, ctx, `[data-testid="upload-status"]`); st != want {
		t.Errorf("status %q, want %q", st, want)
	}
	if a := eval[string](t, ctx, `document.querySelector('[data-testid="upload-status"]').dataset.answer`); a != "413" {
		t.Errorf("the page read HTTP answer %q, want the server's 413", a)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="upload-status"] b').length`); n != 0 {
		t.Error("the file name was rendered as markup")
	}
	if p := eval[string](t, ctx, `location.pathname`); p != "/" {
		t.Errorf("moved to %s after a refused upload", p)
	}
	if !strings.Contains(text(t, ctx, `[data-testid="drop-zone"]`), "up to 1000 B, kept in memory, never saved") {
		t.Error("the limit is not shown")
	}
	screenshot(t, ctx, "TestUIUploadOverLimit")

	// A file far over the limit: the server answers before the body is
	// sent and closes the connection, which the browser may see as a
	// network error instead of the 413; the page says the same either way.
	huge := filepath.Join(t.TempDir(), "huge.log")
	if err := os.WriteFile(huge, bytes.Repeat(b, 20<<20/len(b)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="drop-zone"]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="upload-input"]`), []string{huge}),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="upload-status"]').classList.contains("error")`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatal(err)
	}
	want = "huge.log is larger than this server's upload limit of 1000 B (1000 bytes, serve --max-upload-bytes)"
	if st := text(t, ctx, `[data-testid="upload-status"]`); st != want {
		t.Errorf("status %q, want %q", st, want)
	}
	t.Logf("20 MiB over a 1000-byte limit: HTTP answer read: %s", eval[string](t, ctx, `document.querySelector('[data-testid="upload-status"]').dataset.answer`))
}

// TestUIUploadDirectory drops a partition directory on the page, as a
// person dragging it from a file manager would (DevTools' drag events carry
// real paths): the page says a directory cannot be uploaded and sends
// nothing.
func TestUIUploadDirectory(t *testing.T) {
	path := testtool.Need(t, "chromium")
	b := readFile(t, uploadSegment)
	dir := filepath.Join(t.TempDir(), "lsx1-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t)
	ctx := startChromium(t, path)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url("/")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="drop-zone"]`))); err != nil {
		t.Fatal(err)
	}
	data := &input.DragData{Files: []string{dir}, DragOperationsMask: 1}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := cdp.Call(ctx, tg, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: 300, Y: 400, Data: data}); err != nil {
				return err
			}
		}
		return nil
	}), chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="upload-status"]').classList.contains("error")`, chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	want := "lsx1-0 is a directory, which cannot be uploaded: drop one of its .log segments, or start the server with --load lsx1-0"
	if st := text(t, ctx, `[data-testid="upload-status"]`); st != want {
		t.Errorf("status %q, want %q", st, want)
	}
	if ids := sourceIDs(t, s); slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, "upload-") }) {
		t.Errorf("a directory drop added a source: %v", ids)
	}
}
