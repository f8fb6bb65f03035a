package e2e

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/live/metrics"
	"github.com/txnscope/txnscope/server"
)

// scrape GETs /metrics with hdr and parses the Prometheus text.
func scrape(t *testing.T, addr string, hdr http.Header) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	tp := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := tp.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return resp.StatusCode, mfs
}

// perPartition maps "topic-partition" to a per-partition metric's value.
func perPartition(mfs map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mfs[name].GetMetric() {
		var topic, part string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "topic":
				topic = l.GetValue()
			case "partition":
				part = l.GetValue()
			}
		}
		out[topic+"-"+part] = m.GetGauge().GetValue()
	}
	return out
}

// TestClusterMetrics: serve --bootstrap without --topic, behind an auth
// token, its scans only reading (the brokers' own audit): /metrics refuses
// a scrape without the token, and with it gives
// every partition's LSO lag equal to the broker's own ListOffsets (asked
// by the test), the open transactions where they are, and the scan's
// duration and request count.
func TestClusterMetrics(t *testing.T) {
	f := testfixture.NewCluster(t)
	// From here the fixture's clients are idle: what the brokers handle
	// is serve's scans, which may only read (clusterReadKeys).
	var (
		mu     sync.Mutex
		writes = map[string]int{}
		scans  int
	)
	f.C.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		if !clusterReadKeys[r.Key()] {
			writes[kmsg.NameForKey(r.Key())]++
		}
		if r.Key() == int16(kmsg.ListGroups) {
			scans++ // one per broker per scan
		}
		return nil, nil, false
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(writes) > 0 || scans == 0 {
			t.Errorf("serve's scans sent %v besides reads, in %d ListGroups", writes, scans)
		}
	})
	const token = "metrics-t0ken-abcdefghij"
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _ := startLiveServe(t, func(o *server.Options) {
		o.Bootstrap = strings.Join(f.Addrs, ",")
		o.AuthTokenFile = tf
		o.Poll = 200 * time.Millisecond
	})
	if code, _ := scrape(t, addr, http.Header{}); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := scrape(t, addr, http.Header{"Authorization": {"Bearer wrong-token-0123456789"}}); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	code, mfs := scrape(t, addr, http.Header{"Authorization": {"Bearer " + token}})
	if code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}
	hwm, lso := f.Offsets(t)
	lag, open := perPartition(mfs, metrics.NameLagOffsets), perPartition(mfs, metrics.NameOpen)
	if len(lag) != len(hwm) {
		t.Errorf("%d partitions in %s, the broker has %d", len(lag), metrics.NameLagOffsets, len(hwm))
	}
	for k, h := range hwm {
		if lag[k] != float64(h-lso[k]) {
			t.Errorf("%s: lag %v, the broker's ListOffsets say %d - %d", k, lag[k], h, lso[k])
		}
		want := 0.0
		for _, o := range f.Open {
			if k == fmt.Sprintf("%s-%d", o.Topic, o.Partition) {
				want = 1
				if h-lso[k] <= 0 {
					t.Errorf("%s: the broker says no lag behind an open transaction", k)
				}
			}
		}
		if open[k] != want {
			t.Errorf("%s: %v open transactions, want %v", k, open[k], want)
		}
	}
	for _, name := range []string{metrics.NameScanDuration, metrics.NameScanRequests, metrics.NameLastScan} {
		if mfs[name] == nil || len(mfs[name].GetMetric()) != 1 || mfs[name].GetMetric()[0].GetGauge().GetValue() <= 0 {
			t.Errorf("%s: %v", name, mfs[name])
		}
	}
}

