package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// liveBrowser is headless chromium for the live tests, which run longer
// than browser's bound (a workload, a transaction left to hang).
func liveBrowser(t *testing.T) context.Context {
	t.Helper()
	path := testtool.Need(t, "chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1100),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.Disable, cdp.Empty{})
		return err
	}))
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// startLiveServe runs a server (startServe) and returns its address and
// the function that stops it (and returns its exit code).
func startLiveServe(t *testing.T, set ...func(*server.Options)) (string, func() int) {
	t.Helper()
	s := startServe(t, set...)
	return s.addr, func() int { return s.stop(t) }
}

// waitJS polls expr in the page until it is true. The bound catches hangs;
// it is not a latency claim (the target is a second; a loaded machine is
// slower).
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("%s: %v (expression %s)", what, err, expr)
	}
}

// canvasColors counts the canvas pixels painted exactly in the timeline's
// delivered, aborted and pending colours (app.css, light theme).
const canvasColors = `(() => {
  const c = document.querySelector('[data-testid="canvas"]'), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const n = { delivered: 0, aborted: 0, pending: 0, painted: 0 };
  for (let i = 0; i < d.length; i += 4) {
    const r = d[i], g = d[i + 1], b = d[i + 2];
    if (r === 0 && g === 158 && b === 115) n.delivered++;
    else if (r === 213 && g === 94 && b === 0) n.aborted++;
    else if (r === 181 && g === 125 && b === 0) n.pending++;
    if (r < 235 || g < 235 || b < 235) n.painted++;
  }
  return n;
})()`

type pixels struct{ Delivered, Aborted, Pending, Painted int }

// lanePixels counts, per lane of the canvas, the pixels painted in a batch
// colour (delivered, aborted, pending, COMMIT, ABORT, control).
const lanePixels = `(() => {
  const c = document.querySelector('[data-testid="canvas"]'), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const lanes = document.querySelectorAll('.labels .lane'), lh = c.height / lanes.length, out = new Array(lanes.length).fill(0);
  const colours = [[0, 158, 115], [213, 94, 0], [181, 125, 0], [0, 114, 178], [196, 88, 158], [0, 130, 155]];
  for (let i = 0; i < d.length; i += 4) {
    if (colours.some((k) => d[i] === k[0] && d[i + 1] === k[1] && d[i + 2] === k[2])) out[Math.floor(Math.floor(i / 4 / c.width) / lh)]++;
  }
  return out;
})()`

// readOnlyAPIs are the request keys a watcher may send: Metadata,
// ListOffsets, Fetch, DescribeProducers, ListTransactions,
// DescribeTransactions, DescribeConfigs, ListGroups and OffsetFetch (the
// groups an LSO that lags holds up), and the connection's ApiVersions,
// SaslHandshake and SaslAuthenticate.
var readOnlyAPIs = map[int16]bool{3: true, 2: true, 1: true, 61: true, 66: true, 65: true, 32: true, 16: true, 9: true, 18: true, 17: true, 36: true}

// brokerLSO asks the broker, from a client of the test's own, for
// ListOffsets(read_committed, latest) and (read_uncommitted, latest).
func brokerLSO(t *testing.T, cl *kgo.Client, topic string) (lso, hwm int64) {
	t.Helper()
	get := func(iso int8) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID, req.IsolationLevel = -1, iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			t.Fatal(err)
		}
		return p.Offset
	}
	return get(1), get(0)
}

// TestLiveServe: serve --bootstrap on a real kfake broker, the timeline
// open in chromium while a workload runs (transactional commits and
// aborts, a non-transactional producer, a transaction left to hang).
func TestLiveServe(t *testing.T) { liveServe(t, false) }

// TestLiveServeSCRAM is TestLiveServe authenticated with SCRAM-SHA-256.
func TestLiveServeSCRAM(t *testing.T) { liveServe(t, true) }

