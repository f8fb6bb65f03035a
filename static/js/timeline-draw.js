// txnscope timeline, drawing: the canvas (decisions one by one when few are
// in view, binned per pixel column or read from the overview pyramid when
// there are more than pixels; transaction spans; the pinning transaction),
// each frame on requestAnimationFrame, and the hidden list of the batches in
// view that makes the canvas accessible.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { root, ctx, markersEl, batchList, part, pinned, state, domain, view, metrics, mark, S, BAND, END_OFF } = tl;
  const C = window.txnscopeContract;
  const { VERDICTS, CAUSES, VERDICT_WORDS, CAUSE_WORDS, F_COMMIT, F_ABORT, LANE_GAP } = C;
  const { DELIVERED, ABORTED, CONTROL, PENDING, BEFORE_POSITION } = C.VERDICT;
  const { OPEN: TXN_OPEN, COMMITTED: TXN_COMMITTED, ABORTED: TXN_ABORTED } = C.TXN_STATE;

  const COLORS = {
    delivered: "#009E73", aborted: "#D55E00", commit: "#0072B2", abort: "#CC79A7", control: "#56B4E9",
    pending: "#E69F00", before: "#999999", gap: "#dddddd", loading: "#f0f0f0",
  };
  // Draw priority when several decisions share a pixel: what a reader most
  // needs to see wins (aborted data, then the pending region, markers...).
  const BIN_ORDER = [["aborted", 1], ["pending", 2], ["abort", 4], ["commit", 8], ["control", 16], ["delivered", 32], ["before", 64], ["gap", 128]];

  // binOf is the kind of decision i, which picks its colour and pattern.
  function binOf(i) {
    const D = S.D;
    const v = D.verdict[i], f = D.flags[i];
    switch (v) {
      case DELIVERED: return "delivered";
      case ABORTED: return "aborted";
      case CONTROL: return f & F_COMMIT ? "commit" : f & F_ABORT ? "abort" : "control";
      case PENDING: return "pending";
      case BEFORE_POSITION: return "before";
      default: return "gap";
    }
  }

  let pending = false, pendingMini = false;
  // While the stream runs, chunk arrivals redraw at most every 100 ms so
  // that decoding keeps up; interaction always redraws on the next frame.
  let lastStreamDraw = 0, streamTimer = 0;
  function schedule() { if (!pending) { pending = true; requestAnimationFrame(draw); } }
  function scheduleStream() {
    if (pending || streamTimer) return;
    const wait = Math.max(0, 100 - (performance.now() - lastStreamDraw));
    streamTimer = setTimeout(() => { streamTimer = 0; lastStreamDraw = performance.now(); schedule(); }, wait);
  }
  function scheduleMini() { if (!pendingMini) { pendingMini = true; setTimeout(() => { pendingMini = false; tl.drawMini(); }, S.done ? 0 : 600); } }

  const patterns = {};
  function pattern(kind) {
    if (patterns[kind]) return patterns[kind];
    const c = document.createElement("canvas"); c.width = c.height = 8;
    const g = c.getContext("2d");
    g.strokeStyle = kind === "pending" ? "rgba(0,0,0,.55)" : "rgba(255,255,255,.85)"; g.fillStyle = "rgba(0,0,0,.5)"; g.lineWidth = 2;
    if (kind === "aborted") { g.beginPath(); g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke(); }
    if (kind === "pending") { g.beginPath(); g.arc(2, 2, 1, 0, 7); g.arc(6, 6, 1, 0, 7); g.fill(); }
    if (kind === "before") { g.fillStyle = "rgba(255,255,255,.6)"; g.fillRect(0, 0, 8, 2); g.fillRect(0, 4, 8, 2); }
    if (kind === "gap") { g.strokeStyle = "#aaa"; g.lineWidth = 1; g.beginPath(); g.moveTo(0, 0); g.lineTo(8, 8); g.stroke(); }
    return (patterns[kind] = ctx.createPattern(c, "repeat"));
  }

  function draw() {
    pending = false;
    const t0 = performance.now();
    const lh = tl.laneH(), nl = S.laneEls.length;
    ctx.setTransform(S.dpr, 0, 0, S.dpr, 0, 0);
    ctx.clearRect(0, 0, S.W, S.H);
    // lane stripes
    for (let l = 0; l < nl; l++) { ctx.fillStyle = l % 2 ? "#fafafa" : "#ffffff"; ctx.fillRect(0, l * lh, S.W, lh); }
    // above the LSO / HWM: a faint wash so the unreadable region shows
    const xl = tl.xOf(part.lso), xh = tl.xOf(part.hwm);
    if (xl < S.W) { ctx.fillStyle = "rgba(230,159,0,.07)"; ctx.fillRect(Math.max(xl, 0), 0, S.W, S.H); }
    if (xh < S.W) { ctx.fillStyle = "rgba(0,0,0,.05)"; ctx.fillRect(Math.max(xh, 0), 0, S.W, S.H); }
    const visible = [];
    let visibleCount = 0;
    if (S.D && S.D.n) {
      const [i0, i1] = tl.visibleRange(view.from, view.to);
      visibleCount = i1 - i0;
      if (i1 - i0 > S.W * 1.5) drawBinned(i0, i1, lh, nl); else drawEach(i0, i1, lh, nl, visible);
      drawLoading(lh, nl);
    }
    const t1 = performance.now();
    drawTxns(lh, nl);
    const t2 = performance.now();
    tl.placeMarkers();
    tl.placeFetches();
    tl.drawAxis();
    updateList(visible, visibleCount);
    const t3 = performance.now();
    metrics.parts = { batches: t1 - t0, txns: t2 - t1, dom: t3 - t2 };
    S.lastDrawVisible = visible;
    if (S.done) S.painted = true;
    metrics.frames.push(performance.now() - t0);
    if (metrics.frames.length > 600) metrics.frames.shift();
    metrics.draws = (metrics.draws || 0) + 1;
    // First paint of the visible window, measured from navigation start.
    if (metrics.firstPaint === null && (S.windowLoaded || tl.viewLoaded())) { metrics.firstPaint = performance.now(); mark("paint"); }
    if (S.lessonMark) { const x0 = tl.xOf(S.lessonMark.from), x1 = tl.xEnd(S.lessonMark.to); ctx.strokeStyle = "#000"; ctx.lineWidth = 3; ctx.strokeRect(x0 - 2, 1.5, Math.max(x1 - x0, 2) + 4, S.H - 3); }
    tl.drawViewportOnMini();
  }

  function drawLoading(lh, nl) {
    const D = S.D, starts = S.meta.chunk_starts;
    for (let c = tl.chunkFor(view.from); c < starts.length; c++) {
      if (starts[c] > view.to) break;
      if (D.loaded[c]) continue;
      const x0 = Math.max(tl.xOf(starts[c]), 0), x1 = c + 1 < starts.length ? tl.xOf(starts[c + 1]) : S.W;
      ctx.fillStyle = "rgba(200,200,200,.35)"; ctx.fillRect(x0, 0, Math.max(x1 - x0, 1), nl * lh);
    }
  }

  // The overview level of detail: per lane (and a row for gaps), PYR
  // columns over the whole domain, each a byte of kind bits. It is rebuilt
  // from the typed arrays when chunks have arrived, and draws any view
  // where one pixel spans at least one column without touching the
  // decisions; closer views iterate the visible decisions.
  //
  // On the time axis the columns are equal steps of time over the domain's
  // times instead (pyrT0, pyrT1 when it was built); pyrAxis says which.
  const PYR = 8192;
  let pyr = null, tpyr = null, pyrAxis = "offset", pyrT0 = 0, pyrT1 = 1;
  const kindBit = (v, f) => v === DELIVERED ? 32 : v === ABORTED ? 1 : v === CONTROL ? (f & F_COMMIT ? 8 : f & F_ABORT ? 4 : 16) : v === PENDING ? 2 : v === BEFORE_POSITION ? 64 : 128;
  function buildPyr(nl) {
    const D = S.D, T = S.T, meta = S.meta;
    if (!pyr || pyr.length !== PYR * (nl + 1)) { pyr = new Uint8Array(PYR * (nl + 1)); tpyr = new Uint8Array(PYR * nl); }
    else { pyr.fill(0); tpyr.fill(0); }
    pyrAxis = state.axis; S.pyrDirty = false;
    if (state.axis === "time") { buildTimePyr(nl); return; }
    const scale = PYR / (domain.to - domain.from), df = domain.from, cs = meta.chunk_size;
    for (let i = 0; i < D.n; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      let c0 = Math.floor((D.from[i] - df) * scale), c1 = Math.floor((D.to[i] + 1 - df) * scale);
      if (c0 < 0) c0 = 0; if (c1 >= PYR) c1 = PYR - 1; if (c1 < c0) c1 = c0;
      const ln = D.lane[i], base = (ln === LANE_GAP ? nl : Math.min(ln, nl - 1)) * PYR, bit = kindBit(D.verdict[i], D.flags[i]);
      for (let c = c0; c <= c1; c++) pyr[base + c] |= bit;
    }
    if (T) for (let k = 0; k < T.filled; k++) {
      if (T.st[k] === TXN_OPEN) continue;
      let c0 = Math.floor((T.first[k] - df) * scale), c1 = Math.floor((T.marker[k] + 1 - df) * scale);
      if (c0 < 0) c0 = 0; if (c1 >= PYR) c1 = PYR - 1; if (c1 < c0) c1 = c0;
      const base = Math.min(T.lane[k], nl - 1) * PYR, bit = T.st[k] === TXN_ABORTED ? 2 : 1;
      for (let c = c0; c <= c1; c++) tpyr[base + c] |= bit;
    }
  }
  function buildTimePyr(nl) {
    const D = S.D, T = S.T;
    [pyrT0, pyrT1] = tl.timeDomain();
    const bounds = tl.timeBounds(pyrT0, pyrT1, PYR);
    binTime(bounds, PYR, 0, D.n, pyr, nl);
    if (T) binTxnsTime(bounds, PYR, 0, T.filled, tpyr, nl);
  }
  // binTime ORs the kind bit of decisions [i0, i1) into out (m columns per
  // row, a row per lane and the gap row last), column c holding the offsets
  // [bounds[c], bounds[c + 1]). The bounds are sorted and so are the
  // decisions, so a cursor that only moves forward places them: no search
  // per decision. A decision fills the columns from its first offset to
  // just before its end (END_OFF, as xEnd), like the offset path's
  // floor((to + 1 - from) * scale).
  function binTime(bounds, m, i0, i1, out, nl) {
    const D = S.D, meta = S.meta;
    const cs = meta.chunk_size, lastB = bounds[m];
    let c = 0;
    for (let i = i0; i < i1; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      const a = D.from[i], e = D.to[i] + 1 - END_OFF;
      if (e < bounds[0]) continue;
      if (a >= lastB) break;
      while (c + 1 < m && bounds[c + 1] <= a) c++;
      let c1 = c;
      while (c1 + 1 < m && bounds[c1 + 1] <= e) c1++;
      const ln = D.lane[i], base = (ln === LANE_GAP ? nl : Math.min(ln, nl - 1)) * m, bit = kindBit(D.verdict[i], D.flags[i]);
      for (let x = c; x <= c1; x++) out[base + x] |= bit;
    }
  }
  // binTxnsTime is binTime for transaction spans [k0, k1) (first to
  // marker). They are sorted by first offset but end anywhere, so each end
  // is searched.
  function binTxnsTime(bounds, m, k0, k1, out, nl) {
    const T = S.T;
    for (let k = k0; k < k1; k++) {
      if (T.st[k] === TXN_OPEN) continue;
      const c1 = tl.colOf(bounds, m, T.marker[k] + 1 - END_OFF);
      if (c1 < 0 || T.first[k] >= bounds[m]) continue;
      const c0 = Math.max(tl.colOf(bounds, m, T.first[k]), 0);
      const base = Math.min(T.lane[k], nl - 1) * m, bit = T.st[k] === TXN_ABORTED ? 2 : 1;
      for (let x = c0; x <= c1; x++) out[base + x] |= bit;
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
  function ensurePyr(nl) { if (S.pyrDirty || pyrAxis !== state.axis) buildPyr(nl); }
  // fromPyr ORs the pyramid columns under each pixel into out (w per row).
  function fromPyr(src, rows, out, w) {
    const { p0, pk } = pyrGeom();
    for (let x = 0; x < w; x++) {
      let c0 = Math.floor(p0 + x * pk);
      let c1 = Math.floor(p0 + (x + 1) * pk) - 1;
      if (c1 < c0) c1 = c0;
      if (c1 < 0 || c0 >= PYR) continue;
      c0 = Math.max(c0, 0); c1 = Math.min(c1, PYR - 1);
      for (let r = 0; r < rows; r++) {
        let m = 0;
        const base = r * PYR;
        for (let c = c0; c <= c1; c++) m |= src[base + c];
        out[r * w + x] = m;
      }
    }
  }

  // drawBinned: more decisions than pixels. Each lane gets one byte per
  // column with a bit per kind; the column takes the highest-priority kind.
  let bins = null;
  function drawBinned(i0, i1, lh, nl) {
    const D = S.D, meta = S.meta;
    const w = Math.ceil(S.W);
    if (!bins || bins.length !== w * (nl + 1)) bins = new Uint8Array(w * (nl + 1)); else bins.fill(0);
    const cs = meta.chunk_size, scale = S.W / (view.to - view.from), vf = view.from;
    if (pyrUsable()) {
      ensurePyr(nl);
      fromPyr(pyr, nl + 1, bins, w);
      i1 = i0; // skip the per-decision pass
    } else if (state.axis === "time") {
      // x is linear in time, not in offsets: the pixel columns' offsets
      // (monotone, since held times never go back) place the decisions.
      binTime(tl.viewBounds(w), w, i0, i1, bins, nl);
      i1 = i0;
    }
    for (let i = i0; i < i1; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      let x0 = Math.floor((D.from[i] - vf) * scale), x1 = Math.floor((D.to[i] + 1 - vf) * scale);
      if (x0 < 0) x0 = 0; if (x1 >= w) x1 = w - 1; if (x1 < x0) x1 = x0;
      const ln = D.lane[i], row = ln === LANE_GAP ? nl : Math.min(ln, nl - 1);
      const bit = kindBit(D.verdict[i], D.flags[i]), base = row * w;
      for (let x = x0; x <= x1; x++) bins[base + x] |= bit;
    }
    // One path per kind, filled once: thousands of 1-2 px runs as separate
    // fillRect calls cost more to record and rasterise (in the frame's
    // commit, with software canvas) than the pixels they cover. Runs of a
    // row do not overlap, so the order of kinds within lanes does not
    // matter; the gap row spans every lane and is filled last, as before.
    const paths = {}, gapPath = new Path2D();
    let gapRuns = 0;
    for (let row = 0; row <= nl; row++) {
      const base = row * w;
      let runStart = 0, runKind = null;
      const flush = (x) => {
        if (!runKind) return;
        if (row === nl) { gapPath.rect(runStart, 0, x - runStart, nl * lh); gapRuns++; return; }
        (paths[runKind] || (paths[runKind] = new Path2D())).rect(runStart, row * lh + 14, x - runStart, lh - 20);
      };
      for (let x = 0; x < w; x++) {
        const m = bins[base + x];
        let kind = null;
        if (m) for (const [k, b] of BIN_ORDER) if (m & b) { kind = k; break; }
        if (kind !== runKind) { flush(x); runStart = x; runKind = kind; }
      }
      flush(w);
    }
    for (const k in paths) {
      ctx.fillStyle = k === "gap" ? pattern("gap") : COLORS[k]; ctx.fill(paths[k]);
      if (k === "aborted" || k === "pending") { ctx.fillStyle = pattern(k); ctx.fill(paths[k]); }
    }
    if (gapRuns) { ctx.fillStyle = pattern("gap"); ctx.fill(gapPath); }
  }

  function drawEach(i0, i1, lh, nl, visible) {
    const D = S.D, cs = S.meta.chunk_size, { xOf, xEnd } = tl;
    for (let i = i0; i < i1; i++) {
      if (!D.loaded[Math.floor(i / cs)]) { i = (Math.floor(i / cs) + 1) * cs - 1; continue; }
      const x0 = xOf(D.from[i]), x1 = xEnd(D.to[i]);
      const ln = D.lane[i], kind = binOf(i);
      visible.push(i);
      if (ln === LANE_GAP) {
        ctx.fillStyle = pattern("gap"); ctx.fillRect(x0, 0, x1 - x0, nl * lh);
        continue;
      }
      const row = Math.min(ln, nl - 1), y = row * lh + 14, h = lh - 20;
      const gapPx = (x1 - x0) > 6 ? 1 : 0;
      // On the time axis a batch lasts a few ms of a view that may span
      // hours: 3 px keep it visible.
      const x = x0 + gapPx, w = Math.max(x1 - x0 - 2 * gapPx, state.axis === "time" ? 3 : 1);
      ctx.fillStyle = COLORS[kind]; ctx.fillRect(x, y, w, h);
      if (kind === "aborted" || kind === "pending" || kind === "before") { ctx.fillStyle = pattern(kind); ctx.fillRect(x, y, w, h); }
      const f = D.flags[i], glyph = kind === "commit" || f & F_COMMIT ? "commit" : kind === "abort" || f & F_ABORT ? "abort" : null;
      if (glyph) {
        // COMMIT: a check; ABORT: a cross. A marker not yet readable
        // (pending, before the position) keeps its glyph on that fill.
        ctx.strokeStyle = kind === "commit" ? "#fff" : "#000"; ctx.lineWidth = 2;
        const cx = x + w / 2, cy = y + h / 2, r = Math.min(w, h) / 2 - 2;
        if (r >= 2) {
          ctx.beginPath();
          if (glyph === "commit") { ctx.moveTo(cx - r, cy); ctx.lineTo(cx - r / 3, cy + r * 0.7); ctx.lineTo(cx + r, cy - r * 0.7); }
          else { ctx.moveTo(cx - r, cy - r); ctx.lineTo(cx + r, cy + r); ctx.moveTo(cx + r, cy - r); ctx.lineTo(cx - r, cy + r); }
          ctx.stroke();
        }
      }
      if (state.selected !== null && D.from[i] <= state.selected && state.selected <= D.to[i] && ln !== LANE_GAP) {
        ctx.strokeStyle = "#000"; ctx.lineWidth = 2; ctx.strokeRect(x - 1, y - 1, w + 2, h + 2);
      }
      if (w > 40) {
        ctx.font = "11px system-ui, sans-serif"; ctx.textBaseline = "middle";
        const label = D.from[i] === D.to[i] ? String(D.from[i]) : D.from[i] + "–" + D.to[i];
        const tw = ctx.measureText(label).width;
        // Keep the label on the visible part of a batch cut by the edge.
        const lx = Math.max(x, 0), vw = Math.min(x + w, S.W) - lx;
        if (tw < vw - 24) {
          // A white plate keeps the label readable over hatching.
          ctx.fillStyle = "rgba(255,255,255,.92)"; ctx.fillRect(lx + 2, y + h - 14, tw + 6, 12);
          ctx.fillStyle = "#000"; ctx.fillText(label, lx + 5, y + h - 8);
        }
      }
    }
  }

  // drawTxns draws each transaction as a bar from its first offset to its
  // marker above the lane's batches. Open ones (from meta) run to the HWM
  // and get a DOM flag. With more transactions than pixels they are binned
  // per column, as decisions are.
  let tbins = null;
  function drawTxns(lh, nl) {
    const T = S.T, meta = S.meta, { xOf, xEnd } = tl;
    markersEl.querySelectorAll(".flag").forEach((e) => e.remove());
    if (T && T.filled) {
      // Transaction frames arrive in order after the window: search the
      // prefix that has arrived.
      let lo = 0, hi = T.filled;
      const from = view.from - T.maxLen - 1;
      while (lo < hi) { const m = (lo + hi) >> 1; if (T.first[m] < from) lo = m + 1; else hi = m; }
      let end = lo; { let l2 = lo, h2 = T.filled; while (l2 < h2) { const m = (l2 + h2) >> 1; if (T.first[m] < view.to) l2 = m + 1; else h2 = m; } end = l2; }
      const w = Math.ceil(S.W), scale = S.W / (view.to - view.from), vf = view.from;
      if (end - lo > S.W) {
        if (!tbins || tbins.length !== w * nl) tbins = new Uint8Array(w * nl); else tbins.fill(0);
        let kEnd = end;
        if (pyrUsable()) {
          ensurePyr(nl);
          fromPyr(tpyr, nl, tbins, w);
          kEnd = lo;
        } else if (state.axis === "time") {
          binTxnsTime(tl.viewBounds(w), w, lo, end, tbins, nl);
          kEnd = lo;
        }
        for (let k = lo; k < kEnd; k++) {
          if (T.st[k] === TXN_OPEN) continue;
          let x0 = Math.floor((T.first[k] - vf) * scale), x1 = Math.floor((T.marker[k] + 1 - vf) * scale);
          if (x1 < 0 || x0 >= w) continue;
          if (x0 < 0) x0 = 0; if (x1 >= w) x1 = w - 1;
          const base = Math.min(T.lane[k], nl - 1) * w, bit = T.st[k] === TXN_ABORTED ? 2 : 1;
          for (let x = x0; x <= x1; x++) tbins[base + x] |= bit;
        }
        // One path per colour (see drawBinned); the runs do not overlap.
        const pc = new Path2D(), pa = new Path2D();
        for (let row = 0; row < nl; row++) {
          const y = row * lh + 5, base = row * w;
          for (let x = 0; x < w; x++) {
            const m = tbins[base + x];
            if (!m) continue;
            let x2 = x; while (x2 + 1 < w && tbins[base + x2 + 1] === m) x2++;
            if (m & 2) pa.rect(x, y + 1, x2 - x + 1, 2); else pc.rect(x, y, x2 - x + 1, 4);
            x = x2;
          }
        }
        ctx.fillStyle = COLORS.commit; ctx.fill(pc);
        ctx.fillStyle = COLORS.aborted; ctx.fill(pa);
      } else {
        for (let k = lo; k < end; k++) {
          const st = T.st[k];
          if (st === TXN_OPEN) continue;
          const x0 = Math.max(xOf(T.first[k]), -2), x1 = Math.min(xEnd(T.marker[k]), S.W + 2);
          if (x1 < 0) continue;
          const y = Math.min(T.lane[k], nl - 1) * lh + 5;
          if (st === TXN_COMMITTED) { ctx.fillStyle = COLORS.commit; ctx.fillRect(x0, y, Math.max(x1 - x0, 1), 4); }
          else { ctx.fillStyle = COLORS.aborted; for (let x = x0; x < x1; x += 6) ctx.fillRect(x, y, Math.min(4, x1 - x), 4); }
        }
      }
    }
    // Open transactions run to the high watermark and are flagged.
    const open = (meta && meta.open_transactions) || [];
    open.forEach((t, n) => {
      const ln = meta.lanes.findIndex((l) => l.producer_id === t.producer_id);
      const row = Math.min(Math.max(ln, 0), nl - 1), y = row * lh + 5;
      const x0 = xOf(t.first_offset), x1 = xOf(part.hwm);
      if (x1 < 0 || x0 > S.W) return;
      ctx.fillStyle = COLORS.pending; ctx.fillRect(Math.max(x0, -2), y - 1, Math.max(Math.min(x1, S.W + 2) - Math.max(x0, -2), 2), 6);
      if (n < 50) {
        const f = document.createElement("div");
        f.className = "flag"; f.dataset.testid = "open-txn-" + t.producer_id + "-" + t.first_offset;
        f.textContent = "OPEN txn of producer " + t.producer_id + " from " + t.first_offset + " → HWM";
        f.style.left = Math.max(x0, 0) + "px"; f.style.top = (BAND + row * lh) + "px";
        markersEl.appendChild(f);
      }
    });
    drawPinned(lh, nl);
  }

  // drawPinned outlines the transaction that pins the LSO.
  let pinnedEl = null;
  function drawPinned(lh, nl) {
    if (!pinned || !S.meta) return;
    if (root.dataset.live !== undefined) { if (pinnedEl) pinnedEl.hidden = true; return; } // live.js: the page-load diagnosis is stale
    const ln = S.meta.lanes.findIndex((l) => l.producer_id === pinned.producer);
    pinned.lane = ln;
    if (!pinnedEl) {
      pinnedEl = document.createElement("div");
      pinnedEl.className = "pinned-highlight"; pinnedEl.dataset.testid = "pinned-highlight";
      pinnedEl.title = "producer " + pinned.producer + "'s " + pinned.state + " transaction from offset " + pinned.first + " pins the LSO";
      pinnedEl.innerHTML = "<span></span>";
      pinnedEl.firstChild.textContent = "pins LSO · " + pinned.state;
      markersEl.appendChild(pinnedEl);
    }
    const x0 = tl.xOf(pinned.first), x1 = tl.xEnd(pinned.last), xs = tl.xOf(Math.max(part.hwm, pinned.last + 1));
    const row = Math.min(Math.max(ln, 0), nl - 1);
    pinned.shown = ln >= 0 && x1 >= 0 && x0 <= S.W;
    pinnedEl.hidden = !pinned.shown;
    if (!pinned.shown) return;
    const y = row * lh;
    ctx.save();
    // The span to the HWM: a soft glow; the batches: a strong outline.
    ctx.shadowColor = "rgba(204,0,102,.85)"; ctx.shadowBlur = 10;
    ctx.strokeStyle = "rgba(204,0,102,.55)"; ctx.lineWidth = 2;
    ctx.strokeRect(Math.max(x0, -4), y + 3, Math.min(xs, S.W + 4) - Math.max(x0, -4), 8);
    ctx.strokeStyle = "#cc0066"; ctx.lineWidth = 3;
    ctx.strokeRect(Math.max(x0, -4) + 1, y + 12, Math.max(Math.min(x1, S.W + 4) - Math.max(x0, -4) - 2, 2), lh - 16);
    ctx.restore();
    pinned.x0 = x0; pinned.x1 = x1;
    const l = Math.max(x0, 0), r = Math.min(x1, S.W);
    pinnedEl.style.left = l + "px"; pinnedEl.style.width = Math.max(r - l, 3) + "px";
    pinnedEl.style.top = (BAND + y + 10) + "px"; pinnedEl.style.height = (lh - 12) + "px";
    pinnedEl.classList.toggle("flip", r > S.W - 130);
  }

  // The hidden list makes the canvas accessible (and testable) when few
  // batches are in view.
  //
  // Rebuilding it is DOM work (up to 2,000 elements, then style and layout)
  // that made zoom frames take 80-140 ms in the 1M-batch benchmark, so it
  // runs once the view has stopped moving, not on every frame.
  let listKey = "", listTimer = 0;
  function updateList(visible, count) {
    const key = S.gen + ":" + (visible.length ? visible[0] + "-" + visible[visible.length - 1] : "none") + ":" + count;
    if (key === listKey) return;
    S.listFresh = false;
    clearTimeout(listTimer);
    listTimer = setTimeout(() => { S.listFresh = true; rebuildList(key, visible, count); }, 120);
  }
  function rebuildList(key, visible, count) {
    const D = S.D;
    listKey = key;
    batchList.textContent = "";
    if (count === 0 || count >= 2000 || visible.length === 0) return;
    const frag = document.createDocumentFragment();
    for (const i of visible) {
      const li = document.createElement("li");
      li.dataset.testid = "batch-" + D.from[i];
      li.dataset.decision = VERDICTS[D.verdict[i]];
      li.dataset.cause = CAUSES[D.cause[i]] || "unknown";
      li.dataset.lane = D.lane[i] === LANE_GAP ? "gap" : D.lane[i];
      if (D.flags[i] & F_COMMIT) li.dataset.control = "COMMIT";
      if (D.flags[i] & F_ABORT) li.dataset.control = "ABORT";
      li.textContent = "offsets " + D.from[i] + "–" + D.to[i] + ": " + VERDICT_WORDS[D.verdict[i]] + " (" + (CAUSE_WORDS[D.cause[i]] || "") + ")";
      frag.appendChild(li);
    }
    batchList.appendChild(frag);
  }

  Object.assign(tl, { COLORS, binOf, schedule, scheduleMini, scheduleStream });
})();
