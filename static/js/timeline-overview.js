// txnscope timeline, the overview: with more decisions in view than pixels,
// each pixel column of a lane shows the mix of what it covers in
// proportion, stacked by share of offsets per kind (delivered, aborted,
// markers, pending, …), so that the picture agrees with the records-in-view
// counts under the minimap. A column that takes the "most important" kind
// instead (as this did before) draws a 1M-batch log with one aborted
// transaction in ten as solid aborted hatching, and a 200k-offset view of
// it as solid COMMIT blue, since one marker in a column of 40 batches won.
//
// Zoomed far out, the overview pyramid serves the view: per lane row (and a
// row for gaps), PYR columns over the whole domain, each holding the
// offsets of every kind it covers. It is rebuilt from the typed arrays when
// chunks have arrived, and draws any view where one pixel spans at least
// one column without touching the decisions; closer views sum the visible
// decisions into pixel columns the same way. On the time axis the columns
// are equal steps of time over the domain's times instead (pyrT0, pyrT1
// when it was built); pyrAxis says which.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { ctx, state, domain, view, S, END_OFF } = tl;
  const C = window.txnscopeContract;
  const { F_COMMIT, F_ABORT, LANE_GAP } = C;
  const { DELIVERED, ABORTED, CONTROL, PENDING, BEFORE_POSITION } = C.VERDICT;
  const { OPEN: TXN_OPEN, ABORTED: TXN_ABORTED } = C.TXN_STATE;

  // KINDS, top to bottom of a stacked column: what a reader most needs to
  // see sits on top (aborted data, the pending region, markers), delivered
  // data below. kindOf is a decision's index into it.
  const KINDS = ["aborted", "pending", "abort", "commit", "control", "delivered", "before", "gap"];
  const K = KINDS.length, GAP_K = K - 1;
  const kindOf = (v, f) => v === ABORTED ? 0 : v === PENDING ? 1 : v === CONTROL ? (f & F_ABORT ? 2 : f & F_COMMIT ? 3 : 4) : v === DELIVERED ? 5 : v === BEFORE_POSITION ? 6 : GAP_K;
  // rowOf is the display row of stream lane ln (timeline-lanes.js folds
  // producers into rows); the gap row is nr, after the lanes.
  const rowIdx = (ln, nr) => ln === LANE_GAP ? nr : tl.rowOf(ln);

  // addSpan adds the offsets [a, b) of kind k (or transaction state) to row
  // r of out (m columns, kk values per column), column c holding the
  // offsets [c0 + c * cw, c0 + (c + 1) * cw): each column gets the share of
  // the span it covers, so the columns' totals are offsets (in units of cw).
  function addSpan(out, m, kk, r, k, a, b, c0, cw) {
    const u0 = (a - c0) / cw, u1 = (b - c0) / cw;
    if (u1 <= 0 || u0 >= m) return;
    let c = Math.max(Math.floor(u0), 0);
    const ce = Math.min(Math.ceil(u1) - 1, m - 1), base = r * m * kk + k;
    if (c >= ce) { out[base + c * kk] += Math.max(Math.min(u1, m) - Math.max(u0, 0), 1e-3); return; }
    for (; c <= ce; c++) out[base + c * kk] += Math.min(u1, c + 1) - Math.max(u0, c);
  }
  // addSpanBounds is addSpan for columns of unequal width (the time axis):
  // column c holds the offsets [bounds[c], bounds[c + 1]), and the cursor
  // cur (an array of one) moves forward while the spans come in offset
  // order, and is searched for when one starts before it (-1: search). The shares are in offsets.
  function addSpanBounds(out, m, kk, r, k, a, b, bounds, cur) {
    if (b <= bounds[0] || a >= bounds[m]) return;
    let c = cur[0];
    if (c < 0 || bounds[c] > a) c = Math.max(tl.colOf(bounds, m, a), 0);
    while (c + 1 < m && bounds[c + 1] <= a) c++;
    cur[0] = c;
    const base = r * m * kk + k;
    for (; c < m && bounds[c] < b; c++) {
      const ov = Math.min(b, bounds[c + 1]) - Math.max(a, bounds[c]);
      out[base + c * kk] += Math.max(ov, 1e-3);
    }
  }

  const PYR = 8192;
  let pyr = null, tpyr = null, pyrAxis = "offset", pyrT0 = 0, pyrT1 = 1, pyrRows = -1;
  function buildPyr(nr) {
    const D = S.D, T = S.T, cs = S.meta.chunk_size;
    if (!pyr || pyrRows !== nr) { pyr = new Float32Array(PYR * (nr + 1) * K); tpyr = new Float32Array(PYR * nr * 2); pyrRows = nr; }
    else { pyr.fill(0); tpyr.fill(0); }
    pyrAxis = state.axis; S.pyrDirty = false;
    if (state.axis === "time") {
      [pyrT0, pyrT1] = tl.timeDomain();
      const bounds = tl.timeBounds(pyrT0, pyrT1, PYR);
      binDecisionsTime(bounds, PYR, 0, D.n, pyr, nr);
      if (T) binTxnsTime(bounds, PYR, 0, T.filled, tpyr, nr);
      return;
    }
    const df = domain.from, cw = (domain.to - domain.from) / PYR;
    for (let i = 0; i < D.n; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      addSpan(pyr, PYR, K, rowIdx(D.lane[i], nr), kindOf(D.verdict[i], D.flags[i]), D.from[i], D.to[i] + 1, df, cw);
    }
    if (T) for (let k = 0; k < T.filled; k++) {
      if (T.st[k] === TXN_OPEN) continue;
      addSpan(tpyr, PYR, 2, tl.rowOf(T.lane[k]), T.st[k] === TXN_ABORTED ? 1 : 0, T.first[k], T.marker[k] + 1, df, cw);
    }
  }
  // binDecisionsTime adds decisions [i0, i1) to out (m columns of bounds),
  // ending each just before its end (END_OFF, as xEnd).
  function binDecisionsTime(bounds, m, i0, i1, out, nr) {
    const D = S.D, cs = S.meta.chunk_size, cur = [0];
    for (let i = i0; i < i1; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      if (D.from[i] >= bounds[m]) break;
      addSpanBounds(out, m, K, rowIdx(D.lane[i], nr), kindOf(D.verdict[i], D.flags[i]), D.from[i], D.to[i] + 1 - END_OFF, bounds, cur);
    }
  }
  // binTxnsTime: transaction spans [k0, k1) (first to marker), sorted by
  // first offset but ending anywhere, so each gets its own cursor.
  function binTxnsTime(bounds, m, k0, k1, out) {
    const T = S.T;
    for (let k = k0; k < k1; k++) {
      if (T.st[k] === TXN_OPEN) continue;
      addSpanBounds(out, m, 2, tl.rowOf(T.lane[k]), T.st[k] === TXN_ABORTED ? 1 : 0, T.first[k], T.marker[k] + 1 - END_OFF, bounds, [-1]);
    }
  }
  // pyrGeom maps the view onto pyramid columns: pixel x starts at column
  // p0 + x * pk (in offsets, or in time on the time axis).
  function pyrGeom() {
    if (state.axis === "time") {
      const [a, b] = tl.viewTimes(), [t0, t1] = S.pyrDirty || pyrAxis !== "time" ? tl.timeDomain() : [pyrT0, pyrT1], colT = (t1 - t0) / PYR;
      return { p0: (a - t0) / colT, pk: (b - a) / S.W / colT };
    }
    const colW = (domain.to - domain.from) / PYR;
    return { p0: (view.from - domain.from) / colW, pk: (view.to - view.from) / S.W / colW };
  }
  // The pyramid serves a view where a pixel spans at least one column.
  const pyrUsable = () => pyrGeom().pk >= 1;
  function ensurePyr(nr) { if (S.pyrDirty || pyrAxis !== state.axis || pyrRows !== nr) buildPyr(nr); }
  // fromPyr sums the pyramid columns under each pixel into out (w columns
  // of kk values per row).
  function fromPyr(src, rows, kk, out, w) {
    const { p0, pk } = pyrGeom();
    for (let x = 0; x < w; x++) {
      let c0 = Math.floor(p0 + x * pk), c1 = Math.floor(p0 + (x + 1) * pk) - 1;
      if (c1 < c0) c1 = c0;
      if (c1 < 0 || c0 >= PYR) continue;
      c0 = Math.max(c0, 0); c1 = Math.min(c1, PYR - 1);
      for (let r = 0; r < rows; r++) {
        const sb = r * PYR * kk, ob = (r * w + x) * kk;
        for (let c = c0; c <= c1; c++) for (let k = 0; k < kk; k++) out[ob + k] += src[sb + c * kk + k];
      }
    }
  }

  // binView fills bins (w pixel columns of K kinds per row, the gap row
  // last) for the decisions [i0, i1) in view.
  let bins = null;
  function binView(i0, i1, nr, w) {
    const D = S.D, cs = S.meta.chunk_size, n = w * (nr + 1) * K;
    if (!bins || bins.length !== n) bins = new Float32Array(n); else bins.fill(0);
    if (pyrUsable()) { ensurePyr(nr); fromPyr(pyr, nr + 1, K, bins, w); return bins; }
    // On the time axis x is linear in time, not in offsets: the pixel
    // columns' offsets (monotone, since held times never go back) place
    // the decisions.
    if (state.axis === "time") { binDecisionsTime(tl.viewBounds(w), w, i0, i1, bins, nr); return bins; }
    const cw = (view.to - view.from) / S.W;
    for (let i = i0; i < i1; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      addSpan(bins, w, K, rowIdx(D.lane[i], nr), kindOf(D.verdict[i], D.flags[i]), D.from[i], D.to[i] + 1, view.from, cw);
    }
    return bins;
  }

  // stack splits h pixels of column x of row r (kk values from base) in
  // proportion, in order, into heights hs (rounded on the running sum, so
  // they add up to h exactly); returns false for an empty column.
  function stack(b, base, kk, h, hs) {
    let tot = 0;
    for (let k = 0; k < kk; k++) tot += b[base + k];
    if (tot <= 0) return false;
    let run = 0, prev = 0;
    for (let k = 0; k < kk; k++) { run += b[base + k]; const e = Math.round(run / tot * h); hs[k] = e - prev; prev = e; }
    return true;
  }

  // drawBinned draws the decisions [i0, i1) of a view with more of them
  // than pixels. Each kind is one path, filled once: thousands of 1-2 px
  // rects as separate fillRect calls cost more to record and rasterise
  // (with software canvas) than the pixels they cover; a run of columns
  // whose segment of a kind has the same y and height is one rect.
  const hs = new Float32Array(K);
  function drawBinned(i0, i1, lh, nr) {
    const w = Math.ceil(S.W), b = binView(i0, i1, nr, w), COLORS = tl.COLORS;
    const paths = KINDS.map(() => new Path2D()), used = new Uint8Array(K);
    const top = 14, h = lh - 20;
    for (let r = 0; r < nr; r++) {
      const rs = new Float64Array(K).fill(-1), ry = new Float64Array(K), rh = new Float64Array(K);
      const flush = (k, x) => { if (rs[k] >= 0) { paths[k].rect(rs[k], ry[k], x - rs[k], rh[k]); used[k] = 1; rs[k] = -1; } };
      for (let x = 0; x < w; x++) {
        if (!stack(b, (r * w + x) * K, K, h, hs)) { for (let k = 0; k < K; k++) flush(k, x); continue; }
        let y = r * lh + top;
        for (let k = 0; k < K; k++) {
          const hk = hs[k];
          if (hk > 0 && rs[k] >= 0 && ry[k] === y && rh[k] === hk) { y += hk; continue; }
          flush(k, x);
          if (hk > 0) { rs[k] = x; ry[k] = y; rh[k] = hk; }
          y += hk;
        }
      }
      for (let k = 0; k < K; k++) flush(k, w);
    }
    for (let k = 0; k < K; k++) {
      if (!used[k]) continue;
      const kind = KINDS[k];
      ctx.fillStyle = kind === "gap" ? tl.pattern("gap") : COLORS[kind]; ctx.fill(paths[k]);
      if (kind === "aborted" || kind === "pending" || kind === "before") { ctx.fillStyle = tl.pattern(kind); ctx.fill(paths[k]); }
    }
    // Gaps (offsets without a record) span every lane: a column holding
    // any gap is hatched across them, a light pattern that does not hide
    // the batches under it.
    const gp = new Path2D(), gb = nr * w * K;
    let gaps = 0;
    for (let x = 0; x < w; x++) {
      let g = 0;
      for (let k = 0; k < K; k++) g += b[gb + x * K + k];
      if (g > 0) { gp.rect(x, 0, 1, nr * lh); gaps++; }
    }
    if (gaps) { ctx.fillStyle = tl.pattern("gap"); ctx.fill(gp); }
  }

  // drawTxnsBinned draws transaction spans [lo, end) when there are more
  // of them than pixels: per row and column the 4 px bar is split between
  // committed (COMMIT blue, on top) and aborted (orange) by their share of
  // the offsets the spans cover.
  let tbins = null;
  const ths = new Float32Array(2);
  function drawTxnsBinned(lo, end, lh, nr) {
    const T = S.T, w = Math.ceil(S.W), n = w * nr * 2;
    if (!tbins || tbins.length !== n) tbins = new Float32Array(n); else tbins.fill(0);
    if (pyrUsable()) { ensurePyr(nr); fromPyr(tpyr, nr, 2, tbins, w); }
    else if (state.axis === "time") binTxnsTime(tl.viewBounds(w), w, lo, end, tbins);
    else {
      const cw = (view.to - view.from) / S.W;
      for (let k = lo; k < end; k++) {
        if (T.st[k] === TXN_OPEN) continue;
        addSpan(tbins, w, 2, tl.rowOf(T.lane[k]), T.st[k] === TXN_ABORTED ? 1 : 0, T.first[k], T.marker[k] + 1, view.from, cw);
      }
    }
    const pc = new Path2D(), pa = new Path2D();
    for (let r = 0; r < nr; r++) {
      const y = r * lh + 5;
      for (let x = 0; x < w; x++) {
        if (!stack(tbins, (r * w + x) * 2, 2, 4, ths)) continue;
        if (ths[0] > 0) pc.rect(x, y, 1, ths[0]);
        if (ths[1] > 0) pa.rect(x, y + ths[0], 1, ths[1]);
      }
    }
    ctx.fillStyle = tl.COLORS.commit; ctx.fill(pc);
    ctx.fillStyle = tl.COLORS.aborted; ctx.fill(pa);
  }

  // overviewRange is the offsets [from, to) that pixel column x of the
  // overview sums on the offset axis (whole pyramid columns when it serves
  // the view): what a test compares the column's colours with.
  function overviewRange(x) {
    if (state.axis === "time") return null;
    if (!pyrUsable()) { const cw = (view.to - view.from) / S.W; return [view.from + x * cw, view.from + (x + 1) * cw]; }
    const { p0, pk } = pyrGeom(), colW = (domain.to - domain.from) / PYR;
    const c0 = Math.max(Math.floor(p0 + x * pk), 0), c1 = Math.min(Math.max(Math.floor(p0 + (x + 1) * pk) - 1, c0), PYR - 1);
    return [domain.from + c0 * colW, domain.from + (c1 + 1) * colW];
  }

  Object.assign(tl, { drawBinned, drawTxnsBinned, overviewRange });
})();
