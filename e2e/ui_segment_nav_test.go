package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/testtool"
	loadinput "github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// segmentedLog writes a log directory of 6 segments of 256 KiB whose data
// records have distinct keys, and starts a server whose
// --max-source-bytes refuses its full load, so that its page shows one
// segment's window at a time. It returns the full load of the same
// directory (what the pages must agree with), its segments, the server and
// the partition's page URL.
func segmentedLog(t *testing.T) (*loadinput.Contents, []segsum.SegmentView, *served, string) {
	t.Helper()
	return segmentedLogSteps(t, nil)
}

// segmentedLogSteps is segmentedLog with segment i's batches written
// timeSteps[i%len(timeSteps)] ms apart (gen.LogOptions.TimeSteps).
func segmentedLogSteps(t *testing.T, timeSteps []int64) (*loadinput.Contents, []segsum.SegmentView, *served, string) {
	t.Helper()
	logDir := t.TempDir()
	st, err := gen.WriteLog(logDir, gen.LogOptions{SegmentBytes: 256 << 10, TotalBytes: 6 * 256 << 10, Seed: 11, Keyed: true, TimeSteps: timeSteps})
	if err != nil {
		t.Fatal(err)
	}
	ld, _, ov := openSegmented(t, st.Dir)
	if len(ov.Segments) < 6 {
		t.Fatalf("generated %d segments, want 6", len(ov.Segments))
	}
	s := startServe(t, loads(logDir), func(o *server.Options) { o.MaxSourceBytes = 512 << 10; o.SummaryCacheDir = t.TempDir() })
	full := ld.Partitions[0].Log
	return ld, ov.Segments, s, s.url("/sources/load1/partitions/" + full.Topic + "/" + fmt.Sprint(full.Partition))
}

