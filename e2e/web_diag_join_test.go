package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnosisPanelJoin loads a log dir holding __transaction_state and
// __consumer_offsets (testfixture.WriteJoinLogDir: zombie-tx's coordinator moved on to
// orders-1) as `serve --load` does: the panel names the transactional id,
// the coordinator state and the KIP-664 rule, and lists the consumer
// groups, the blocked one marked, the read_uncommitted one not affected.
func TestDiagnosisPanelJoin(t *testing.T) {
	dir := testfixture.WriteJoinLogDir(t, txnindex.TopicPartition{Topic: "orders", Partition: 1})
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("load1", dir, ld))
	s := cat.find("load1", "orders", 0)
	if s == nil {
		t.Fatal("orders-0 not loaded")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="consumer-groups"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid="pinned-state"]`:             "hanging",
		`[data-testid="pinned-transactional-id"]`:  "zombie-tx",
		`[data-testid="pinned-coordinator-state"]`: "Ongoing",
		`[data-testid="pinned-hanging-rule"]`:      present.RuleWords(txnindex.RulePartitionNotListed),
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	rows := eval[[]map[string]string](t, ctx, `[...document.querySelectorAll('[data-testid="consumer-groups"] tbody tr')].map(r => Object.assign({}, r.dataset))`)
	var got []string
	for _, r := range rows {
		got = append(got, r["group"]+"@"+r["committed"]+" affected="+r["affected"]+" blocked="+r["blocked"])
	}
	want := []string{"audit@0 affected=true blocked=false", "orders-app@3 affected=true blocked=true", "late-reader@9 affected=false blocked=false"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("group rows %q, want %q", got, want)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelJoin")
	screenshot(t, ctx, "TestDiagnosisPanelJoin")
}
