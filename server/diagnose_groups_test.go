package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
)

// TestDiagnosisPanelGroupKinds: the partition page of a log dir with
// groups of every kind (testfixture.WriteGroupsLogDir), loaded whole (serve --load) and
// lazily (a log dir served partition by partition, the join read apart):
// the panel counts the groups of each kind and those held up, names each
// group's kind in words, lists the share groups against the LSO by their
// isolation level, and says what was skipped.
func TestDiagnosisPanelGroupKinds(t *testing.T) {
	for _, withMetadata := range []bool{true, false} {
		dir := testfixture.WriteGroupsLogDir(t, withMetadata)
		ld, err := input.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		cat := diagnosing(&catalog{})
		cat.add("load1", dir, ld)
		srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags)))
		t.Cleanup(srv.Close)
		rc := `data-testid="share-group-share-rc" data-group="share-rc" data-start="3" data-isolation="read_committed" data-held="true" data-blocked="true"`
		if !withMetadata {
			rc = `data-testid="share-group-share-rc" data-group="share-rc" data-start="3" data-isolation="unknown" data-held="true" data-blocked="false"`
		}
		for name, page := range map[string]string{
			"eager": getPage(t, srv.URL+"/sources/load1/partitions/orders/0"),
			"lazy":  lazyJoinPage(t, dir, 0),
		} {
			for _, w := range []string{
				`data-testid="group-kind-consumer" data-kind="consumer" data-count="1" data-affected="1"`,
				`data-testid="group-kind-classic" data-kind="classic" data-count="3" data-affected="2"`,
				`data-testid="group-kind-streams" data-kind="streams" data-count="1" data-affected="1"`,
				`data-testid="group-kind-share" data-kind="share" data-count="2"`,
				rc,
				`data-testid="group-kind-of-new-app">consumer group (KIP-848)<`,
				`data-testid="group-kind-of-orders-app">classic group<`,
				`data-testid="skipped-records"`,
			} {
				if !strings.Contains(page, w) {
					t.Errorf("metadata %v, %s page lacks %s", withMetadata, name, w)
				}
			}
			if got := testidText(page, "group-kind-share"); !strings.Contains(got, "2 share groups (KIP-932) (share-rc, share-ru)") {
				t.Errorf("metadata %v, %s page: share line %q", withMetadata, name, got)
			}
		}
	}
}
