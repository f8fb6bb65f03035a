package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// writeGroupsLogDir (as internal/cli's of the same name) adds to
// joinStory's log dir (orders-0 pinned at offset 3 by
// zombie-tx, whose coordinator moved on: hanging) groups of every kind:
// new-app a KIP-848 consumer group waiting at the LSO, kstreams-app a
// streams group behind it, orders-app the classic group of joinStory, two
// share groups on orders-0 (share-rc configured read_committed, at the
// LSO; share-ru with no config), and records of a type no release writes
// in __consumer_offsets and __share_group_state.
func writeGroupsLogDir(t *testing.T, withMetadata bool) string {
	t.Helper()
	const ts = 1_767_225_600_000
	groups := map[string][]scenario.InternalRecord{
		"new-app": {scenario.GroupRecord(3, "new-app", false), scenario.GroupRecord(5, "new-app", false), scenario.GroupRecord(16, "new-app", false),
			scenario.OffsetCommitRecord("new-app", "orders", 0, 3, 0, "", ts+4)},
		"kstreams-app": {scenario.GroupRecord(17, "kstreams-app", false), scenario.GroupRecord(18, "kstreams-app", false),
			scenario.OffsetCommitRecord("kstreams-app", "orders", 0, 1, 0, "", ts+5)},
		"share-rc": {scenario.GroupRecord(11, "share-rc", false), {Key: []byte{0, 30, 0, 1, 'x'}, Value: []byte{0, 0}}},
		"share-ru": {scenario.GroupRecord(11, "share-ru", false)},
	}
	more := map[string][]scenario.InternalBatch{}
	for g, recs := range groups {
		more[g] = []scenario.InternalBatch{scenario.CoordinatorBatch(recs...)}
	}
	parts := joinLogDirParts(t, more, txnindex.TopicPartition{Topic: "orders", Partition: 1})
	id := scenario.TopicID("orders")
	share, err := scenario.BuildInternal(scenario.ShareGroupStateTopic, 7, []scenario.InternalBatch{
		scenario.CoordinatorBatch(scenario.ShareSnapshotRecord("share-rc", id, 0, 1, 0), scenario.ShareSnapshotRecord("share-ru", id, 0, 1, 1)),
		scenario.CoordinatorBatch(scenario.ShareUpdateRecord("share-rc", id, 0, 3), scenario.ShareSnapshotRecord("share-rc", scenario.TopicID("elsewhere"), 0, 1, 9)),
		scenario.CoordinatorBatch(scenario.InternalRecord{Key: []byte{0, 9, 0, 0}, Value: []byte{0, 0}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	parts = append(parts, share)
	if withMetadata {
		m, err := scenario.BuildInternal(scenario.ClusterMetadataTopic, 0, []scenario.InternalBatch{
			scenario.CoordinatorBatch(scenario.TopicRecord("orders", id), scenario.GroupConfigRecord("share-rc", internaltopic.ShareIsolationConfig, "read_committed")),
		})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, m)
	}
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, parts...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDiagnosisPanelGroupKinds: the partition page of a log dir with
// groups of every kind (writeGroupsLogDir), loaded whole (serve --load) and
// lazily (a log dir served partition by partition, the join read apart):
// the panel counts the groups of each kind and those held up, names each
// group's kind in words, lists the share groups against the LSO by their
// isolation level, and says what was skipped.
func TestDiagnosisPanelGroupKinds(t *testing.T) {
	for _, withMetadata := range []bool{true, false} {
		dir := writeGroupsLogDir(t, withMetadata)
		ld, err := input.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		cat := &catalog{}
		cat.add("load1", dir, ld)
		srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat})))
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
