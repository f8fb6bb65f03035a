// txnscope timeline, layout and axes: the plot's size, where an offset is
// drawn (x) on the offset axis or the time axis, the axis ticks, and the
// view (setView, zoom, pan, centreOn), kept in offsets on either axis.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { plot, canvas, axisEl, mini, part, state, domain, view, S } = tl;
  const { LANE_GAP } = window.txnscopeContract;

  const BAND = 30; // px above the lanes for marker labels (css: .band)
  const laneH = () => S.laneEls.length ? S.laneEls[0].getBoundingClientRect().height : 44;
  // resize lays the canvases out for the plot's and minimap's widths.
  function resize() {
    S.dpr = window.devicePixelRatio || 1;
    S.W = plot.clientWidth; S.miniW = mini.clientWidth; S.H = Math.max(S.laneEls.length, 1) * laneH();
    canvas.width = Math.round(S.W * S.dpr); canvas.height = Math.round(S.H * S.dpr);
    canvas.style.height = S.H + "px";
    mini.width = Math.round(mini.clientWidth * S.dpr); mini.height = Math.round(mini.clientHeight * S.dpr);
    tl.schedule(); tl.scheduleMini();
  }
  // xOf is the x (css px in the plot) where offset off is drawn; offAt the
  // offset at x.
  const xOf = (off) => state.axis === "time" ? xOfTime(off) : (off - view.from) / (view.to - view.from) * S.W;
  const offAt = (x) => state.axis === "time" ? offAtTime(x) : view.from + x / S.W * (view.to - view.from);

  // --- time axis ----------------------------------------------------------
  // On the time axis the view stays an interval of offsets (the stream's
  // chunks, the deep link and the offset code paths keep working) but x is
  // linear in time between the view's ends. An offset's time comes from a
  // knot at each batch's first offset: the batch's max timestamp, held at
  // the latest time seen so far (as Kafka's time index is), so a batch whose
  // clock went backwards sits right after its predecessor instead of
  // folding the axis back, and a minimum step keeps batches with equal
  // times in order (drawn at least a pixel wide). Offsets between
  // knots are interpolated; beyond them the log's mean rate extrapolates.
  let tk = null, tbuf = null;
  function buildTime() {
    const D = S.D, meta = S.meta;
    S.timeDirty = false;
    // The knots are written into typed arrays kept from one rebuild to the
    // next (this runs over every loaded decision each time chunks arrive;
    // fresh arrays per rebuild of a 1M-batch log kept the collector busy
    // while it streamed): first each batch's first and last offset and raw
    // time in place, then the held times over them.
    const cap = D ? D.n : 0;
    if (!tbuf || tbuf.cap < cap) tbuf = { cap, o: new Float64Array(2 * cap), t: new Float64Array(2 * cap) };
    const o = tbuf.o, t = tbuf.t;
    let n = 0;
    if (D) {
      const cs = meta.chunk_size;
      for (let i = 0; i < D.n; i++) {
        if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
        if (D.lane[i] === LANE_GAP || D.ts[i] < 0) continue;
        if (n && D.from[i] <= o[2 * n - 1]) continue; // overlapping batches keep the first
        o[2 * n] = D.from[i]; o[2 * n + 1] = D.to[i]; t[2 * n] = D.ts[i]; n++;
      }
    }
    if (!n) { tk = null; return; }
    for (let i = 1; i < n; i++) t[2 * i] = Math.max(t[2 * i], t[2 * i - 2]);
    // A batch is as wide as the typical (median) step between batches, or
    // up to the next one if that comes sooner: a pause in writing is then
    // empty axis, not a batch stretched across it. Past STEP_SAMPLE steps
    // the median is that of evenly spaced samples: sorting 1M steps took
    // 48-59 ms (in node) on every rebuild while a big log streams in.
    let ns = 0;
    const stride = Math.max(1, Math.floor(n / STEP_SAMPLE)), steps = new Float64Array(Math.ceil(n / stride));
    for (let i = 1; i < n; i += stride) if (t[2 * i] > t[2 * i - 2]) steps[ns++] = t[2 * i] - t[2 * i - 2];
    const sorted = steps.subarray(0, ns).sort();
    const typical = ns ? sorted[ns >> 1] : 1;
    let prev = -Infinity;
    for (let i = 0; i < n; i++) {
      // t[2i + 2] still holds the next batch's held (not yet spaced) time.
      const st = Math.max(t[2 * i], prev + TIME_EPS), next = i + 1 < n ? t[2 * i + 2] : st + typical;
      const en = st + Math.max(Math.min(next - st, typical), TIME_EPS);
      t[2 * i] = st;
      o[2 * i + 1] += 1 - END_OFF; t[2 * i + 1] = en;
      prev = en;
    }
    const k = 2 * n;
    tk = { n: k, o, t, slope: (t[k - 1] - t[0]) / Math.max(o[k - 1] - o[0], 1) };
  }
  const STEP_SAMPLE = 20000;
  // xEnd is where the batch or span ending at offset last ends: on the time
  // axis just before last + 1, whose knot is the next batch's start.
  // TIME_EPS (10 µs) is far below what a tick shows, so positions stay true
  // to the timestamps, yet the strict order lets a zoom pull batches with
  // equal times apart.
  const END_OFF = 1e-3, TIME_EPS = 0.01;
  const xEnd = (last) => xOf(state.axis === "time" ? last + 1 - END_OFF : last + 1);
  function tOf(off) {
    if (S.timeDirty) buildTime();
    if (!tk) return off;
    const { n, o, t } = tk;
    if (off <= o[0]) return t[0] + (off - o[0]) * tk.slope;
    if (off >= o[n - 1]) return t[n - 1] + (off - o[n - 1]) * tk.slope;
    let lo = 0, hi = n - 1;
    while (hi - lo > 1) { const m = (lo + hi) >> 1; if (o[m] <= off) lo = m; else hi = m; }
    return t[lo] + (off - o[lo]) / (o[hi] - o[lo]) * (t[hi] - t[lo]);
  }
  function offOfT(tm) {
    if (S.timeDirty) buildTime();
    if (!tk) return tm;
    const { n, o, t } = tk;
    if (tm <= t[0]) return o[0] + (tm - t[0]) / tk.slope;
    if (tm >= t[n - 1]) return o[n - 1] + (tm - t[n - 1]) / tk.slope;
    let lo = 0, hi = n - 1;
    while (hi - lo > 1) { const m = (lo + hi) >> 1; if (t[m] <= tm) lo = m; else hi = m; }
    return o[lo] + (tm - t[lo]) / (t[hi] - t[lo]) * (o[hi] - o[lo]);
  }
  // viewTimes is asked for by every xOf on the time axis (twice per batch
  // drawn), so it is kept until the view or the knots change.
  let vtFrom = NaN, vtTo = NaN, vtTk = null, vt = [0, 0];
  function viewTimes() {
    if (S.timeDirty) buildTime();
    if (view.from !== vtFrom || view.to !== vtTo || tk !== vtTk) { vt = [tOf(view.from), tOf(view.to)]; vtFrom = view.from; vtTo = view.to; vtTk = tk; }
    return vt;
  }
  // timeDomain is the times of the domain's ends: the whole log on the time
  // axis, as the minimap and the overview pyramid show it.
  function timeDomain() { return [tOf(domain.from), tOf(domain.to)]; }
  // timeBounds returns the offsets where m equal columns of time from a to
  // b begin (m + 1 values, the last is b's offset). They are sorted, since
  // offOfT is monotone; the binned passes place decisions with them.
  function timeBounds(a, b, m) {
    const out = new Float64Array(m + 1);
    for (let c = 0; c <= m; c++) out[c] = offOfT(a + (b - a) * c / m);
    return out;
  }
  // colOf returns the column of bounds (m columns) holding offset off:
  // -1 left of the first, m - 1 at or right of the last.
  function colOf(bounds, m, off) {
    if (off < bounds[0]) return -1;
    let lo = 0, hi = m;
    while (hi - lo > 1) { const c = (lo + hi) >> 1; if (bounds[c] <= off) lo = c; else hi = c; }
    return lo;
  }
  // timeCursor returns tOf for offsets asked in non-decreasing order,
  // walking the knots forward instead of searching for each (the minimap's
  // pass over every decision).
  function timeCursor() {
    if (S.timeDirty) buildTime();
    let lo = 0;
    return (off) => {
      if (!tk) return off;
      const { n, o, t } = tk;
      if (off <= o[0]) return t[0] + (off - o[0]) * tk.slope;
      if (off >= o[n - 1]) return t[n - 1] + (off - o[n - 1]) * tk.slope;
      if (o[lo] > off) lo = 0; // asked out of order: start again
      while (lo + 2 < n && o[lo + 1] <= off) lo++;
      return t[lo] + (off - o[lo]) / (o[lo + 1] - o[lo]) * (t[lo + 1] - t[lo]);
    };
  }
  function xOfTime(off) { const [a, b] = viewTimes(); return (tOf(off) - a) / Math.max(b - a, 1e-9) * S.W; }
  function offAtTime(x) { const [a, b] = viewTimes(); return offOfT(a + x / S.W * (b - a)); }
  // setTimeView shows the times [a, b), converted to the offset view.
  function setTimeView(a, b, opts) { setView(offOfT(a), offOfT(b), opts); }
  const TIME_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
  const pad2 = (v, n) => String(v).padStart(n || 2, "0");
  // TICK_CHAR_PX is a generous width of one character of a tick label (the
  // axis font is 12-13 px, digits tabular), for leaving out ticks whose
  // labels would overlap.
  const TICK_CHAR_PX = 7.2;
  // utcLabel writes t as UTC to the precision the tick step needs; the
  // first tick also carries the date.
  function utcLabel(tm, step, first) {
    const d = new Date(tm);
    let s = pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes());
    if (step < 6e4) s += ":" + pad2(d.getUTCSeconds());
    if (step < 1e3) s += "." + pad2(d.getUTCMilliseconds(), 3);
    if (first || step >= 864e5) s = d.toISOString().slice(0, 10) + " " + s + (first ? " UTC" : "");
    return s;
  }
  function drawTimeAxis() {
    const [a, b] = viewTimes(), span = b - a, raw = span / Math.max(S.W / 120, 1);
    let step = TIME_STEPS.find((v) => v >= raw);
    if (!step) step = Math.ceil(raw / 864e5) * 864e5;
    let html = "", end = -Infinity;
    for (let tm = Math.ceil(a / step) * step, n = 0; tm <= b && n < 60; tm += step, n++) {
      const x = (tm - a) / span * S.W, label = utcLabel(tm, step, n === 0);
      // The first label carries the date and is twice as wide as the
      // step allows for: a tick whose label would run into it is left out.
      if (x < end) continue;
      end = x + 3 + label.length * TICK_CHAR_PX + 6;
      html += '<div class="tick time" data-testid="time-tick" data-time="' + tm + '" style="left:' + x.toFixed(1) + 'px">' + label + "</div>";
    }
    axisEl.innerHTML = html;
  }

  function niceStep(span, px) {
    const raw = span / Math.max(px / 90, 1), p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return Math.max(m * p, 1);
    return 10 * p;
  }
  function drawAxis() {
    if (state.axis === "time") { drawTimeAxis(); return; }
    const step = niceStep(view.to - view.from, S.W);
    let html = "";
    for (let o = Math.ceil(view.from / step) * step, n = 0; o <= view.to && n < 60; o += step, n++) {
      if (o < part.logStart) continue;
      o += 0; // no "-0"
      // Plain digits, as the LSO marker and the header write offsets.
      html += '<div class="tick" data-testid="offset-tick" style="left:' + xOf(o).toFixed(1) + 'px">' + o + "</div>";
    }
    axisEl.innerHTML = html;
  }

  // viewBounds returns the offsets where the w pixel columns of the view
  // begin on the time axis, computed once per view.
  let vbKey = "", vbTk = null, vb = null;
  function viewBounds(w) {
    const [a, b] = viewTimes(), key = a + ":" + b + ":" + w;
    if (key !== vbKey || vbTk !== tk) { vb = timeBounds(a, a + (b - a) * w / S.W, w); vbKey = key; vbTk = tk; }
    return vb;
  }

  // setView shows the offsets [from, to), kept within the domain's margins.
  function setView(from, to, opts) {
    // On the time axis a long pause lies between two offsets, so zooming
    // into it needs views narrower than one offset.
    let span = Math.max(to - from, state.axis === "time" ? 1e-6 : 4);
    const full = domain.to - domain.from;
    span = Math.min(span, full * 1.02 + 4);
    let f = from;
    const lo = domain.from - span * 0.1, hi = domain.to + span * 0.1 - span;
    // A pan (opts.pan) past an end the view already touches goes on into
    // the neighbouring segment, on a segment's page (timeline-segments.js).
    if (opts && opts.pan && tl.pastEdge) {
      const eps = span * 1e-3;
      if (f < lo - eps && view.from <= lo + eps && tl.pastEdge(-1, span)) return;
      if (f > hi + eps && view.from >= hi - eps && tl.pastEdge(1, span)) return;
    }
    if (f < lo) f = lo;
    if (f + span > domain.to + span * 0.1) f = hi;
    view.from = f; view.to = f + span;
    tl.schedule();
    tl.viewportChanged();
    if (!opts || !opts.quiet) tl.updateURL();
  }
  function zoom(factor, atX) {
    const x = atX === undefined ? S.W / 2 : atX, o = offAt(x);
    if (state.axis === "time") {
      const [a, b] = viewTimes(), tm = a + x / S.W * (b - a), span = (b - a) * factor;
      setTimeView(tm - span * (x / S.W), tm - span * (x / S.W) + span);
      return;
    }
    const span = (view.to - view.from) * factor;
    setView(o - span * (x / S.W), o - span * (x / S.W) + span);
  }
  function pan(dx) {
    if (state.axis === "time") { const [a, b] = viewTimes(), d = dx / S.W * (b - a); setTimeView(a + d, b + d, { pan: true }); return; }
    const d = dx / S.W * (view.to - view.from); setView(view.from + d, view.to + d, { pan: true });
  }
  // centreOn moves the view, keeping its width, so that offset off is in
  // its middle, on either axis.
  function centreOn(off) {
    if (state.axis !== "time") { const span = view.to - view.from; setView(off - span / 2, off + span / 2); return; }
    const [a, b] = viewTimes(), tm = tOf(off);
    setTimeView(tm - (b - a) / 2, tm + (b - a) / 2);
  }

  Object.assign(tl, { BAND, END_OFF, centreOn, colOf, drawAxis, laneH, offAt, offOfT, pan, resize, setTimeView, setView, tOf, timeBounds, timeCursor, timeDomain, viewBounds, viewTimes, xEnd, xOf, zoom });
})();
