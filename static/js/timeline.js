// txnscope timeline: applies the /ws/v1 decision stream (docs/protocol.md)
// to typed arrays and draws them on a canvas with level of detail. The DOM
// holds only lanes, markers, labels and controls.
//
// The timeline is classic scripts, loaded in the order of
// static.TimelineScripts (served pages link them, the static export inlines
// them, in that order; ES modules would not load from an export's file://
// URL, and there is no build step):
//   contract.js          the codes, names and frame layout shared with the
//                        server, generated from Go (internal/gencontract)
//   timeline-state.js    the page's elements, the options and view from the
//                        URL, the namespace the others share
//                        (window.txnscopeTimeline) and the URL kept in step
//   timeline-lanes.js    the rows of the plot: producers folded, capped, filtered
//   timeline-axes.js     layout, the offset and time axes, the view
//   timeline-stream.js   stream decoding into typed arrays, lookups
//   timeline-draw.js     the canvas, the batch list
//   timeline-overview.js the proportional overview: more decisions than pixels
//   timeline-markers.js  marker lines and labels, captured fetches
//   timeline-minimap.js  the minimap
//   timeline-detail.js   tooltip, reasons, the detail panel
//   timeline-input.js    mouse, keys, controls
//   timeline-segments.js one segment's window as a stretch of one timeline
//   timeline.js          (this file, last) window.txnscope and the start
//
// Data source: the websocket and the JSON API when the page is served; in a
// static export (`server export`) the messages the stream would have sent,
// embedded in the page as JSON (a <script type="application/json"
// id="txnscope-embedded"> block, or window.TXNSCOPE_EMBEDDED):
//   {version: 1,
//    streams: {read_committed: [msg...], read_uncommitted: [...]},  // msg: a text message (object) or a binary frame (base64 string)
//    reasons: {read_committed: [[from, to, isBatch, reason]...], ...} | null,
//    batches: {read_committed: [batch JSON...], ...} | null,       // as GET .../batches/{offset}
//    note: "why reasons or batches are missing"}
// Only the isolation can change there (the stream was recorded for both).
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { canvas, root, pinned, state, view, metrics, S, part } = tl;
  const C = window.txnscopeContract;
  const { VERDICTS, CAUSES, LANE_GAP } = C;
  let probe = null; // the benchmark's frame probe (probeFrames)

  // --- test and benchmark hooks -------------------------------------------
  // window.txnscope is what lesson.js, diagnosis.js, live.js and the tests
  // use; the namespace of the timeline's scripts stays internal.
  window.txnscope = {
    state: () => {
      const D = S.D;
      return { done: S.done, painted: S.done && S.painted && S.listFresh, gen: S.gen, decisions: D ? D.n : 0, loadedChunks: D ? D.chunkCount : 0, view: { from: view.from, to: view.to },
        isolation: state.isolation, variant: state.variant, axis: state.axis, position: state.position, maxBytes: state.maxBytes, selected: state.selected, width: S.W };
    },
    fetches: () => tl.fetchCount(),
    // batchAt returns the decision under the client coordinates, or null.
    batchAt: (x, y) => {
      const i = tl.pointed({ clientX: x, clientY: y }), D = S.D;
      return i < 0 ? null : { from: D.from[i], to: D.to[i], decision: VERDICTS[D.verdict[i]], cause: CAUSES[D.cause[i]], lane: D.lane[i], flags: D.flags[i] };
    },
    // xAt returns the client x where offset off is drawn (on either axis).
    xAt: (off) => canvas.getBoundingClientRect().left + tl.xOf(off),
    // pointOf returns client coordinates inside the drawn decision covering off.
    pointOf: (off) => {
      const D = S.D;
      if (!D) return null;
      const [i0, i1] = tl.visibleRange(off, off + 1);
      for (let i = i0; i < i1; i++) {
        if (D.from[i] <= off && off <= D.to[i] && D.lane[i] !== LANE_GAP) {
          const r = canvas.getBoundingClientRect(), lh = tl.laneH();
          const x0 = Math.max(tl.xOf(D.from[i]), 0), x1 = Math.min(tl.xEnd(D.to[i]), S.W);
          return { x: r.left + (x0 + x1) / 2, y: r.top + tl.rowOf(D.lane[i]) * lh + lh / 2 + 4 };
        }
      }
      return null;
    },
    // drawn summarises what the last frame drew: decisions per verdict.
    drawn: () => {
      const c = {};
      (S.lastDrawVisible || []).forEach((i) => { const k = tl.binOf(i); c[k] = (c[k] || 0) + 1; });
      return c;
    },
    setView: (f, t) => tl.setView(f, t),
    // viewTimes() is the times (ms) the view's ends are drawn at on the
    // time axis (timeline-axes.js), whichever axis is shown.
    viewTimes: () => tl.viewTimes().slice(),
    // overviewRange(x) is the offsets [from, to) pixel column x of the
    // overview stands for (timeline-overview.js).
    overviewRange: (x) => tl.overviewRange(x),
    // highlight(from, to) outlines offsets [from, to] (lesson.js: the batch
    // of the current step) and pans it into view; highlight(null) clears it.
    highlight: (f, t) => { S.lessonMark = f === null ? null : { from: f, to: t }; root.dataset.highlight = f === null ? "" : f + "-" + t;
      if (S.lessonMark && (t < view.from || f > view.to)) tl.setView(f - (view.to - view.from) / 2, f + (view.to - view.from) / 2, { quiet: true }); tl.schedule(); },
    // asOf(o) draws the log as a lesson step has it (lesson.js): o =
    // {logEnd, lso, hwm, ongoing: [{producer, first}], verdict(from, to,
    // name), reason(offset), batch(offset, apiBatch), status, extra:
    // [{from, to, producer, first, ts}]}: decisions at or past logEnd are
    // left out (not written yet), the others take verdict's name (null
    // keeps theirs), transactions whose marker is not written yet are
    // drawn open, extra are ABORT markers past the partition's end (the
    // remedy's) that end the transaction from first; the LSO, high
    // watermark, status line, a tooltip's reason and the detail panel's
    // batch (batch: the API's made as of the step) are the step's.
    // asOf(null) restores the stream's log. It returns false until the
    // stream is complete.
    asOf: (o) => asOf(o),
    // pinned describes the highlighted pinning transaction, or null.
    pinned: () => pinned && { producer: pinned.producer, first: pinned.first, last: pinned.last, state: pinned.state,
      lane: pinned.lane, shown: pinned.shown, x0: pinned.x0, x1: pinned.x1 },
    zoom: (factor) => tl.zoom(factor),
    pan: (px) => tl.pan(px),
    metrics: () => {
      const f = metrics.frames.slice().sort((a, b) => a - b);
      const nav = performance.getEntriesByType("navigation")[0];
      return { firstPaintMs: metrics.firstPaint, streamDoneMs: metrics.streamDone, navStartToScript: nav ? nav.domContentLoadedEventEnd : null, htmlMs: nav ? nav.responseEnd : null,
        frameP95: f.length ? f[Math.floor(f.length * 0.95)] : null, frames: f.length,
        heap: performance.memory ? performance.memory.usedJSHeapSize : null, parts: metrics.parts, marks: metrics.marks };
    },
    resetFrames: () => { metrics.frames.length = 0; },
    // probeFrames(true) starts recording requestAnimationFrame intervals
    // (and resets the draw times); probeFrames(false) stops and returns
    // their p50/p95/max with the draw-time p95 (benchmark hook).
    probeFrames: (on) => {
      if (on) {
        metrics.frames.length = 0;
        // drawn: the intervals whose frame ran draw() (the probe's
        // callback was queued first, so a draw between two ticks belongs
        // to the frame they bound). With --disable-frame-rate-limit these
        // are the time to produce a frame that changed, not a vsync count.
        const iv = [], drawn = []; let last = performance.now(), draws = metrics.draws || 0;
        probe = { iv, drawn, on: true };
        const tick = (t) => {
          if (!probe || probe.iv !== iv) return;
          iv.push(t - last);
          if ((metrics.draws || 0) !== draws) { drawn.push(t - last); draws = metrics.draws; }
          last = t; requestAnimationFrame(tick);
        };
        requestAnimationFrame((t) => { last = t; requestAnimationFrame(tick); });
        return null;
      }
      const iv = probe ? probe.iv.slice().sort((a, b) => a - b) : [];
      const dr = probe ? probe.drawn.slice().sort((a, b) => a - b) : []; probe = null;
      const f = metrics.frames.slice().sort((a, b) => a - b);
      const q = (a, p) => a.length ? a[Math.min(a.length - 1, Math.floor(a.length * p))] : 0;
      return { p50: q(iv, 0.5), p95: q(iv, 0.95), max: q(iv, 1), frames: iv.length, drawP95: q(f, 0.95), drawnP50: q(dr, 0.5), drawnP95: q(dr, 0.95), drawnMax: q(dr, 1), drawnFrames: dr.length,
        heap: performance.memory ? performance.memory.usedJSHeapSize : 0 };
    },
  };

  let saved = null; // the stream's arrays and numbers while asOf draws a step
  const hwmLabel = root.querySelector('[data-testid="hwm"] span');
  // grow makes room for n decisions in D's arrays (a lesson's remedy
  // markers come after the stream's last decision) and a chunk for them.
  function grow(D, n) {
    if (D.from.length >= n) return;
    for (const k of ["from", "to", "bidx", "txn", "lane", "ts", "verdict", "cause", "unc", "flags"]) {
      const a = new D[k].constructor(n);
      a.set(D[k]);
      D[k] = a;
    }
  }
  function asOf(o) {
    const D = S.D, T = S.T, meta = S.meta;
    if (!D || !meta || !S.done) return false;
    if (!saved || saved.D !== D) {
      saved = { D, n: D.n, verdict: D.verdict.slice(), cause: D.cause.slice(), filled: T ? T.filled : 0, st: T ? T.st.slice() : null, marker: T ? T.marker.slice() : null,
        maxLen: T ? T.maxLen : 0, open: meta.open_transactions, lso: part.lso, hwm: part.hwm, logEnd: part.logEnd, hwmText: hwmLabel ? hwmLabel.textContent : "",
        status: tl.statusEl ? tl.statusEl.textContent : "", starts: meta.chunk_starts, loaded: D.loaded };
    }
    D.n = saved.n; D.verdict.set(saved.verdict); D.cause.set(saved.cause);
    if (T) { T.filled = saved.filled; T.st.set(saved.st); T.marker.set(saved.marker); T.maxLen = saved.maxLen; }
    meta.open_transactions = saved.open; part.lso = saved.lso; part.hwm = saved.hwm;
    meta.chunk_starts = saved.starts; D.loaded = saved.loaded;
    if (hwmLabel) hwmLabel.textContent = saved.hwmText;
    const whole = Math.abs(view.from - tl.domain.from) < 1e-9 && Math.abs(view.to - tl.domain.to) < 1e-9;
    part.logEnd = Math.max(saved.logEnd, o ? o.logEnd : 0);
    if (o) {
      const atLSO = CAUSES.indexOf("at_or_above_lso");
      let n = 0;
      while (n < saved.n && D.from[n] < o.logEnd) n++; // decisions are in offset order
      D.n = n;
      for (let i = 0; i < n; i++) {
        if (D.lane[i] === LANE_GAP) continue;
        const v = o.verdict(D.from[i], D.to[i], VERDICTS[D.verdict[i]]);
        if (v && v !== VERDICTS[D.verdict[i]]) { D.verdict[i] = VERDICTS.indexOf(v); if (v === "pending") D.cause[i] = atLSO; }
      }
      if (T) {
        let k = 0;
        for (; k < saved.filled && T.first[k] < o.logEnd; k++) if (T.marker[k] >= o.logEnd || T.marker[k] < 0) T.st[k] = C.TXN_STATE.OPEN;
        T.filled = k;
      }
      // Markers written after the partition's end (a lesson's remedy: the
      // ABORT marker of kafka-transactions.sh abort), once the step has
      // them: drawn in their producer's lane, ending their transaction.
      const extra = (o.extra || []).filter((x) => x.from < o.logEnd);
      if (extra.length && n === saved.n) {
        grow(D, n + extra.length);
        const cs = meta.chunk_size;
        if (n % cs === 0) { // the extra decisions start a chunk of their own
          meta.chunk_starts = saved.starts.concat([extra[0].from]);
          D.loaded = new Uint8Array(saved.loaded.length + 1); D.loaded.set(saved.loaded);
        }
        D.loaded[Math.floor(n / cs)] = 1;
        extra.forEach((x, j) => {
          const i = n + j, lane = meta.lanes.findIndex((l) => tl.pid(l) === String(x.producer));
          let k = -1;
          if (T) for (let q = 0; q < T.filled; q++) if (T.first[q] === x.first && T.lane[q] === lane) k = q;
          D.from[i] = x.from; D.to[i] = x.to; D.bidx[i] = -1; D.txn[i] = k; D.lane[i] = Math.max(lane, 0); D.ts[i] = x.ts;
          D.verdict[i] = VERDICTS.indexOf("control"); D.cause[i] = CAUSES.indexOf("abort_marker"); D.unc[i] = D.verdict[i];
          D.flags[i] = C.F_TXN | C.F_CONTROL | C.F_ABORT;
          if (k >= 0) { T.st[k] = C.TXN_STATE.ABORTED; T.marker[k] = x.from; T.maxLen = Math.max(T.maxLen, x.from - x.first); }
        });
        D.n = n + extra.length;
      }
      meta.open_transactions = o.ongoing.map((t) => ({ producer_id: t.producer, first_offset: t.first }));
      part.lso = o.lso; part.hwm = o.hwm;
      if (hwmLabel) hwmLabel.textContent = "HWM " + o.hwm;
    }
    // The status line: the step's decisions and consumer, not the stream's.
    if (tl.statusEl) tl.status(o && o.status ? window.txnscopeFormat.plural(D.n, "decision", "decisions") + " · " + state.isolation + " · " + o.status : saved.status);
    tl.setDomain();
    if (whole) { view.from = tl.domain.from; view.to = tl.domain.to; }
    tl.asOfReason = o && o.reason ? o.reason : null; // the tooltip's (timeline-detail.js)
    tl.asOfBatch = o && o.batch ? o.batch : null; // the detail panel's
    root.dataset.asOf = o ? o.logEnd : "";
    S.pyrDirty = true; S.timeDirty = true;
    tl.schedule(); tl.drawMini();
    // An open detail panel follows the step.
    if (state.selected !== null && tl.detail && !tl.detail.hidden) tl.openDetail(state.selected);
    return true;
  }

  tl.resize();
  tl.loadFetches();
  tl.connect();
  if (state.selected !== null) tl.openDetail(state.selected);
})();