func liveServe(t *testing.T, useSCRAM bool) {
	const topic = "orders"
	kopts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, topic)}
	var auth []kgo.Opt
	var sasl *live.SASL
	name := "TestLiveServe"
	if useSCRAM {
		name += "SCRAM"
		kopts = append(kopts, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "ops", "s3cret-scram"))
		auth = append(auth, kgo.SASL(scram.Auth{User: "ops", Pass: "s3cret-scram"}.AsSha256Mechanism()))
		sasl = &live.SASL{Mechanism: live.MechanismSCRAMSHA256, User: "ops", Password: "s3cret-scram"}
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	mk := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics()}, auth...), opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	bg := context.Background()
	produce := func(cl *kgo.Client, n int) int64 {
		t.Helper()
		first := int64(-1)
		for i := range n {
			r := &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))}
			if err := cl.ProduceSync(bg, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if first < 0 {
				first = r.Offset
			}
		}
		return first
	}
	begin := func(cl *kgo.Client) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	end := func(cl *kgo.Client, how kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.EndTransaction(bg, how); err != nil {
			t.Fatal(err)
		}
	}
	shopA := mk(kgo.TransactionalID("shop-a"), kgo.TransactionTimeout(time.Minute))
	shopB := mk(kgo.TransactionalID("shop-b"), kgo.TransactionTimeout(time.Minute))
	stuck := mk(kgo.TransactionalID("stuck-producer"), kgo.TransactionTimeout(time.Minute))
	plain := mk(kgo.DisableIdempotentWrite()) // no producer id: the "no producer id" lane
	admin := mk()

	// Before the page opens: one committed transaction and a plain record.
	begin(shopA)
	produce(shopA, 2)
	end(shopA, kgo.TryCommit)
	produce(plain, 1)
	// shop-b's transaction stays open through the audit (the server then
	// asks the coordinators about it), and is aborted once the page is
	// open: its offsets go from pending to aborted there.
	begin(shopB)
	bFirst := produce(shopB, 2)

	// The audit: from here until the workload starts, the producers are
	// idle and every request the broker receives is the server's.
	var auditing atomic.Bool
	var mu sync.Mutex
	keys := map[int16]int{}
	auditing.Store(true)
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		if auditing.Load() {
			mu.Lock()
			keys[r.Key()]++
			mu.Unlock()
		}
		return nil, nil, false
	})
	rec := filepath.Join(t.TempDir(), "live.raw")
	srvAddr, stop := startLiveServe(t, func(o *server.Options) {
		o.Bootstrap, o.Topic, o.Poll, o.Record, o.SASL = addr, topic, 50*time.Millisecond, rec, sasl
		if !useSCRAM {
			// transaction.max.timeout.ms for KIP-664's rule, short
			// enough to see a transaction hang (kfake itself would abort
			// one that outlived a real, short maximum). The SCRAM run
			// asks the broker instead (DescribeConfigs).
			o.MaxTxnTimeout = 2 * time.Second
		}
	})
	base := "http://" + srvAddr
	ctx := liveBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="partition-link-live-orders-0"]`))); err != nil {
		t.Fatalf("index: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/sources/live/partitions/orders/0"), waitDone(1)); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	waitJS(t, ctx, "connected", `document.querySelector('[data-testid="live-status"]')?.dataset.state === "connected"`)
	seq0 := eval[string](t, ctx, `document.querySelector('[data-testid="live-seq"]').textContent`)
	waitJS(t, ctx, "more polls", fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid="live-seq"]').textContent; return s !== %q && +s.split(" ")[1] > +%q.split(" ")[1] + 4; })()`, seq0, seq0))
	auditing.Store(false)
	mu.Lock()
	for k, n := range keys {
		if !readOnlyAPIs[k] {
			t.Errorf("the server sent %s (key %d) %d times: not a read-only API", kmsg.NameForKey(k), k, n)
		}
	}
	want := []int16{1, 2, 3, 61, 66, 65}
	if useSCRAM {
		want = append(want, 32)
	}
	for _, k := range want {
		if keys[k] == 0 {
			t.Errorf("the server never sent %s: the audit would prove little", kmsg.NameForKey(k))
		}
	}
	if useSCRAM && (keys[17] == 0 || keys[36] == 0) {
		t.Errorf("no SASL exchange in %v", keys)
	}
	t.Logf("requests while watching: %v", keys)
	mu.Unlock()

	batches := func() int {
		return eval[int](t, ctx, `+document.querySelector('[data-testid="live-batches"]').dataset.count`)
	}
	decisionAt := func(off int64) string {
		return eval[string](t, ctx, fmt.Sprintf(`(document.querySelector('[data-testid="batch-%d"]') || {dataset: {}}).dataset.decision || ""`, off))
	}
	waitDecision := func(off int64, want string) {
		t.Helper()
		waitJS(t, ctx, fmt.Sprintf("offset %d %s", off, want), fmt.Sprintf(`(document.querySelector('[data-testid="batch-%d"]') || {dataset: {}}).dataset.decision === %q`, off, want))
	}
	noMismatch := func(when string) {
		t.Helper()
		if eval[bool](t, ctx, `!document.querySelector('[data-testid="live-mismatch"]').hidden`) {
			t.Errorf("%s: mismatch banner: %s", when, text(t, ctx, `[data-testid="live-mismatch"]`))
		}
	}
	n0 := batches()
	px0 := eval[pixels](t, ctx, canvasColors)
	// shop-a's two records (a batch each: ProduceSync), its COMMIT marker,
	// the plain record, shop-b's two.
	if n0 != 6 || px0.Delivered == 0 || px0.Pending == 0 || px0.Aborted != 0 {
		t.Fatalf("before the workload: %d batches (want 6), pixels %+v", n0, px0)
	}
	noMismatch("before the workload")
	lp0 := eval[[]int](t, ctx, lanePixels)
	// From here the lanes' rows are watched: a new generation that keeps
	// the set of lanes must not rebuild them (it only updates their words).
	eval[bool](t, ctx, laneWatchJS)

	// shop-b's transaction: pending while open, then aborted when its
	// marker lands (a re-decision of offsets the page already holds).
	waitDecision(bFirst, "pending")
	if !eval[bool](t, ctx, `!!document.querySelector('[data-testid^="lane-"][data-lane="2"]')`) {
		t.Errorf("no lane for shop-b's producer")
	}
	pxPending := eval[pixels](t, ctx, canvasColors)
	end(shopB, kgo.TryAbort)
	waitDecision(bFirst, "aborted")
	waitDecision(bFirst+1, "aborted")
	waitJS(t, ctx, "ABORT marker", fmt.Sprintf(`document.querySelector('[data-testid="batch-%d"]')?.dataset.control === "ABORT"`, bFirst+2))
	pxAborted := eval[pixels](t, ctx, canvasColors)
	if pxPending.Pending == 0 || pxAborted.Aborted == 0 || pxAborted.Pending >= pxPending.Pending {
		t.Errorf("canvas: pending %+v, after the abort %+v", pxPending, pxAborted)
	}

	// shop-a commits three records, the plain producer writes two.
	begin(shopA)
	aFirst := produce(shopA, 3)
	end(shopA, kgo.TryCommit)
	pFirst := produce(plain, 2)
	waitDecision(aFirst, "delivered")
	waitDecision(pFirst+1, "delivered")
	if got := decisionAt(aFirst + 2); got != "delivered" {
		t.Errorf("offset %d: %q", aFirst+2, got)
	}
	noMismatch("after the commits")
	// shop-b's abort, shop-a's commit and the plain records came as new
	// generations over the same lanes: no row was rebuilt, and shop-a's
	// row counts its second transaction.
	if w := eval[laneWatch](t, ctx, `window.__laneWatch`); w.Removed != 0 || w.Added != 0 || w.Gens < 1 {
		t.Errorf("over the same lanes: %d rows removed, %d added in %d new generations; want none rebuilt", w.Removed, w.Added, w.Gens)
	} else {
		t.Logf("over the same lanes: %d new generations, no row rebuilt", w.Gens)
	}
	if note := text(t, ctx, `.labels .lane[data-lane="1"] .note`); !strings.Contains(note, "2 txns") {
		t.Errorf("shop-a's row says %q after its second transaction", note)
	}

	// stuck-producer leaves its transaction open past
	// transaction.max.timeout.ms (2 s here); its coordinator then no longer
	// knows it (DescribeTransactions answers TRANSACTIONAL_ID_NOT_FOUND, as
	// after transactional.id.expiration.ms), which is KIP-664's hanging.
	// The SCRAM run keeps Kafka's 15 minutes and sees it open, with its
	// transactional id, and not hanging.
	begin(stuck)
	sFirst := produce(stuck, 1)
	var lost atomic.Bool
	lost.Store(!useSCRAM)
	c.ControlKey(int16(kmsg.DescribeTransactions), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.DescribeTransactionsRequest)
		if !lost.Load() || !slices.Equal(req.TransactionalIDs, []string{"stuck-producer"}) {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		s := kmsg.NewDescribeTransactionsResponseTransactionState()
		s.TransactionalID, s.ErrorCode = "stuck-producer", kerr.TransactionalIDNotFound.Code
		resp.TransactionStates = append(resp.TransactionStates, s)
		return resp, nil, true
	})
	row := fmt.Sprintf(`[data-testid="diagnosis"] [data-testid^="live-open-"][data-testid$="-%d"][data-transactional-id="stuck-producer"]`, sFirst)
	wantRow, wantVerdict := []string{"stuck-producer", "HANGING", "KIP-664"}, "HANGING"
	if useSCRAM {
		wantRow, wantVerdict = []string{"stuck-producer", "open", "within transaction.max.timeout.ms (15m)"}, "LSO held"
	}
	waitJS(t, ctx, "transaction diagnosed", fmt.Sprintf(`document.querySelector('%s')?.dataset.hanging === "%v"`, row, !useSCRAM))
	why := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('%s').textContent`, row))
	for _, want := range append(wantRow, fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic orders --partition 0 --start-offset %d", addr, sFirst)) {
		if !strings.Contains(why, want) {
			t.Errorf("diagnosis row lacks %q: %s", want, why)
		}
	}
	// The row can come a poll before the high watermark passes the
	// transaction's batch (the verdict is "clear" until then): wait for
	// the verdict, then say what it was if it never came.
	_ = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('[data-testid="live-verdict"]')?.textContent === %q`, wantVerdict),
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
	if v := text(t, ctx, `[data-testid="live-verdict"]`); v != wantVerdict {
		t.Errorf("verdict %q, want %q", v, wantVerdict)
	}
	// The groups it holds up: orders-app committed at its first offset
	// (the LSO), as a simple consumer (OffsetCommit, generation -1); the
	// server reads it with ListGroups and OffsetFetch (within 5 s) and the
	// panel lists it as blocked, in the words of a log dir's panel.
	testfixture.CommitOffset(t, admin, "orders-app", topic, 0, sFirst)
	grow := `[data-testid="diagnosis"] [data-testid="consumer-groups"] [data-testid="group-orders-app"]`
	waitJS(t, ctx, "group shown", fmt.Sprintf(`document.querySelector('%s')?.dataset.blocked === "true"`, grow))
	if g := text(t, ctx, grow); !strings.Contains(g, fmt.Sprint(sFirst)) || !strings.Contains(g, "blocked: waiting at the LSO") {
		t.Errorf("group row %q", g)
	}

	// The LSO the page shows is the broker's: ListOffsets(read_committed)
	// from a client of the test's own.
	lso, hwm := brokerLSO(t, admin, topic)
	if lso != sFirst {
		t.Fatalf("broker LSO %d, want the hanging transaction's first offset %d", lso, sFirst)
	}
	waitJS(t, ctx, "LSO shown", fmt.Sprintf(`document.querySelector('[data-testid="live-lso"]').textContent === "%d" && document.querySelector('[data-testid="live-hwm"]').textContent === "%d"`, lso, hwm))
	for sel, want := range map[string]string{
		`[data-testid="lso"]`: fmt.Sprintf("LSO %d", lso), `[data-testid="hwm"]`: fmt.Sprintf("HWM %d", hwm),
		`[data-testid="summary-lso"]`: fmt.Sprint(lso), `[data-testid="live-engine-lso"]`: fmt.Sprint(lso), `[data-testid="live-fetch-lso"]`: fmt.Sprint(lso),
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s shows %q, want %q", sel, got, want)
		}
	}
	n1 := batches()
	if n1 != n0+1+3+1+2+1 {
		t.Errorf("batches %d -> %d", n0, n1)
	}
	// The header above says the same as the live line: the page was
	// rendered at the first poll, and kept its batch count and log end.
	if got, want := strings.TrimSpace(text(t, ctx, `[data-testid="summary-batches"]`)), fmt.Sprint(n1); got != want {
		t.Errorf("header batches %q, live line %q", got, want)
	}
	if got, want := strings.TrimSpace(text(t, ctx, `[data-testid="summary-log-end"]`)), fmt.Sprint(hwm); got != want {
		t.Errorf("header log end %q, want the window's end %q", got, want)
	}
	if got := text(t, ctx, `[data-testid="diagnosis"]`); !strings.Contains(got, fmt.Sprintf("(%s held back)", txnindex.Plural(hwm-lso, "offset", "offsets"))) {
		t.Errorf("live diagnosis %q: held back not counted as %s", got, txnindex.Plural(hwm-lso, "offset", "offsets"))
	}
	// Every lane has batches drawn, stuck-producer's new one included.
	if lp := eval[[]int](t, ctx, lanePixels); len(lp) != 4 || slices.Contains(lp, 0) || len(lp0) != 3 {
		t.Errorf("batch pixels per lane: %v at first, %v now", lp0, lp)
	} else {
		t.Logf("batch pixels per lane: %v at first, %v now", lp0, lp)
	}
	// A lane per producer (shop-a, shop-b, stuck-producer) and the plain
	// producer's "no producer id" lane.
	if got := eval[string](t, ctx, `Array.from(document.querySelectorAll('.labels .lane')).map((e) => e.dataset.testid).join(" ")`); !strings.HasPrefix(got, "lane-none ") || strings.Count(got, "lane-") != 4 {
		t.Errorf("lanes %q", got)
	}
	if w := eval[laneWatch](t, ctx, `window.__laneWatch`); w.Added != 4 || w.Removed != 3 {
		t.Errorf("stuck-producer's lane: %d rows removed, %d added; want the 3 rows rebuilt once as 4", w.Removed, w.Added)
	}
	noMismatch("with the hanging transaction")
	screenshot(t, ctx, name)

	// Aborting it (as the page's command would) frees the LSO.
	lost.Store(false)
	end(stuck, kgo.TryAbort)
	lso, hwm = brokerLSO(t, admin, topic)
	if lso != hwm {
		t.Fatalf("after the abort: LSO %d, HWM %d", lso, hwm)
	}
	waitJS(t, ctx, "LSO freed", fmt.Sprintf(`document.querySelector('[data-testid="live-lso"]').textContent === "%d" && document.querySelector('[data-testid="lso"]').textContent.includes("%d") && document.querySelector('[data-testid="live-verdict"]').textContent === "clear"`, hwm, hwm))
	waitDecision(sFirst, "aborted")
	noMismatch("after the abort")

	// The live view's decisions, then the same from its recording.
	waitJS(t, ctx, "consumer caught up", fmt.Sprintf(`document.querySelector('[data-testid="live-delivered"]').textContent.endsWith("to offset %d")`, hwm))
	liveDecisions := ndjsonDecisions(t, base+"/api/v1/sources/live/partitions/orders/0/decisions")

	// The cluster goes away: the page says so.
	c.Close()
	waitJS(t, ctx, "reconnecting", `document.querySelector('[data-testid="live-status"]').dataset.state === "reconnecting"`)
	if s := text(t, ctx, `[data-testid="live-status"]`); !strings.Contains(s, "reconnecting to "+addr) {
		t.Errorf("status %q", s)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	replayAddr, _ := startLiveServe(t, loads(rec))
	replayed := ndjsonDecisions(t, "http://"+replayAddr+"/api/v1/sources/load1/partitions/orders/0/decisions")
	if len(liveDecisions) == 0 || !slices.Equal(replayed, liveDecisions) {
		t.Errorf("replayed recording:\n%s\nlive view:\n%s", strings.Join(replayed, "\n"), strings.Join(liveDecisions, "\n"))
	}
	t.Logf("%d decision ranges, live and replayed", len(liveDecisions))
}

