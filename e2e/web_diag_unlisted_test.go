package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestDiagnosisPanelUnlistedAborted: a log directory built from the
// interleaved demo, its partition's .txnindex removed while the .index
// stays, as a copy that left the file out would be. The broker lists no
// aborted transaction of that segment (LogSegment.sanityCheck passes a
// missing .txnindex; nothing rebuilds it but a recovery of the segment), so
// read_committed consumers receive producer 7's aborted records: the
// diagnosis API counts them, and the panel says so in words a person reads.
func TestDiagnosisPanelUnlistedAborted(t *testing.T) {
	root, built := testfixture.WriteScenarioFile(t, filepath.Join("..", "scenario", "demos", "interleaved.txn"))
	txnIndex := filepath.Join(root, built.Dir, "00000000000000000000.txnindex")
	if err := os.Remove(txnIndex); err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, loadShape(t, "unlisted", root))
	s := cat.find("unlisted", "demo-interleaved", 0)
	if s == nil {
		t.Fatal("demo-interleaved-0 not loaded")
	}
	var d struct {
		Unlisted *struct {
			Transactions int      `json:"transactions"`
			Records      int64    `json:"records"`
			FirstOffset  int64    `json:"first_offset"`
			Missing      []string `json:"missing_files"`
		} `json:"unlisted_aborted"`
	}
	getJSONInto(t, srv.URL+"/api/v1/sources/unlisted/partitions/demo-interleaved/0/diagnosis", &d)
	if u := d.Unlisted; u == nil || u.Transactions != 1 || u.Records != 5 || u.FirstOffset != 2 || len(u.Missing) != 1 || u.Missing[0] != "00000000000000000000.txnindex" {
		t.Fatalf("diagnosis API: unlisted_aborted %+v, want producer 7's transaction: 1, 5 records from 2, the file missing", u)
	}
	// The index row says it beside the clear LSO.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="row-unlisted"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="partition-row-unlisted-demo-interleaved-0"] [data-testid="row-unlisted"]`); got != "5 aborted records delivered" {
		t.Errorf("index row: %q", got)
	}
	if got := text(t, ctx, `[data-testid="partition-row-interleaved-demo-interleaved-0"] [data-testid="row-state"]`); got != "clear" {
		t.Errorf("the interleaved demo's row: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="partition-row-interleaved-demo-interleaved-0"] [data-testid="row-unlisted"]').length`); n != 0 {
		t.Errorf("the interleaved demo, whose files list its abort, is flagged")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diag-unlisted"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	got := text(t, ctx, `[data-testid="diag-unlisted"]`)
	for _, want := range []string{"Aborted records delivered", "read_committed consumers receive 5 records of 1 aborted transaction, from offset 2 on", "00000000000000000000.txnindex does not exist"} {
		if !strings.Contains(got, want) {
			t.Errorf("panel: %q lacks %q", got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="diag-unlisted-remedy"]`); !strings.Contains(got, "move 00000000000000000000.index out of the partition directory") {
		t.Errorf("remedy: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diag-unlisted"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelUnlistedAborted")
	shotToTemp(t, ctx, "TestDiagnosisPanelUnlistedAborted")
}

// TestDiagnosisPanelRefusedTxnIndex: the interleaved demo's .txnindex with
// its entry's version byte set to 1, which Kafka's TransactionIndex
// refuses: no broker starts with the file. The index row and the panel say
// so in words, with the file, the byte and how the broker starts again;
// nothing reads it as a lost index (the decisions are the recovered
// segment's).
func TestDiagnosisPanelRefusedTxnIndex(t *testing.T) {
	root, built := testfixture.WriteScenarioFile(t, filepath.Join("..", "scenario", "demos", "interleaved.txn"))
	txnIndex := filepath.Join(root, built.Dir, "00000000000000000000.txnindex")
	raw, err := os.ReadFile(txnIndex)
	if err != nil || len(raw) == 0 {
		t.Fatalf("the demo's .txnindex: %d bytes, %v", len(raw), err)
	}
	raw[0] = 1
	if err := os.WriteFile(txnIndex, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, loadShape(t, "refused", root))
	s := cat.find("refused", "demo-interleaved", 0)
	if s == nil {
		t.Fatal("demo-interleaved-0 not loaded")
	}
	var d struct {
		Rejected []struct {
			File    string `json:"file"`
			Byte    int64  `json:"byte"`
			Version int8   `json:"version"`
		} `json:"txnindex_rejected"`
		Unlisted any `json:"unlisted_aborted"`
	}
	getJSONInto(t, srv.URL+"/api/v1/sources/refused/partitions/demo-interleaved/0/diagnosis", &d)
	if len(d.Rejected) != 1 || d.Rejected[0].File != "00000000000000000000.txnindex" || d.Rejected[0].Byte != 0 || d.Rejected[0].Version != 1 || d.Unlisted != nil {
		t.Fatalf("diagnosis API: txnindex_rejected %+v, unlisted_aborted %v", d.Rejected, d.Unlisted)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="row-rejected"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="partition-row-refused-demo-interleaved-0"] [data-testid="row-rejected"]`); got != "broker cannot load" {
		t.Errorf("index row: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diag-rejected"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	got := text(t, ctx, `[data-testid="diag-rejected"]`)
	for _, want := range []string{"The broker cannot load this partition", "00000000000000000000.txnindex (version 1 at byte 0x0) holds an entry whose version Kafka refuses", "fails to start"} {
		if !strings.Contains(got, want) {
			t.Errorf("panel: %q lacks %q", got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="diag-rejected-remedy"]`); !strings.Contains(got, "move 00000000000000000000.index out of the partition directory first") {
		t.Errorf("remedy: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="diag-unlisted"]').length`); n != 0 {
		t.Errorf("the refused file is read as a lost one")
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diag-rejected"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelRefusedTxnIndex")
	shotToTemp(t, ctx, "TestDiagnosisPanelRefusedTxnIndex")
}

// TestDiagnosisPanelRecoveryTruncation: the spanning demo with a bad CRC
// in its middle segment and a recovery point below it. The index row says
// a crash truncates the partition, and the panel says at which offset,
// what the LSO becomes and why: the ABORT marker the recovery deletes
// leaves producer 3's transaction open again.
func TestDiagnosisPanelRecoveryTruncation(t *testing.T) {
	root, built := testfixture.WriteScenarioFile(t, filepath.Join("..", "scenario", "demos", "spanning.txn"))
	seg := filepath.Join(root, built.Dir, "00000000000000000006.log")
	raw, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/3] ^= 0xff
	if err := os.WriteFile(seg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "recovery-point-offset-checkpoint"), []byte("0\n1\ndemo-spanning 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, loadShape(t, "crashed", root))
	s := cat.find("crashed", "demo-spanning", 0)
	if s == nil {
		t.Fatal("demo-spanning-0 not loaded")
	}
	var d struct {
		Truncates *struct {
			Offset           int64 `json:"offset"`
			LastStableOffset int64 `json:"last_stable_offset"`
		} `json:"recovery_truncates"`
	}
	getJSONInto(t, srv.URL+"/api/v1/sources/crashed/partitions/demo-spanning/0/diagnosis", &d)
	if d.Truncates == nil || d.Truncates.Offset != 6 || d.Truncates.LastStableOffset != 0 {
		t.Fatalf("diagnosis API: recovery_truncates %+v", d.Truncates)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="row-truncates"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="partition-row-crashed-demo-spanning-0"] [data-testid="row-truncates"]`); got != "a crash truncates it at 6" {
		t.Errorf("index row: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="recovery-truncates"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="recovery-truncates-offset"]`); got != "6" {
		t.Errorf("panel offset: %q", got)
	}
	if got := text(t, ctx, `[data-testid="recovery-truncates-lso"]`); got != "0" {
		t.Errorf("panel LSO after: %q", got)
	}
	got := text(t, ctx, `[data-testid="recovery-truncates-text"]`)
	for _, want := range []string{"00000000000000000006.log stops at byte 0x0 (bad CRC", "it deletes 00000000000000000013.log", "producer 3's transaction from offset 0 (its ABORT marker at 13)"} {
		if !strings.Contains(got, want) {
			t.Errorf("panel: %q lacks %q", got, want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="recovery-truncates"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelRecoveryTruncation")
	shotToTemp(t, ctx, "TestDiagnosisPanelRecoveryTruncation")
}
