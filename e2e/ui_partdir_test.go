package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUIPartitionDirSegments: one partition directory loaded
// alone (--load PARTITIONDIR) over --max-source-bytes starts, where it was
// refused at start; the index lists it at once, ranked from its tail (the
// LSO and lag of the full load, the snapshot seeding the transaction that
// holds it); its page is drawn segment by segment as a log directory's
// partition is (checkSegmentWindows) and says why in words, its size and
// the limit in the one byte format; its lesson, quiz and embedded lesson
// say why they are not offered and link to the segment view; its plain
// embed shows one segment's window, as the page does.
func TestUIPartitionDirSegments(t *testing.T) {
	path := testtool.Need(t, "chromium")
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 128 << 10, TotalBytes: 768 << 10, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	ld, _, ov := openSegmented(t, st.Dir)
	full := ld.Partitions[0].Log
	if len(ov.Segments) < 6 {
		t.Fatalf("generated %d segments, want 6", len(ov.Segments))
	}
	var size int64
	ents, _ := os.ReadDir(st.Dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
	}
	const limit = 256 << 10
	why := fmt.Sprintf("%s-%d holds %s of files, more than --max-source-bytes (%s) allows: not opened in full", full.Topic, full.Partition, txnindex.Bytes(size), txnindex.Bytes(limit))
	s := startServe(t, loads(st.Dir), func(o *server.Options) { o.MaxSourceBytes = limit; o.SummaryCacheDir = t.TempDir() })

	// The index lists it at once and ranks it from its tail scan.
	row := regexp.MustCompile(`data-testid="partition-row-load1-` + full.Topic + `-0"[^>]*data-lag="([0-9,]+)"[^>]*data-scan="scanned"`)
	d := present.Diagnose(full, diagnosis.Options{Position: -1})
	var m []string
	for deadline := time.Now().Add(time.Minute); m == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // hang guard
		m = row.FindStringSubmatch(getPage(t, s.url("/")))
	}
	if m == nil || m[1] != txnindex.Count(d.LSOLagOffsets) || d.LSOLagOffsets == 0 {
		t.Errorf("index row: %v, want the full load's LSO lag %d", m, d.LSOLagOffsets)
	}

	ctx := startChromium(t, path)
	checkSegmentWindows(t, ctx, s, full, ov)
	if note := eval[string](t, ctx, `document.querySelector('[data-testid="segment-note"]').textContent`); !strings.Contains(note, why+", so it is drawn one segment at a time") {
		t.Errorf("segment note %q does not say %q", note, why)
	}
	screenshot(t, ctx, "TestUIPartitionDirSegments")

	// The lesson, the quiz and the embedded lesson are not offered: each
	// says why and links to the segment view.
	last := ov.Segments[len(ov.Segments)-1]
	for _, u := range []string{"/lessons/load1/bench/0", "/lessons/load1/bench/0?quiz=1", "/embed/load1/bench/0?step=1"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url(u)), pollFresh(`!!document.querySelector('[data-testid="unavailable-link"]')`, 20*time.Second)); err != nil {
			t.Errorf("%s: no page that says why the lesson is not offered: %v", u, err)
			continue
		}
		if got := eval[string](t, ctx, `document.querySelector('[data-testid="unavailable-why"]').textContent`); !strings.Contains(got, why) || !strings.Contains(got, "from its first batch") {
			t.Errorf("%s says %q, not why (%q)", u, got, why)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="unavailable-link"]`)),
			pollFresh(fmt.Sprintf(`location.search.includes("segment=%d") && !!document.querySelector('[data-testid="segment-note"]')`, last.BaseOffset), 20*time.Second)); err != nil {
			t.Errorf("%s: its link does not open the segment view: %v", u, err)
		}
	}

	// The plain embed shows the last segment's window, streamed as the
	// page's is.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url("/embed/load1/bench/0")), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if q := eval[string](t, ctx, `location.search`); !strings.Contains(q, fmt.Sprintf("segment=%d", last.BaseOffset)) {
		t.Errorf("embed at %q, not the last segment's window", q)
	}
	tl := `document.querySelector('[data-testid="timeline"]')`
	ws, batches := eval[string](t, ctx, tl+`.dataset.ws`), eval[string](t, ctx, tl+`.dataset.batches`)
	page := getPage(t, s.url(fmt.Sprintf("/sources/load1/partitions/bench/0?segment=%d&from=%d&to=%d", last.BaseOffset, last.BaseOffset, last.NextOffset)))
	if !strings.HasSuffix(ws, fmt.Sprintf("?segment=%d", last.BaseOffset)) || !strings.Contains(page, `data-batches="`+batches+`"`) {
		t.Errorf("embed streams %q with %s batches; the page of the window has %v", ws, batches, dataBatches.FindStringSubmatch(page))
	}
}

// dataBatches is the timeline's batch count in a page.
var dataBatches = regexp.MustCompile(`data-batches="(\d+)"`)
