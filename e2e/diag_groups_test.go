package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

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

// TestDiagnosisPanelGroupKinds: the panel of a log dir with groups of
// every kind, as a person sees it: a row per group with its kind in
// words, a line per kind with how many are held up, and the share groups
// against the LSO by their isolation level.
func TestDiagnosisPanelGroupKinds(t *testing.T) {
	dir := writeGroupsLogDir(t, true)
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("load1", dir, ld))
	s := cat.find("load1", "orders", 0)
	if s == nil {
		t.Fatal("orders-0 not loaded")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="group-kind-share"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid="group-kind-of-new-app"]`:      "consumer group (KIP-848)",
		`[data-testid="group-kind-of-kstreams-app"]`: "streams group (KIP-1071)",
		`[data-testid="group-kind-of-orders-app"]`:   "classic group",
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="group-kind-share"]`); !strings.Contains(got, "2 share groups (KIP-932) (share-rc, share-ru)") {
		t.Errorf("share line %q", got)
	}
	held := eval[map[string]string](t, ctx, `Object.assign({}, document.querySelector('[data-testid="share-group-share-rc"]').dataset)`)
	if held["isolation"] != "read_committed" || held["held"] != "true" || held["start"] != "3" {
		t.Errorf("share-rc row %v, want read_committed, held, start 3", held)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="group-kind-share"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelGroupKinds")
	screenshot(t, ctx, "TestDiagnosisPanelGroupKinds")
}
