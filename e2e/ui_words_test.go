package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/testtool"
)

// copyTexts is what every copy button of the page would copy.
const copyTexts = `[...document.querySelectorAll('button.copy')].map((b) => b.dataset.copy)`

// bashN fails the test unless bash parses text (bash -n): no placeholder
// that bash reads as a redirection, no unbalanced quote.
func bashN(t *testing.T, bash, what, text string) {
	t.Helper()
	cmd := exec.Command(bash, "-n")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: bash -n: %v\n%s\n%s", what, err, out, text)
	}
}

// TestUICopyButtonsRunInBash opens every demo: the text each copy button
// copies parses under bash -n, and runs: while no bootstrap is set it
// stops at its guard line naming BOOTSTRAP; once the bootstrap field is
// filled (with an address a shell would split), the commands carry it as
// one word, the link and local storage remember it, and a new page of the
// same browser starts with it.
func TestUICopyButtonsRunInBash(t *testing.T) {
	bash := testtool.Need(t, "bash")
	ctx, srv, cat := browser(t, false)
	// Stub kafka-transactions.sh and kcat that print the bootstrap they
	// were given, so that the copied commands can be run here.
	bin := t.TempDir()
	for name, flag := range map[string]string{"kafka-transactions.sh": "--bootstrap-server", "kcat": "-b"} {
		stub := fmt.Sprintf("#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = %q ]; then printf 'BOOT<%%s>\\n' \"$2\"; fi; shift; done\n", flag)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(text string, env ...string) (string, error) {
		cmd := exec.Command(bash, "-c", text)
		cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin"}, env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	buttons := 0
	for _, s := range cat.list() {
		if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
			t.Fatal(err)
		}
		for i, text := range eval[[]string](t, ctx, copyTexts) {
			buttons++
			what := fmt.Sprintf("%s button %d", s.id, i)
			bashN(t, bash, what, text)
			if !strings.Contains(text, `"$BOOTSTRAP"`) || strings.Contains(text, "<") {
				t.Errorf("%s: %q, want the $BOOTSTRAP variable and no placeholder", what, text)
			}
			if out, err := run(text); err == nil || !strings.Contains(out, "set BOOTSTRAP") || strings.Contains(out, "BOOT<") {
				t.Errorf("%s without BOOTSTRAP: %v, %q; want it stopped by the guard line", what, err, out)
			}
			if out, err := run(text, "BOOTSTRAP=k1:9092"); err != nil || !strings.Contains(out, "BOOT<k1:9092>") {
				t.Errorf("%s with BOOTSTRAP set: %v, %q", what, err, out)
			}
		}
	}
	if buttons == 0 {
		t.Fatal("no copy button on any demo page")
	}

	// The field: an address with a space, a quote and a command
	// substitution stays one word and runs nothing.
	s := cat.find("stuck-lso", "demo-stuck-lso", 0)
	const boot = `k1:9092, k2:9092 $(touch pwned) 'x'`
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="bootstrap"]`)), waitDone(1),
		js(fmt.Sprintf(`(() => { const f = document.querySelector('[data-testid="bootstrap"]'); f.value = %q; f.dispatchEvent(new Event("input", {bubbles: true})); })()`, boot)),
		// The commands come from the server, quoted there.
		chromedp.Poll[chromedp.Void](`window.txnscopeDiagnosis.commandUpdates() === 1`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	texts := eval[[]string](t, ctx, copyTexts)
	dir := t.TempDir()
	for i, text := range texts {
		bashN(t, bash, fmt.Sprintf("button %d with the field set", i), text)
		cmd := exec.Command(bash, "-c", text)
		cmd.Dir, cmd.Env = dir, []string{"PATH=" + bin + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "BOOT<"+boot+">" {
			t.Errorf("button %d: %v, %q; want the bootstrap as one word", i, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a copied command ran the substitution in the bootstrap")
	}
	// The abort command's box shows what its button copies (the demo's
	// transaction is late: the find-hanging command comes first).
	if got, copied := eval[string](t, ctx, `document.querySelector('[data-testid="abort-command"]').textContent`),
		eval[string](t, ctx, `document.querySelector('[data-testid="copy-abort-command"]').dataset.copy`); got != copied {
		t.Errorf("the code box shows %q, the button copies %q", got, copied)
	}
	if u := eval[string](t, ctx, `new URL(location.href).searchParams.get("bootstrap")`); u != boot {
		t.Errorf("link's bootstrap %q", u)
	}
	screenshot(t, ctx, "TestUICopyButtonsRunInBash")
	// A new page without ?bootstrap= takes it from local storage; a
	// position change, which refreshes the panel, keeps it.
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="bootstrap"]`)), waitDone(1),
		js(`window.txnscopeDiagnosis.refresh(4)`),
		chromedp.Poll[chromedp.Void](`window.txnscopeDiagnosis.refreshes() === 1`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="bootstrap"]').value`); got != boot {
		t.Errorf("a new page's field %q, want %q from local storage", got, boot)
	}
	if got := eval[[]string](t, ctx, copyTexts); strings.Join(got, "\n") != strings.Join(texts, "\n") {
		t.Errorf("after a refresh the buttons copy %q, want %q", got, texts)
	}
}