// TestUISegmentPanAcrossSegments: on the page of one segment's window the
// timeline is that segment (the fit view spans its offsets, and the page
// says which segment of how many, with its offsets); panning with the
// keys past its last offset opens the next segment, whose batches are
// drawn and whose strip cell is highlighted; dragging past the first
// offset of that one comes back; the offset form lands in the segment
// holding the offset, its batch selected; the next-segment link keeps the
// view's width; the LSO key opens the segment holding the LSO; on the time
// axis, panning left past the first offset opens the previous segment.
func TestUISegmentPanAcrossSegments(t *testing.T) {
	path := testtool.Need(t, "chromium")
	ld, segs, _, page := segmentedLog(t)
	full := ld.Partitions[0].Log
	ctx := startChromium(t, path)

	shown := func(k int) {
		t.Helper()
		segmentShown(t, ctx, segs, k)
	}
	// drawnIn checks that the batches of segment k the view covers are
	// drawn: the first data batch of the segment in the view is under its
	// point.
	drawnIn := func(k int) {
		t.Helper()
		v := eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
		for i := range full.Batches {
			b := &full.Batches[i]
			if b.BaseOffset < segs[k].BaseOffset || b.BaseOffset >= segs[k].NextOffset || float64(b.BaseOffset) < v.From || float64(b.LastOffset()) >= v.To {
				continue
			}
			if got := eval[map[string]any](t, ctx, fmt.Sprintf(`(() => { const p = window.txnscope.pointOf(%d); return p && window.txnscope.batchAt(p.x, p.y); })()`, b.BaseOffset)); got == nil || int64(got["from"].(float64)) != b.BaseOffset {
				t.Errorf("segment %d: the batch at %d is not drawn in the view %.0f–%.0f (%v)", k, b.BaseOffset, v.From, v.To, got)
			}
			return
		}
		t.Errorf("segment %d: no batch of it in the view %.0f–%.0f", k, v.From, v.To)
	}

	// pressUntilLeaves presses key until the page leaves segment k.
	pressUntilLeaves := func(key string, k int) {
		t.Helper()
		for press := 0; ; press++ {
			if press == 40 {
				t.Fatalf("40 presses of %q did not leave segment %d (view %v)", key, k, eval[any](t, ctx, `window.txnscope.state().view`))
			}
			if err := chromedp.Do(ctx, chromedp.KeyEvent(key)); err != nil {
				t.Fatal(err)
			}
			// (the page may be gone already, or the next one loading)
			if eval[bool](t, ctx, `(() => { const e = document.querySelector('[data-testid="timeline"]'); return !e || e.dataset.leaving !== undefined || new URLSearchParams(location.search).get("segment") !== "`+fmt.Sprint(segs[k].BaseOffset)+`"; })()`) {
				return
			}
		}
	}

	k := 2
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s?segment=%d", page, segs[k].BaseOffset))); err != nil {
		t.Fatal(err)
	}
	shown(k)

	// "Fit" (the 0 key) spans the segment, not the log.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("0")); err != nil {
		t.Fatal(err)
	}
	v := eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	n := float64(segs[k].NextOffset - segs[k].BaseOffset)
	if v.From > float64(segs[k].BaseOffset) || v.To < float64(segs[k].NextOffset) || v.From < float64(segs[k].BaseOffset)-0.1*n || v.To > float64(segs[k].NextOffset)+0.1*n {
		t.Errorf("fit view %.0f–%.0f, want the segment's offsets %d–%d and a margin", v.From, v.To, segs[k].BaseOffset, segs[k].NextOffset)
	}

	// Panning right, a step at a time, runs into the segment's end and
	// then into the next segment, its first batches in view.
	pressUntilLeaves(kb.ArrowRight, k)
	shown(k + 1)
	v = eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	if v.From > float64(segs[k+1].BaseOffset) || v.To <= float64(segs[k+1].BaseOffset) {
		t.Errorf("after panning into segment %d the view is %.0f–%.0f, not at its start %d", k+1, v.From, v.To, segs[k+1].BaseOffset)
	}
	drawnIn(k + 1)
	screenshot(t, ctx, "TestUISegmentPanAcrossSegments")

	// Dragging right (the view left) past its first offset comes back to
	// segment k, its last batches in view.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`))); err != nil {
		t.Fatal(err)
	}
	r := eval[struct{ X, Y, W float64 }](t, ctx, `(() => { const r = document.querySelector('[data-testid="plot"]').getBoundingClientRect(); return { x: r.left + r.width / 4, y: r.top + 20, w: r.width }; })()`)
	acts := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, r.X, r.Y, chromedp.ButtonLeft)}
	for i := 1; i <= 6; i++ {
		acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, r.X+float64(i)*r.W/10, r.Y, chromedp.ButtonLeft))
	}
	for _, a := range acts {
		if err := chromedp.Do(ctx, a); err != nil {
			break // the page has gone to the previous segment mid-drag
		}
	}
	chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, r.X, r.Y, chromedp.ButtonLeft))
	shown(k)
	v = eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	if v.To < float64(segs[k].NextOffset-1) || v.From >= float64(segs[k].NextOffset-1) {
		t.Errorf("after dragging back into segment %d the view is %.0f–%.0f, not at its end %d", k, v.From, v.To, segs[k].NextOffset)
	}
	drawnIn(k)

	// An offset of segment 0 typed in the form opens segment 0 with the
	// batch holding it selected.
	var target *txnindex.Batch
	for i := range full.Batches {
		if b := &full.Batches[i]; !b.IsControl() && b.BaseOffset > segs[0].BaseOffset+5 && b.BaseOffset < segs[0].NextOffset {
			target = b
			break
		}
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="segment-goto-offset"]`), fmt.Sprint(target.BaseOffset)+kb.Enter)); err != nil {
		t.Fatal(err)
	}
	shown(0)
	if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`(() => { const d = document.querySelector('[data-testid="detail"]'); return d && !d.hidden && d.dataset.offset === "%d"; })()`, target.BaseOffset), 20*time.Second)); err != nil {
		t.Errorf("the batch at offset %d is not selected after going to it: %v", target.BaseOffset, err)
	}
	v = eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	if mid := (v.From + v.To) / 2; mid < float64(target.BaseOffset)-1-0.01*(v.To-v.From) || mid > float64(target.BaseOffset)+1+0.01*(v.To-v.From) {
		t.Errorf("after going to offset %d the view is %.0f–%.0f, not centred on it", target.BaseOffset, v.From, v.To)
	}
	drawnIn(0)

	// The next-segment link keeps the view's width.
	before := eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[data-testid="segment-next"]`))); err != nil {
		t.Fatal(err)
	}
	shown(1)
	v = eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	if w0, w1 := before.To-before.From, v.To-v.From; w1 < w0-2 || w1 > w0+2 {
		t.Errorf("the next-segment link changed the view's width from %.0f to %.0f", w0, w1)
	}
	drawnIn(1)

	// The LSO key centres on the LSO, in the segment that holds it.
	lk := 0
	for i := range segs {
		if segs[i].BaseOffset <= full.LastStableOffset {
			lk = i
		}
	}
	if lk == 1 {
		t.Fatalf("the LSO %d is in segment 1, which is shown", full.LastStableOffset)
	}
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("l")); err != nil {
		t.Fatal(err)
	}
	shown(lk)
	v = eval[struct{ From, To float64 }](t, ctx, `window.txnscope.state().view`)
	if lso := float64(full.LastStableOffset); v.From > lso || v.To < lso {
		t.Errorf("after the LSO key the view is %.0f–%.0f, without the LSO %d", v.From, v.To, full.LastStableOffset)
	}

	// On the time axis too, panning left past the first offset opens the
	// previous segment.
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s?segment=%d&axis=time", page, segs[k].BaseOffset))); err != nil {
		t.Fatal(err)
	}
	shown(k)
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`))); err != nil {
		t.Fatal(err)
	}
	pressUntilLeaves(kb.ArrowLeft, k)
	shown(k - 1)
	if ax := eval[string](t, ctx, `window.txnscope.state().axis`); ax != "time" {
		t.Errorf("the previous segment opened on the %s axis, not the time axis", ax)
	}
	drawnIn(k - 1)
}

// segmentShown waits for the page of segment k to be drawn and checks that
// its strip cell is highlighted and the line above the strip names it.
func segmentShown(t *testing.T, ctx context.Context, segs []segsum.SegmentView, k int) {
	t.Helper()
	var err error
	for try := 0; try < 4; try++ { // chromedp reports a navigation under way as an error: try again in the new page
		if err = chromedp.Do(ctx, pollFresh(fmt.Sprintf(`new URLSearchParams(location.search).get("segment") === "%d"`, segs[k].BaseOffset), 30*time.Second), waitDone(1)); err == nil ||
			!strings.Contains(err.Error(), "navigated or closed") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("segment %d (%s) never shown: %v", k, segs[k].Name, err)
	}
	cur := eval[[]bool](t, ctx, `Array.from(document.querySelectorAll('[data-testid="segment-cell"]')).map((c) => c.classList.contains("current"))`)
	for i, c := range cur {
		if c != (i == k) {
			t.Errorf("segment %d shown: cell %d highlighted %v", k, i, c)
		}
	}
	want := fmt.Sprintf("segment %d of %d, offsets %s–%s", k+1, len(segs), txnindex.Count(segs[k].BaseOffset), txnindex.Count(segs[k].NextOffset-1))
	if got := text(t, ctx, `[data-testid="segment-position"]`); got != want {
		t.Errorf("segment position %q, want %q", got, want)
	}
}

// TestUISegmentBatchRecords: the detail panel of a batch on a segment's
// page lists the batch's records, decoded from the segment file on demand,
// the same offsets, keys and values as a full load of the partition
// decodes; the REST route of the segment answers the same records.
func TestUISegmentBatchRecords(t *testing.T) {
	path := testtool.Need(t, "chromium")
	ld, segs, s, page := segmentedLog(t)
	full := ld.Partitions[0].Log
	ctx := startChromium(t, path)

	k := 1
	var b *txnindex.Batch
	for i := range full.Batches {
		if x := &full.Batches[i]; !x.IsControl() && x.BaseOffset >= segs[k].BaseOffset+10 && x.BaseOffset < segs[k].NextOffset {
			b = x
			break
		}
	}
	want, err := api.PartitionRecords(ld.Dirs[0], b)
	if err != nil || len(want) == 0 {
		t.Fatalf("the full load decodes %d records of the batch at %d: %v", len(want), b.BaseOffset, err)
	}
	url := fmt.Sprintf("%s?segment=%d&from=%d&to=%d", page, segs[k].BaseOffset, b.BaseOffset-4, b.LastOffset()+5)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	x, y := hoverOffset(t, ctx, b.BaseOffset)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-reason"]`))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="detail"]').dataset.offset`); got != fmt.Sprint(b.BaseOffset) {
		t.Fatalf("the click opened the batch at %s, want %d", got, b.BaseOffset)
	}
	rows := eval[[][]string](t, ctx, `Array.from(document.querySelectorAll('[data-testid="detail-records"] tr')).slice(1).map((r) => Array.from(r.cells).map((c) => c.textContent))`)
	if len(rows) != len(want) {
		t.Fatalf("the detail panel lists %d records (%q), the full load decodes %d", len(rows), text(t, ctx, `[data-testid="detail"]`), len(want))
	}
	shownAs := func(v []byte) string { // as timeline-detail.js shows a key or value
		if v == nil {
			return "null"
		}
		if s := string(v); strings.ToValidUTF8(s, "\uFFFD") == s && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' || r == 0x7f || r == '\uFFFD' }) {
			return s
		}
		e := base64.StdEncoding.EncodeToString(v)
		if len(e) > 24 {
			return "base64:" + e[:24] + "…"
		}
		return "base64:" + e
	}
	for i, r := range want {
		if g := rows[i]; g[0] != fmt.Sprint(r.Offset) || g[2] != shownAs(r.Key) || g[3] != shownAs(r.Value) {
			t.Errorf("record %d: the panel shows offset %s key %q value %q; the full load: %d %q %q", i, g[0], g[2], g[3], r.Offset, shownAs(r.Key), shownAs(r.Value))
		}
	}
	if !strings.HasPrefix(rows[0][2], "key-") {
		t.Errorf("the record's key %q is not the generator's", rows[0][2])
	}
	// The picture shows the panel, not the tooltip over it.
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 5, 5)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "TestUISegmentBatchRecords")

	// The same from the segment's batch route.
	var j api.BatchJSON
	resp, body := do(t, "GET", s.url(fmt.Sprintf("/api/v1/sources/load1/partitions/%s/%d/segments/%d/batches/%d", full.Topic, full.Partition, segs[k].BaseOffset, b.BaseOffset)), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("batch route: %s %s", resp.Status, body)
	}
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.RecordList) != len(want) || j.RecordsNote != "" {
		t.Fatalf("batch route: %d records (note %q), want %d", len(j.RecordList), j.RecordsNote, len(want))
	}
	for i, r := range want {
		if g := j.RecordList[i]; g.Offset != r.Offset || string(g.Key) != string(r.Key) || string(g.Value) != string(r.Value) {
			t.Errorf("batch route record %d: offset %d key %q, the full load %d %q", i, g.Offset, g.Key, r.Offset, r.Key)
		}
	}
}