// TestClusterServeBrowser: the cluster view in headless chromium: every
// partition listed, grouped by topic, the stuck ones ranked first; the
// filter box keeps only the matching rows; a stuck partition's link opens
// the live timeline of its tail, which draws the open transaction.
func TestClusterServeBrowser(t *testing.T) {
	f := testfixture.NewCluster(t)
	// A transaction.max.timeout.ms of 1 ms puts both open transactions
	// past it: stuck-orders, which its coordinator lost, is hanging, and
	// slow-billing, still tracked, expired.
	addr, _ := startLiveServe(t, func(o *server.Options) {
		o.Bootstrap = strings.Join(f.Addrs, ",")
		o.Poll = 300 * time.Millisecond
		o.MaxTxnTimeout = 1 * time.Millisecond
	})
	ctx := liveBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "cluster table", `document.querySelectorAll('[data-testid="cluster-row"]').length === 12`)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="cluster-row"]')].map(r => r.dataset.name + " " + r.dataset.state + " " + r.dataset.lag)`))
	if err != nil {
		t.Fatal(err)
	}
	// The two stuck partitions lead their topics, and their topics lead
	// the page; every other partition is clear.
	topics, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="cluster-topic"]')].map(t => t.dataset.topic)`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"orders-3": "hanging", "billing-1": "expired"}
	if strings.Join(topics, ",") != "orders,billing,audit" {
		t.Errorf("topics %v: the one with the hanging partition first, then the one with the expired", topics)
	}
	for _, r := range rows {
		name, state := strings.Fields(r)[0], strings.Fields(r)[1]
		if w := cmp.Or(want[name], "clear"); state != w {
			t.Errorf("row %q, want %s", r, w)
		}
	}
	if !strings.HasPrefix(rows[0], "orders-3 hanging") || !strings.HasPrefix(rows[6], "billing-1 expired") {
		t.Errorf("rows %q", rows)
	}
	screenshot(t, ctx, "TestClusterServeBrowser")

	// The filter: "billing" leaves billing's 4 rows; a transactional id
	// finds its partition.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="cluster-filter"]`), "billing")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "filter billing", `[...document.querySelectorAll('[data-testid="cluster-row"]')].filter(r => !r.hidden).map(r => r.dataset.name).sort().join() === "billing-0,billing-1,billing-2,billing-3"`)
	// It survives a refresh of the table (every --poll): the marked
	// table is replaced by a fetched one, still filtered.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.querySelector('[data-testid="cluster-body"]').dataset.old = "1"; return true })()`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "table refreshed", `!document.querySelector('[data-testid="cluster-body"]').dataset.old`)
	waitJS(t, ctx, "filter after refresh", `[...document.querySelectorAll('[data-testid="cluster-row"]')].filter(r => !r.hidden).length === 4`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector('[data-testid="cluster-filter"]'); b.value = ""; return true })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="cluster-filter"]`), "stuck-orders")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "filter by transactional id", `[...document.querySelectorAll('[data-testid="cluster-row"]')].filter(r => !r.hidden).map(r => r.dataset.name).join() === "orders-3"`)
	screenshot(t, ctx, "TestClusterServeBrowser-filter")

	// Drill down: the live timeline of orders-3's tail, its open
	// transaction drawn pending.
	// The link's own URL, navigated to (a click's navigation would
	// replace the page under the polling expression).
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-name="orders-3"] [data-testid="cluster-link"]').href`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(href)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "live timeline", `location.pathname === "/sources/live/partitions/orders/3" && !!document.querySelector('[data-testid="canvas"]')`)
	waitJS(t, ctx, "pending drawn", `(`+canvasColors+`).pending > 0`)
	px, err := chromedp.Run(ctx, chromedp.Evaluate[pixels](canvasColors))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("timeline pixels %+v", px)
	screenshot(t, ctx, "TestClusterServeBrowser-partition")
}

// TestMetricsSingleTopic: serve --bootstrap --topic exports the watched
// topic's partitions on /metrics, their lag equal to the broker's
// ListOffsets and the open transaction counted; a server with no live
// cluster has no /metrics.
func TestMetricsSingleTopic(t *testing.T) {
	f := testfixture.NewCluster(t)
	addr, _ := startLiveServe(t, func(o *server.Options) {
		o.Bootstrap = strings.Join(f.Addrs, ",")
		o.Topic = "billing"
		o.Poll = 200 * time.Millisecond
	})
	code, mfs := scrape(t, addr, http.Header{})
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	hwm, lso := f.Offsets(t)
	lag, open := perPartition(mfs, metrics.NameLagOffsets), perPartition(mfs, metrics.NameOpen)
	if len(lag) != int(f.Parts["billing"]) {
		t.Errorf("%d partitions exported: %v", len(lag), lag)
	}
	for p := range f.Parts["billing"] {
		k := fmt.Sprintf("billing-%d", p)
		if lag[k] != float64(hwm[k]-lso[k]) {
			t.Errorf("%s: lag %v, the broker's ListOffsets say %d - %d", k, lag[k], hwm[k], lso[k])
		}
	}
	if open["billing-1"] != 1 || lag["billing-1"] <= 0 {
		t.Errorf("billing-1: %v open, lag %v", open["billing-1"], lag["billing-1"])
	}
	plain, _ := startLiveServe(t)
	if code, _ := scrape(t, plain, http.Header{}); code != http.StatusNotFound {
		t.Errorf("/metrics without a live cluster: %d", code)
	}
}
