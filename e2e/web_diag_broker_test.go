package e2e

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// loadShape is the Options change that serves the log dir, opened, as
// source id (browser's set).
func loadShape(t *testing.T, id, dir string) func(*server.Options) {
	t.Helper()
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return opened(id, dir, ld)
}

// ordersOf is source id's partition orders-0.
func ordersOf(t *testing.T, cat *catalog, id string) *source {
	t.Helper()
	s := cat.find(id, "orders", 0)
	if s == nil {
		t.Fatalf("%s: orders-0 not loaded", id)
	}
	return s
}

// shotToTemp writes a screenshot of the page to a directory under the
// system's temporary one (never into the repository) and logs where.
func shotToTemp(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	dir := filepath.Join(os.TempDir(), "txnscope-shots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// TestDiagnosisPanelRunningBroker: the page of a partition whose only
// producer snapshot sits at the log start shows the running broker's
// answer (STUCK at 500, pinned by producer 8001 from offset 120) and,
// beside it, what the next restart changes; the diagnosis API says the
// same.
func TestDiagnosisPanelRunningBroker(t *testing.T) {
	ctx, srv, cat := browser(t, false, loadShape(t, "restart1", testfixture.AtLogStartDir(t, false)))
	s := ordersOf(t, cat, "restart1")
	var one struct {
		LastStableOffset int64 `json:"last_stable_offset"`
		AfterRestart     *struct {
			LastStableOffset int64 `json:"last_stable_offset"`
		} `json:"after_restart"`
	}
	getJSONInto(t, srv.URL+"/api/v1/sources/restart1/partitions/orders/0/diagnosis", &one)
	if one.LastStableOffset != 500 || one.AfterRestart == nil || one.AfterRestart.LastStableOffset != 620 {
		t.Errorf("diagnosis API: LSO %d, after restart %+v", one.LastStableOffset, one.AfterRestart)
	}
	page := getPage(t, timelineURL(srv, s))
	for _, want := range []string{`data-testid="after-restart"`, `data-lso-now="500"`, `data-lso-after="620"`, "truncateAndReload"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="after-restart"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid="diagnosis-verdict"]`:        "STUCK",
		`[data-testid="diag-lso"]`:                 "500",
		`[data-testid="after-restart-now"]`:        "500",
		`[data-testid="after-restart-after"]`:      "620",
		`[data-testid="discard-count"]`:            "0 records",
		`[data-testid="diag-txn-8001-120"] td.num`: "from 120 (its data deleted)",
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="abort-command"]`); !strings.HasSuffix(got, "abort --topic orders --partition 0 --start-offset 120") {
		t.Errorf("abort command %q", got)
	}
	if got := text(t, ctx, `[data-testid="after-restart-text"]`); !strings.Contains(got, "forgets the transaction without writing a marker") {
		t.Errorf("after restart: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelRunningBroker")
	shotToTemp(t, ctx, "TestDiagnosisPanelRunningBroker")
}

// TestDiagnosisPanelLateAndPrepared: the panel of a late transaction no
// coordinator evidence decided says so, and offers the command that asks
// the coordinator (with the bootstrap guard); the panel of one prepared
// for a two-phase commit (KIP-939) says prepared, offers no such command
// and says what aborting it breaks above the abort command.
func TestDiagnosisPanelLateAndPrepared(t *testing.T) {
	lateDir, _ := testfixture.WriteLateLogDir(t)
	prepDir, _ := testfixture.WriteLateLogDir(t, testfixture.ZombieState(txnindex.TxnStatusOngoing, math.MaxInt32, txnindex.TopicPartition{Topic: "orders", Partition: 0}))
	ctx, srv, cat := browser(t, false, loadShape(t, "late1", lateDir), loadShape(t, "prep1", prepDir))
	late, prep := ordersOf(t, cat, "late1"), ordersOf(t, cat, "prep1")

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, late)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm-command"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(text(t, ctx, `[data-testid="pinned-state"]`)); got != "late, hanging not confirmed" {
		t.Errorf("late: state %q", got)
	}
	const find = `kafka-transactions.sh --bootstrap-server "$BOOTSTRAP" find-hanging --topic orders --partition 0`
	if got := text(t, ctx, `[data-testid="confirm-command"]`); got != present.BootstrapGuard+"\n"+find {
		t.Errorf("confirm command %q", got)
	}
	if got := text(t, ctx, `[data-testid="confirm-hanging"]`); !strings.Contains(got, "Not confirmed") || !strings.Contains(got, "no coordinator state was read") {
		t.Errorf("confirm text %q", got)
	}
	// The bootstrap field puts the address into it, as into the others.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="bootstrap"]`), "kafka-1:9092"),
		pollFresh(`document.querySelector('[data-testid="confirm-command"]').textContent.startsWith("kafka-transactions.sh --bootstrap-server kafka-1:9092 find-hanging")`, 5*time.Second)); err != nil {
		t.Errorf("the bootstrap field did not reach the confirm command: %v (%q)", err, text(t, ctx, `[data-testid="confirm-command"]`))
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="abort-breaks"]').length`); n != 0 {
		t.Errorf("late: %d abort warnings", n)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelLate")
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	shotToTemp(t, ctx, "TestDiagnosisPanelLate")

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, prep)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="abort-breaks"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(text(t, ctx, `[data-testid="pinned-state"]`)); got != "prepared, waiting for its external transaction manager" {
		t.Errorf("prepared: state %q", got)
	}
	if got := text(t, ctx, `[data-testid="abort-breaks"]`); !strings.Contains(got, "breaks the two-phase commit") {
		t.Errorf("abort breaks %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="confirm-command"]').length`); n != 0 {
		t.Errorf("prepared: %d confirm commands", n)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelPrepared")
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	shotToTemp(t, ctx, "TestDiagnosisPanelPrepared")
}

// TestDiagnosisPanelOffsetsUnknown: the page of a __cluster_metadata-0
// holding only snapshots and index files says its offsets are unknown
// (no 0s, no -1s) and lists what the snapshots show; the diagnosis API
// gives -1 with the reason.
func TestDiagnosisPanelOffsetsUnknown(t *testing.T) {
	dir := testfixture.WriteMetadataOnlyDir(t)
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("meta", dir, ld))
	s := cat.find("meta", "__cluster_metadata", 0)
	if s == nil {
		t.Fatal("__cluster_metadata-0 not loaded")
	}
	var api struct {
		HWM            int64 `json:"high_watermark"`
		OffsetsUnknown *struct {
			Evidence []string `json:"evidence"`
		} `json:"offsets_unknown"`
	}
	getJSONInto(t, srv.URL+"/api/v1/sources/meta/partitions/__cluster_metadata/0/diagnosis", &api)
	if api.HWM != -1 || api.OffsetsUnknown == nil || len(api.OffsetsUnknown.Evidence) != 3 {
		t.Errorf("diagnosis API: %+v", api)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="offsets-unknown"]`))); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid="diag-lso"]`:                "unknown",
		`[data-testid="diag-hwm"]`:                "unknown",
		`[data-testid="diag-lag-offsets"]`:        "unknown",
		`[data-testid="summary-offsets-unknown"]`: "unknown: no .log segment",
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="offsets-unknown"]`); !strings.Contains(got, "up to offset 60,500") || !strings.Contains(got, "66,046") {
		t.Errorf("offsets unknown: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="summary-hwm"], [data-testid="summary-log-end"]').length`); n != 0 {
		t.Errorf("the summary still prints %d offsets", n)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelOffsetsUnknown")
	shotToTemp(t, ctx, "TestDiagnosisPanelOffsetsUnknown")
}

