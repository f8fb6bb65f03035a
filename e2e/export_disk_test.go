package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/cli"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// writeStuckPartition writes a log dir holding orders-0 with about n
// batches: five transactional producers interleaved, each committing or
// aborting every few batches, and producer 9's transaction left open near
// the end (it pins the LSO), its last write an hour before now.
func writeStuckPartition(t *testing.T, n int, now time.Time) string {
	t.Helper()
	ts := now.Add(-2 * time.Hour).UnixMilli()
	var bs []testfixture.Batch
	off := int64(0)
	open := map[int64]int{}
	for i := 0; len(bs) < n; i++ {
		if len(bs) == n*9/10 {
			bs = append(bs, testfixture.Batch{Base: off, PID: 9, Txn: true, Ctrl: -1, N: 4, TS: now.Add(-time.Hour).UnixMilli()})
			off += 4
		}
		pid := int64(1 + i%5)
		if open[pid] == 3 {
			ctrl := 1
			if (i/5)%4 == 3 {
				ctrl = 0
			}
			bs = append(bs, testfixture.Batch{Base: off, PID: pid, Txn: true, Ctrl: ctrl, TS: ts, Coord: 1})
			off++
			open[pid] = 0
			continue
		}
		bs = append(bs, testfixture.Batch{Base: off, PID: pid, Txn: true, Ctrl: -1, N: 10, TS: ts})
		off += 10
		open[pid]++
		ts += 100
	}
	return testfixture.WriteSegsDir(t, "orders", 0, off, -1, []testfixture.Seg{{Batches: bs}})
}

// exportDiskBytesPerBatch bounds an export of a partition read from disk:
// every batch's detail inlined made 14.5 MB of 3,646 batches (4 KB a
// batch); the reasons of every batch, the details of ExportDetailBatches
// and a shorter lesson make about 1 KB a batch.
const exportDiskBytesPerBatch = 1100

// exportDisk writes a stuck partition of n batches and exports it, the
// clock at now; it returns the file and what export printed.
func exportDisk(t *testing.T, n int, now time.Time) (string, string) {
	t.Helper()
	dir := writeStuckPartition(t, n, now)
	out := filepath.Join(t.TempDir(), "orders.html")
	var so, se bytes.Buffer
	if code := cli.Run(context.Background(), []string{"export", dir, "--now", now.Format(time.RFC3339), "--out", out}, &so, &se); code != exitOK {
		t.Fatalf("export: exit %d: %s%s", code, so.String(), se.String())
	}
	return out, so.String()
}

// TestExportDiskSize exports a stuck partition of 3,600 batches and
// checks the file's size per batch against exportDiskBytesPerBatch, and
// that export says the size and what the file leaves out.
func TestExportDiskSize(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	const n = 3600
	out, said := exportDisk(t, n, now)
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if per := fi.Size() / n; per > exportDiskBytesPerBatch {
		t.Errorf("the export of %d batches is %d bytes, %d a batch; want at most %d", n, fi.Size(), per, exportDiskBytesPerBatch)
	}
	for _, want := range []string{txnindex.Bytes(fi.Size()), txnindex.Plural(int(fi.Size()), "byte", "bytes"),
		"details of 300 of the 3,600 batches", "txnscope serve"} {
		if !strings.Contains(said, want) {
			t.Errorf("export said %q, without %q", said, want)
		}
	}
}

// TestExportDiskStuck opens the export of a stuck partition read from disk
// from file:// and reads it as a person would: the subtitle says what
// the partition is, from where (the load's base name) and when; the
// diagnosis comes before the lesson and the timeline; a batch outside the
// inlined details says what to run; the page logs no error.
func TestExportDiskStuck(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	out, _ := exportDisk(t, 3600, now)
	ctx, _, _ := browser(t, false)
	errs := pageErrors(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+out), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(text(t, ctx, `[data-testid="source-title"]`)); !regexp.MustCompile(`^orders-0 from [^/ ]+ \(log directory\), exported 2026-12-06$`).MatchString(got) {
		t.Errorf("subtitle %q", got)
	}
	if n := text(t, ctx, `[data-testid="export-note"]`); !strings.HasPrefix(n, "Note: this export holds the details of 300 of the 3,600 batches") {
		t.Errorf("export note %q", n)
	}
	order := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="summary"], [data-testid="diagnosis"], [data-testid="lesson"], [data-testid="timeline"]')].map((e) => e.dataset.testid)`)
	if strings.Join(order, " ") != "summary diagnosis lesson timeline" {
		t.Errorf("document order %v, want the diagnosis first after the summary", order)
	}
	if d := text(t, ctx, `[data-testid="diagnosis"]`); !strings.Contains(d, "producer 9") {
		t.Errorf("the diagnosis does not name producer 9: %q", d)
	}
	tempScreenshot(t, ctx, "TestExportDiskStuck")
	// Offset 0 is far below the LSO: its detail is not inlined.
	chromedp.Do(ctx, js(`document.querySelector('[data-testid="timeline"]').scrollIntoView({block: "center"})`))
	x, y := hoverOffset(t, ctx, 0)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.Poll[chromedp.Void](`!document.querySelector('[data-testid="detail"]').hidden`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	if d := text(t, ctx, `[data-testid="detail"]`); !strings.Contains(d, "details of 300 of the 3,600 batches") || !strings.Contains(d, "txnscope serve") {
		t.Errorf("detail of offset 0: %q", d)
	}
	tempScreenshot(t, ctx, "TestExportDiskStuck-detail")
	for _, e := range errs() {
		t.Errorf("page error: %s", e)
	}
}
