package main

import (
	"html"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/logindex"
	"github.com/txnscope/txnscope/txnindex"
)

// lazyJoinPage serves dir as a lazy log directory whose join reads at most
// joinBytes (0: the default) and returns orders-0's page.
func lazyJoinPage(t *testing.T, dir string, joinBytes int64) string {
	t.Helper()
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	x.JoinBytes = joinBytes
	cat := &catalog{}
	cat.addLogDir("load1", x, logindex.Limits{})
	srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat})))
	t.Cleanup(srv.Close)
	return getPage(t, srv.URL+"/sources/load1/partitions/orders/0")
}

// testidText is the text of the element with data-testid id in page.
func testidText(page, id string) string {
	m := regexp.MustCompile(`data-testid="` + regexp.QuoteMeta(id) + `"[^>]*>([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(html.UnescapeString(m[1]))
}

// TestLazyDiagnosisJoin (issue 21): a partition page of a lazily loaded
// log dir joins the directory's __transaction_state and __consumer_offsets
// as the eager load does (TestDiagnosisPanelJoin): the pinning
// transaction's transactional id and coordinator state, the groups it
// holds up. With a bound on what the join reads that leaves internal
// partitions out, the panel says the join is partial, and a producer id
// not found is not called "no transactional id".
func TestLazyDiagnosisJoin(t *testing.T) {
	dir := writeJoinLogDir(t, txnindex.TopicPartition{Topic: "orders", Partition: 1})
	page := lazyJoinPage(t, dir, 0)
	for id, want := range map[string]string{
		"pinned-state":             "hanging",
		"pinned-transactional-id":  "zombie-tx",
		"pinned-coordinator-state": "Ongoing",
		"pinned-hanging-rule":      txnindex.RuleWords(txnindex.RulePartitionNotListed),
	} {
		if got := testidText(page, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	for _, g := range []string{`data-testid="group-orders-app" data-group="orders-app" data-committed="3" data-affected="true" data-blocked="true"`,
		`data-testid="group-audit" data-group="audit" data-committed="0" data-affected="true" data-blocked="false"`,
		`data-testid="group-late-reader" data-group="late-reader" data-committed="9" data-affected="false"`} {
		if !strings.Contains(page, g) {
			t.Errorf("the panel lacks the group row %s", g)
		}
	}
	if strings.Contains(page, `data-testid="join-note"`) || !strings.Contains(testidText(page, "groups-source"), "__consumer_offsets") {
		t.Errorf("a complete join: note %q, source %q", testidText(page, "join-note"), testidText(page, "groups-source"))
	}

	// Half the internal topics' bytes: the smaller partitions whole, the
	// others not read.
	var total int64
	logs, _ := filepath.Glob(filepath.Join(dir, "__*", "*.log"))
	for _, f := range logs {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	page = lazyJoinPage(t, writeJoinLogDir(t, txnindex.TopicPartition{Topic: "orders", Partition: 1}), total/2)
	if !strings.Contains(page, `data-testid="join-note"`) || !strings.Contains(page, "not read") || !strings.Contains(page, "Partial join") {
		t.Errorf("a join within half the bytes does not say it is partial:\n%s", testidText(page, "pinned-reason"))
	}
	if testidText(page, "pinned-hanging-rule") == txnindex.RuleWords(txnindex.RuleNoTransactionalID) {
		t.Errorf("a partial join calls the producer id's transactional id absent")
	}
}