// TestDiagnosisPanelTopicField: a segment loaded alone has no topic: its
// commands name "$TOPIC" after the guard line (after the bootstrap one),
// the panel has a topic field, and a name typed there goes into every
// command and what its button copies, as the bootstrap does.
func TestDiagnosisPanelTopicField(t *testing.T) {
	b, err := os.ReadFile(testfixture.OpenTxnSegment(t))
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "00000000000000000000.log")
	testfixture.WriteFile(t, bare, b)
	ld, err := input.Open(bare)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("bare1", bare, ld))
	s := cat.find("bare1", "00000000000000000000", 0)
	if s == nil {
		t.Fatal("the segment was not loaded")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="topic-name"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	const abort = `kafka-transactions.sh --bootstrap-server "$BOOTSTRAP" abort --topic "$TOPIC" --partition 0 --start-offset 3`
	if got := text(t, ctx, `[data-testid="abort-command"]`); got != present.BootstrapGuard+"\n"+present.TopicGuard+"\n"+abort {
		t.Errorf("abort command before a topic:\n%s", got)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="topic-name"]`), "orders"),
		pollFresh(`document.querySelector('[data-testid="abort-command"]').textContent.includes("--topic orders ")`, 5*time.Second)); err != nil {
		t.Fatalf("the topic field did not reach the command: %v", err)
	}
	want := present.BootstrapGuard + "\n" + strings.ReplaceAll(abort, present.TopicVar, "orders")
	if got := text(t, ctx, `[data-testid="abort-command"]`); got != want {
		t.Errorf("abort command with the topic:\n%s\nwant\n%s", got, want)
	}
	copies := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="diagnosis"] button.copy')].map(b => b.dataset.copy)`)
	for _, c := range copies {
		if strings.Contains(c, "$TOPIC") || strings.Contains(c, "00000000000000000000") {
			t.Errorf("a copy button copies %q", c)
		}
	}
	if u := eval[string](t, ctx, `new URL(location.href).searchParams.get("topic_name")`); u != "orders" {
		t.Errorf("link's topic %q", u)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelTopicField")
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	shotToTemp(t, ctx, "TestDiagnosisPanelTopicField")
}

// TestDiagnosisPanelTiered: the page of a follower rebuilt from remote
// storage (KIP-405) gives the broker's LSO, 7,930, below the first local
// offset, and says the pinning transaction began in remote storage; the
// diagnosis API carries the evidence.
func TestDiagnosisPanelTiered(t *testing.T) {
	ctx, srv, cat := browser(t, false, loadShape(t, "tiered1", testfixture.TieredDir(t, true, [][2]int64{{7, 8000}})))
	s := ordersOf(t, cat, "tiered1")
	var api struct {
		LogStart int64 `json:"log_start_offset"`
		LSO      int64 `json:"last_stable_offset"`
		Tiered   *struct {
			Evidence []string `json:"evidence"`
		} `json:"tiered_storage"`
	}
	getJSONInto(t, srv.URL+"/api/v1/sources/tiered1/partitions/orders/0/diagnosis", &api)
	if api.LogStart != 5000 || api.LSO != 7930 || api.Tiered == nil || len(api.Tiered.Evidence) != 2 {
		t.Errorf("diagnosis API: %+v", api)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="pinned-by"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{`[data-testid="diag-lso"]`: "7930", `[data-testid="summary-log-start"]`: "5000", `[data-testid="summary-local-start"]`: "8000"} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="pinned-by"]`); !strings.Contains(got, "in remote storage") || strings.Contains(got, "deleted by retention") {
		t.Errorf("pinned by: %q", got)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelTiered")
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	shotToTemp(t, ctx, "TestDiagnosisPanelTiered")
}