// TestSegmentPageOffsetLands: offsets are what a reader thinks in. On a
// partition shown one segment at a time, a page asked for an offset
// (?offset=, the form without its script) opens the segment holding it
// with its batch selected, and a view in offsets without a segment
// (?from=&to=) opens the segment holding its middle, the view kept.
func TestSegmentPageOffsetLands(t *testing.T) {
	_, segs, _, page := segmentedLog(t)
	k := 3
	mid := (segs[k].BaseOffset + segs[k].NextOffset) / 2
	for _, c := range []struct{ query, want string }{
		{fmt.Sprintf("offset=%d", mid), fmt.Sprintf("from=%d&segment=%d&sel=%d&to=%d", segs[k].BaseOffset, segs[k].BaseOffset, mid, segs[k].NextOffset)},
		{fmt.Sprintf("offset=%d", segs[k].BaseOffset), fmt.Sprintf("from=%d&segment=%d&sel=%d&to=%d", segs[k].BaseOffset, segs[k].BaseOffset, segs[k].BaseOffset, segs[k].NextOffset)},
		{fmt.Sprintf("offset=%d", segs[len(segs)-1].NextOffset+100), fmt.Sprintf("from=%d&segment=%d&sel=%d&to=%d", segs[len(segs)-1].BaseOffset, segs[len(segs)-1].BaseOffset, segs[len(segs)-1].NextOffset+100, segs[len(segs)-1].NextOffset)},
		{fmt.Sprintf("from=%d&to=%d", mid-10, mid+10), fmt.Sprintf("from=%d&segment=%d&to=%d", mid-10, segs[k].BaseOffset, mid+10)},
		{"from=0&to=5", fmt.Sprintf("from=0&segment=%d&to=5", segs[0].BaseOffset)},
	} {
		resp, body := do(t, "GET", page+"?"+c.query, nil)
		if resp.StatusCode != 302 {
			t.Errorf("?%s: %s %s", c.query, resp.Status, body)
			continue
		}
		if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, "?"+c.want) {
			t.Errorf("?%s sent to %s, want ?%s", c.query, loc, c.want)
		}
	}
	if resp, _ := do(t, "GET", page+"?offset=x", nil); resp.StatusCode != 404 {
		t.Errorf("?offset=x: %s", resp.Status)
	}
}
