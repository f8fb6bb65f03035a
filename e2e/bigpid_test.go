package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/internal/testtool"
	loadinput "github.com/txnscope/txnscope/loader/input"
)

// bigPID is a producer id past 2^53 (kfake hands out such ids): as a
// double it is 8070450532247929000.
const bigPID = 8070450532247928875

// bigPIDDir is a log dir holding big-0: an aborted transaction of bigPID
// (0-2), a committed one (3-5) and an open one (6-7) that pins the LSO.
func bigPIDDir(t *testing.T) string {
	now := time.Now().UnixMilli()
	return testfixture.WriteShapeDir(t, "big", 0, 8, []testfixture.Batch{
		{Base: 0, PID: bigPID, Epoch: 0, Txn: true, Ctrl: -1, N: 2, TS: now - 90_000},
		{Base: 2, PID: bigPID, Epoch: 0, Txn: true, Ctrl: 0, TS: now - 90_000},
		{Base: 3, PID: bigPID, Epoch: 0, Txn: true, Ctrl: -1, N: 2, TS: now - 60_000},
		{Base: 5, PID: bigPID, Epoch: 0, Txn: true, Ctrl: 1, TS: now - 60_000},
		{Base: 6, PID: bigPID, Epoch: 0, Txn: true, Ctrl: -1, N: 2, TS: now - 30_000},
	}, 0, nil)
}

// TestBigProducerID: with a producer id past 2^53, every JSON output
// carries it as a number with its exact digits in producer_id_str (decide
// NDJSON, diagnose JSON, the batch API), and the page shows the exact
// digits (the open-transaction flag, the pinned highlight, the detail
// panel), where JSON.parse alone gives …929000.
func TestBigProducerID(t *testing.T) {
	dir := bigPIDDir(t)
	const digits = "8070450532247928875"
	twin := `"producer_id_str":"` + digits + `"`

	code, out, errOut := runArgs(t, "decide", "--format", "ndjson", dir)
	if code != 0 || strings.Count(out, `"producer_id":`+digits+`,`+twin) != 8 {
		t.Errorf("decide: code %d %s\n%s", code, errOut, out)
	}
	code, out, _ = runArgs(t, "diagnose", "--format", "json", dir)
	var diag struct {
		Partitions []struct {
			PinnedBy *struct {
				ProducerID    json.Number `json:"producer_id"`
				ProducerIDStr string      `json:"producer_id_str"`
			} `json:"pinned_by"`
		} `json:"partitions"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&diag); err != nil || len(diag.Partitions) != 1 || diag.Partitions[0].PinnedBy == nil ||
		diag.Partitions[0].PinnedBy.ProducerID != digits || diag.Partitions[0].PinnedBy.ProducerIDStr != digits {
		t.Errorf("diagnose: code %d, %v:\n%s", code, err, out)
	}

	ld, err := loadinput.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("bigpid", dir, ld))
	s := cat.find("bigpid", "big", 0)
	if s == nil {
		t.Fatal("big-0 not loaded")
	}
	var b api.BatchJSON
	_, body := get(t, srv.URL+"/api/v1/sources/bigpid/partitions/big/0/batches/3")
	if err := json.Unmarshal([]byte(body), &b); err != nil || b.ProducerID != bigPID || !strings.Contains(string(body), twin) {
		t.Errorf("batch API: %v, producer %d:\n%s", err, b.ProducerID, body)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="open-txn-`+digits+`-6"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="open-txn-`+digits+`-6"]`); !strings.Contains(got, "producer "+digits+" ") {
		t.Errorf("open transaction flag %q", got)
	}
	if got, _ := attr(ctx, `[data-testid="pinned-highlight"]`, "title"); !strings.Contains(got, "producer "+digits+"'s") {
		t.Errorf("pinned highlight title %q", got)
	}
	x, y := hoverOffset(t, ctx, 7)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-reason"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="detail"]`); !strings.Contains(got, digits) || strings.Contains(got, "929000") {
		t.Errorf("detail panel does not show %s:\n%s", digits, got)
	}
}

// TestREADMEJqRecipes runs every `txnscope … | jq …` line of docs/cli.md
// (its JSON output section) with jq 1.6 (/usr/bin/jq here) over the output
// of the command for bigPIDDir plus a compacted partition: each exits 0, prints something,
// and never prints a producer id rounded to a double.
func TestREADMEJqRecipes(t *testing.T) {
	jq := testtool.Need(t, "jq")
	readme, err := os.ReadFile(filepath.Join("..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := bigPIDDir(t)
	// A compacted batch (records at 0, 3, 7 of 10-19) for the gap recipe.
	pdir := filepath.Join(dir, "compacted-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "00000000000000000010.log"), testfixture.HoledBatch(10, 9, 0, 3, 7), 0o644); err != nil {
		t.Fatal(err)
	}
	const twinOf = `"producer_id_str":"8070450532247928875"`
	recipes := regexp.MustCompile(`(?m)^txnscope ([^|\n]+) \| (jq .*)$`).FindAllStringSubmatch(string(readme), -1)
	if len(recipes) < 4 {
		t.Fatalf("%d jq recipes in docs/cli.md", len(recipes))
	}
	for _, r := range recipes {
		args := strings.Fields(r[1])
		args[len(args)-1] = dir // the recipe's PATH (a capture, a partition)
		code, out, errOut := runArgs(t, args...)
		if code != 0 && code != 3 { // 3: diagnose found a hanging transaction
			t.Errorf("%s: code %d: %s", r[1], code, errOut)
			continue
		}
		cmd := exec.Command("bash", "-c", r[2])
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(jq)+":"+os.Getenv("PATH"))
		cmd.Stdin = strings.NewReader(out)
		got, err := cmd.CombinedOutput()
		t.Logf("%s | %s:\n%s", r[1], r[2], got)
		// jq 1.6 rounds the number it re-encodes; the twin beside it is exact.
		rounded := strings.Contains(string(got), "8070450532247929000") && !strings.Contains(string(got), twinOf)
		if err != nil || len(got) == 0 || rounded || strings.Contains(string(got), "e+18") {
			t.Errorf("%s | %s: %v:\n%s", r[1], r[2], err, got)
		}
	}
}