// rawIdentifier is a snake_case machine name (aborted_transaction,
// at_or_above_lso, before_position) or a -1 offset printed as a number
// (alone, or as the end of a range: "120–-1").
var rawIdentifier = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|(?:fetch offset|from=?)\s*-1\b|–-1\b`)

// kafkaWords are Kafka's own names a person types: the isolation levels.
var kafkaWords = map[string]bool{"read_committed": true, "read_uncommitted": true}

// TestUINoRawIdentifiers scans the text a person reads on every demo page
// (text nodes, tooltips, the batch list, a batch's detail panel, outside
// the commands' code boxes) for machine names and -1 offsets.
func TestUINoRawIdentifiers(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	for _, s := range cat.list() {
		if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diagnosis"]`)), waitDone(1)); err != nil {
			t.Fatal(err)
		}
		// Open the detail of a batch (an aborted one when there is one)
		// through the deep link: its header, location and transaction.
		sel := eval[string](t, ctx, `(() => { const li = document.querySelector('[data-testid="batch-list"] [data-decision="aborted"]') || document.querySelector('[data-testid="batch-list"] li'); return li ? li.dataset.testid.slice(6) : ""; })()`)
		if sel != "" {
			if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?sel="+sel), waitDone(1),
				pollFresh(`(() => { const d = document.querySelector('[data-testid="detail"]'); return d && !d.hidden && d.querySelector("table"); })()`, 10*time.Second)); err != nil {
				t.Fatalf("%s: detail of %s: %v", s.id, sel, err)
			}
		}
		noRawIdentifiers(t, ctx, s.id)
	}
}

// noRawIdentifiers fails t when the text a person reads on the current
// page (text nodes, titles, aria-labels; commands' code boxes exempt)
// holds a snake_case machine name (a verdict, cause, state or KIP-664
// rule) or a -1 offset.
func noRawIdentifiers(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	const scan = `(() => {
	  const out = [];
	  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	  for (let n = w.nextNode(); n; n = w.nextNode()) {
	    const p = n.parentElement;
	    if (!p || p.closest("script, style, code, template, .copy-buffer")) continue;
	    out.push(n.textContent);
	  }
	  for (const e of document.querySelectorAll("[title], [aria-label]")) out.push(e.title || "", e.getAttribute("aria-label") || "");
	  return out;
	})()`
	found := map[string]bool{}
	for _, txt := range eval[[]string](t, ctx, scan) {
		for _, m := range rawIdentifier.FindAllString(txt, -1) {
			if !kafkaWords[m] {
				found[m] = true
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("%s: raw identifiers on the page: %v", page, found)
	}
}
