package server

import (
	"fmt"
	"html"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario"
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
	cat := diagnosing(&catalog{})
	cat.addLogDir("load1", load.NewLogDir(x, load.Question{}, load.Budget{}))
	srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags)))
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

// TestLazyDiagnosisJoin: a partition page of a lazily loaded
// log dir joins the directory's __transaction_state and __consumer_offsets
// as the eager load does (TestDiagnosisPanelJoin): the pinning
// transaction's transactional id and coordinator state, the groups it
// holds up. With a bound on what the join reads that leaves internal
// partitions out, the panel says the join is partial, and a producer id
// not found is not called "no transactional id".
func TestLazyDiagnosisJoin(t *testing.T) {
	dir := testfixture.WriteJoinLogDir(t, txnindex.TopicPartition{Topic: "orders", Partition: 1})
	page := lazyJoinPage(t, dir, 0)
	for id, want := range map[string]string{
		"pinned-state":             "hanging",
		"pinned-transactional-id":  "zombie-tx",
		"pinned-coordinator-state": "Ongoing",
		"pinned-hanging-rule":      present.RuleWords(txnindex.RulePartitionNotListed),
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
	page = lazyJoinPage(t, testfixture.WriteJoinLogDir(t, txnindex.TopicPartition{Topic: "orders", Partition: 1}), total/2)
	if !strings.Contains(page, `data-testid="join-note"`) || !strings.Contains(page, "not read") || !strings.Contains(page, "Partial join") {
		t.Errorf("a join within half the bytes does not say it is partial:\n%s", testidText(page, "pinned-reason"))
	}
	if testidText(page, "pinned-hanging-rule") == present.RuleWords(txnindex.RuleNoTransactionalID) {
		t.Errorf("a partial join calls the producer id's transactional id absent")
	}
}

// TestLazyTailGroups: on a partition's tail (offsets before the roll not
// read), a group committed before the roll is placed behind the LSO by
// offsets only, not by a record count from the roll on (which would
// undercount, and call it blocked when nothing is left after the roll);
// the whole log, once loaded, counts its records.
func TestLazyTailGroups(t *testing.T) {
	dir := t.TempDir()
	// t0-0's transaction opens after the roll (the second stuck one is
	// opened late), at offset 32; the roll is at 18.
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 1, Stuck: []string{"t9-9", "t0-0"}}); err != nil {
		t.Fatal(err)
	}
	n := internaltopic.PartitionFor("early", internaltopic.DefaultConsumerOffsetsPartitions)
	b, err := scenario.BuildInternal(scenario.ConsumerOffsetsTopic, n, []scenario.InternalBatch{
		scenario.CoordinatorBatch(scenario.OffsetCommitRecord("early", "t0", 0, 4, 0, "", genlogdir.Start))})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := scenario.WriteLogDir(tmp, b); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s-%d", scenario.ConsumerOffsetsTopic, n)
	if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat := diagnosing(&catalog{})
	cat.addLogDir("load1", load.NewLogDir(x, load.Question{}, load.Budget{}))
	lz := cat.find("load1", "t0", 0).lazy
	lz.done, lz.began = make(chan struct{}), time.Now().Add(-tailWait)
	tail := lz.get()
	if tail.Batches[0].BaseOffset <= 4 || tail.LastStableOffset != 32 {
		t.Fatalf("tail from %d, LSO %d", tail.Batches[0].BaseOffset, tail.LastStableOffset)
	}
	group := func(l *txnindex.Log) txnindex.GroupPosition {
		d := cat.diags.Diagnose(l, diagnosis.Options{Position: -1})
		if len(d.ConsumerGroups) != 1 {
			t.Fatalf("groups %+v", d.ConsumerGroups)
		}
		return d.ConsumerGroups[0]
	}
	if g := group(tail); !g.BehindLSO || g.Blocked || g.RecordsToLSO != -1 || g.OffsetsToLSO != 28 {
		t.Errorf("on the tail: %+v, want behind by 28 offsets, records not counted, not blocked", g)
	}
	lz.load(lz.done)
	if g := group(lz.get()); !g.BehindLSO || g.Blocked || g.RecordsToLSO <= 0 {
		t.Errorf("on the whole log: %+v, want its records counted", g)
	}
}