// ndjsonDecisions reads the decisions API and keeps, per range, what a
// consumer receives and why: offsets, verdicts under both isolation
// levels, cause, batch and transaction. (The segment name and the reason's
// file names differ by construction: "live window" against the capture's
// "fetched batches".)
func ndjsonDecisions(t *testing.T, u string) []string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %s", u, resp.StatusCode, b)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var d struct {
			From, To        int64
			Decision, Cause string
			ReadUncommitted string `json:"read_uncommitted"`
			BatchBase       *int64 `json:"batch_base_offset"`
			BatchLast       *int64 `json:"batch_last_offset"`
			ProducerID      *int64 `json:"producer_id"`
			Control         *string
			Transaction     *struct {
				State        string
				FirstOffset  int64 `json:"first_offset"`
				MarkerOffset int64 `json:"marker_offset"`
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		s := fmt.Sprintf("%d-%d %s %s uncommitted=%s", d.From, d.To, d.Decision, d.Cause, d.ReadUncommitted)
		if d.BatchBase != nil {
			s += fmt.Sprintf(" batch %d-%d pid %d", *d.BatchBase, *d.BatchLast, *d.ProducerID)
		}
		if d.Control != nil {
			s += " " + *d.Control
		}
		if tx := d.Transaction; tx != nil {
			s += fmt.Sprintf(" txn %s %d..%d", tx.State, tx.FirstOffset, tx.MarkerOffset)
		}
		out = append(out, s)
	}
	return out
}

// laneWatchJS counts the lane rows removed from and added to the labels
// column, and the new generations drawn meanwhile (window.__laneWatch).
const laneWatchJS = `(() => {
  const w = window.__laneWatch = { removed: 0, added: 0, gens: 0 }, g0 = window.txnscope.state().gen;
  const isLane = (n) => n.nodeType === 1 && n.classList.contains("lane");
  new MutationObserver((ms) => {
    for (const m of ms) { w.removed += [...m.removedNodes].filter(isLane).length; w.added += [...m.addedNodes].filter(isLane).length; }
  }).observe(document.querySelector(".labels"), { childList: true });
  document.addEventListener("txnscope:message", (e) => { if (e.detail.type === "meta") w.gens = e.detail.generation - g0; });
  return true;
})()`

type laneWatch struct{ Removed, Added, Gens int }
