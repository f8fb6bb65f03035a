// txnscope timeline, drawing: the canvas (decisions one by one when few are
// in view; with more than pixels, the proportional overview of
// timeline-overview.js; transaction spans; the pinning transaction),
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
  const { OPEN: TXN_OPEN, COMMITTED: TXN_COMMITTED } = C.TXN_STATE;

  // The decision colours and the canvas's other colours are the theme's
  // (app.css's custom properties, light or dark): read once, and again when
  // the theme changes (theme.js's event, or the system's preference).
  const COLORS = {}, THEME = {};
  const THEME_VARS = { laneA: "--lane-a", laneB: "--lane-b", ink: "--ink", plate: "--plate", onCommit: "--on-commit",
    onAbort: "--on-abort", onPending: "--on-pending", pin: "--pin", mini: "--mini-bg", fg: "--fg" };
  function readTheme() {
    const cs = getComputedStyle(document.documentElement), v = (name) => cs.getPropertyValue(name).trim();
    for (const k of ["delivered", "aborted", "commit", "abort", "control", "pending", "before", "gap"]) COLORS[k] = v("--" + k);
    for (const k in THEME_VARS) THEME[k] = v(THEME_VARS[k]);
    THEME.dark = cs.colorScheme === "dark";
    for (const k in patterns) delete patterns[k];
  }
  function themeChanged() { readTheme(); schedule(); tl.drawMini(); }
  document.addEventListener("txnscope:theme", themeChanged);
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", themeChanged);

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
  readTheme();
  function pattern(kind) {
    if (patterns[kind]) return patterns[kind];
    const c = document.createElement("canvas"); c.width = c.height = 8;
    const g = c.getContext("2d");
    g.strokeStyle = kind === "pending" ? "rgba(0,0,0,.55)" : THEME.dark ? "rgba(0,0,0,.45)" : "rgba(255,255,255,.85)"; g.fillStyle = "rgba(0,0,0,.5)"; g.lineWidth = 2;
    if (kind === "aborted") { g.beginPath(); g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke(); }
    if (kind === "pending") { g.beginPath(); g.arc(2, 2, 1, 0, 7); g.arc(6, 6, 1, 0, 7); g.fill(); }
    if (kind === "before") { g.fillStyle = THEME.dark ? "rgba(0,0,0,.35)" : "rgba(255,255,255,.6)"; g.fillRect(0, 0, 8, 2); g.fillRect(0, 4, 8, 2); }
    if (kind === "gap") { g.strokeStyle = COLORS.gap; g.lineWidth = 1; g.beginPath(); g.moveTo(0, 0); g.lineTo(8, 8); g.stroke(); }
    return (patterns[kind] = ctx.createPattern(c, "repeat"));
  }

  function draw() {
    pending = false;
    const t0 = performance.now();
    const lh = tl.laneH(), nl = S.laneEls.length;
    ctx.setTransform(S.dpr, 0, 0, S.dpr, 0, 0);
    ctx.clearRect(0, 0, S.W, S.H);
    // lane stripes
    for (let l = 0; l < nl; l++) { ctx.fillStyle = l % 2 ? THEME.laneB : THEME.laneA; ctx.fillRect(0, l * lh, S.W, lh); }
    // above the LSO / HWM: a faint wash so the unreadable region shows
    const xl = tl.xOf(part.lso), xh = tl.xOf(part.hwm);
    if (xl < S.W) { ctx.fillStyle = "rgba(230,159,0,.07)"; ctx.fillRect(Math.max(xl, 0), 0, S.W, S.H); }
    if (xh < S.W) { ctx.fillStyle = THEME.dark ? "rgba(255,255,255,.05)" : "rgba(0,0,0,.05)"; ctx.fillRect(Math.max(xh, 0), 0, S.W, S.H); }
    const visible = [];
    let visibleCount = 0;
    if (S.D && S.D.n) {
      const [i0, i1] = tl.visibleRange(view.from, view.to);
      visibleCount = i1 - i0;
      if (i1 - i0 > S.W * 1.5) tl.drawBinned(i0, i1, lh, nl); else drawEach(i0, i1, lh, nl, visible);
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
    if (S.lessonMark) { const x0 = tl.xOf(S.lessonMark.from), x1 = tl.xEnd(S.lessonMark.to); ctx.strokeStyle = THEME.ink; ctx.lineWidth = 3; ctx.strokeRect(x0 - 2, 1.5, Math.max(x1 - x0, 2) + 4, S.H - 3); }
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
      const row = tl.rowOf(ln), y = row * lh + 14, h = lh - 20;
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
        ctx.strokeStyle = kind === "commit" ? THEME.onCommit : kind === "abort" ? THEME.onAbort : "#000"; ctx.lineWidth = 2;
        const cx = x + w / 2, cy = y + h / 2, r = Math.min(w, h) / 2 - 2;
        if (r >= 2) {
          ctx.beginPath();
          if (glyph === "commit") { ctx.moveTo(cx - r, cy); ctx.lineTo(cx - r / 3, cy + r * 0.7); ctx.lineTo(cx + r, cy - r * 0.7); }
          else { ctx.moveTo(cx - r, cy - r); ctx.lineTo(cx + r, cy + r); ctx.moveTo(cx + r, cy - r); ctx.lineTo(cx - r, cy + r); }
          ctx.stroke();
        }
      }
      if (state.selected !== null && D.from[i] <= state.selected && state.selected <= D.to[i] && ln !== LANE_GAP) {
        ctx.strokeStyle = THEME.ink; ctx.lineWidth = 2; ctx.strokeRect(x - 1, y - 1, w + 2, h + 2);
      }
      if (w > 40) {
        ctx.font = "11px system-ui, sans-serif"; ctx.textBaseline = "middle";
        const label = D.from[i] === D.to[i] ? String(D.from[i]) : D.from[i] + "–" + D.to[i];
        const tw = ctx.measureText(label).width;
        // Keep the label on the visible part of a batch cut by the edge.
        const lx = Math.max(x, 0), vw = Math.min(x + w, S.W) - lx;
        if (tw < vw - 24) {
          // A white plate keeps the label readable over hatching.
          ctx.fillStyle = THEME.plate; ctx.fillRect(lx + 2, y + h - 14, tw + 6, 12);
          ctx.fillStyle = THEME.fg; ctx.fillText(label, lx + 5, y + h - 8);
        }
      }
    }
  }

  // drawTxns draws each transaction as a bar from its first offset to its
  // marker above the lane's batches. Open ones (from meta) run to the HWM
  // and get a DOM flag. With more transactions than pixels the overview
  // draws their mix per column (timeline-overview.js), as for decisions.
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
      if (end - lo > S.W) tl.drawTxnsBinned(lo, end, lh, nl);
      else {
        for (let k = lo; k < end; k++) {
          const st = T.st[k];
          if (st === TXN_OPEN) continue;
          const x0 = Math.max(xOf(T.first[k]), -2), x1 = Math.min(xEnd(T.marker[k]), S.W + 2);
          if (x1 < 0) continue;
          const y = tl.rowOf(T.lane[k]) * lh + 5;
          if (st === TXN_COMMITTED) { ctx.fillStyle = COLORS.commit; ctx.fillRect(x0, y, Math.max(x1 - x0, 1), 4); }
          else { ctx.fillStyle = COLORS.aborted; for (let x = x0; x < x1; x += 6) ctx.fillRect(x, y, Math.min(4, x1 - x), 4); }
        }
      }
    }
    // Open transactions run to the high watermark and are flagged.
    const open = (meta && meta.open_transactions) || [];
    open.forEach((t, n) => {
      const ln = meta.lanes.findIndex((l) => tl.pid(l) === tl.pid(t));
      const row = tl.rowOf(Math.max(ln, 0)), y = row * lh + 5;
      const x0 = xOf(t.first_offset), x1 = xOf(part.hwm);
      if (x1 < 0 || x0 > S.W) return;
      ctx.fillStyle = COLORS.pending; ctx.fillRect(Math.max(x0, -2), y - 1, Math.max(Math.min(x1, S.W + 2) - Math.max(x0, -2), 2), 6);
      if (n < 50) {
        const f = document.createElement("div");
        f.className = "flag"; f.dataset.testid = "open-txn-" + tl.pid(t) + "-" + t.first_offset;
        f.textContent = "OPEN txn of producer " + tl.pid(t) + " from " + t.first_offset + " → HWM";
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
    const ln = S.meta.lanes.findIndex((l) => tl.pid(l) === pinned.pid);
    pinned.lane = ln;
    if (!pinnedEl) {
      pinnedEl = document.createElement("div");
      pinnedEl.className = "pinned-highlight"; pinnedEl.dataset.testid = "pinned-highlight";
      pinnedEl.title = "producer " + pinned.pid + "'s " + pinned.stateText + " transaction from offset " + pinned.first + " pins the LSO";
      pinnedEl.innerHTML = "<span></span>";
      pinnedEl.firstChild.textContent = "pins LSO · " + pinned.stateText;
      markersEl.appendChild(pinnedEl);
    }
    const x0 = tl.xOf(pinned.first), x1 = tl.xEnd(pinned.last), xs = tl.xOf(Math.max(part.hwm, pinned.last + 1));
    const row = tl.rowOf(Math.max(ln, 0));
    pinned.shown = ln >= 0 && x1 >= 0 && x0 <= S.W;
    pinnedEl.hidden = !pinned.shown;
    if (!pinned.shown) return;
    const y = row * lh;
    ctx.save();
    // The span to the HWM: a soft glow; the batches: a strong outline.
    ctx.shadowColor = "rgba(204,0,102,.85)"; ctx.shadowBlur = 10;
    ctx.strokeStyle = "rgba(204,0,102,.55)"; ctx.lineWidth = 2;
    ctx.strokeRect(Math.max(x0, -4), y + 3, Math.min(xs, S.W + 4) - Math.max(x0, -4), 8);
    ctx.strokeStyle = THEME.pin; ctx.lineWidth = 3;
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

  Object.assign(tl, { COLORS, THEME, binOf, pattern, schedule, scheduleMini, scheduleStream });
})();
