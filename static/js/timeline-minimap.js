// txnscope timeline, minimap: the whole log under the plot, per column the
// share of each kind of decision, with the view's box; a click or drag there
// centres the view (timeline-input.js).
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { mini, mctx, state, domain, view, S, END_OFF, COLORS, THEME } = tl;
  const C = window.txnscopeContract;
  const { F_COMMIT, F_ABORT } = C;
  const { DELIVERED, ABORTED, CONTROL, PENDING, BEFORE_POSITION } = C.VERDICT;

  let miniImage = null;
  // The minimap shows the whole log as stacked proportions: per column, the
  // share of offsets of each kind, so that a rare kind is visible without
  // hiding what dominates. On the time axis it follows the main view: the
  // columns are equal steps of time over the domain (miniX), a decision
  // counts for the share of its time extent in a column.
  const MINI_KINDS = ["delivered", "aborted", "commit", "abort", "control", "pending", "before", "gap"];
  function drawMini() {
    const D = S.D, meta = S.meta;
    if (!D || !meta) return;
    const w = mini.width, h = mini.height;
    // A page in a hidden container (an embed in a collapsed <details>) has
    // a minimap of no pixels, which getImageData refuses (IndexSizeError):
    // nothing is drawn until it is shown, when the resize observer
    // (timeline-input.js) lays it out and draws it.
    if (!w || !h) { miniImage = null; return; }
    const cnt = new Float64Array(w * 8);
    const scale = w / (domain.to - domain.from), cs = meta.chunk_size, time = state.axis === "time";
    const tc = time ? tl.timeCursor() : null, [t0, t1] = time ? tl.timeDomain() : [0, 1], tscale = w / Math.max(t1 - t0, 1e-9);
    for (let i = 0; i < D.n; i++) {
      if ((i % cs) === 0 && !D.loaded[i / cs]) { i += cs - 1; continue; }
      const v = D.verdict[i], f = D.flags[i];
      const k = v === DELIVERED ? 0 : v === ABORTED ? 1 : v === CONTROL ? (f & F_COMMIT ? 2 : f & F_ABORT ? 3 : 4) : v === PENDING ? 5 : v === BEFORE_POSITION ? 6 : 7;
      const a = time ? (tc(D.from[i]) - t0) * tscale : (D.from[i] - domain.from) * scale;
      const b = time ? (tc(D.to[i] + 1 - END_OFF) - t0) * tscale : (D.to[i] + 1 - domain.from) * scale;
      let x = Math.max(Math.floor(a), 0);
      const xe = Math.min(Math.floor(b), w - 1);
      if (x === xe || b - a < 1) { if (x < w) cnt[x * 8 + k] += Math.max(b - a, 0.05); continue; }
      for (; x <= xe; x++) cnt[x * 8 + k] += Math.min(b, x + 1) - Math.max(a, x);
    }
    mctx.setTransform(1, 0, 0, 1, 0, 0);
    mctx.fillStyle = THEME.mini; mctx.fillRect(0, 0, w, h);
    for (let x = 0; x < w; x++) {
      let tot = 0;
      for (let k = 0; k < 8; k++) tot += cnt[x * 8 + k];
      if (!tot) continue;
      let y = 0;
      for (let k = 0; k < 8; k++) {
        const c = cnt[x * 8 + k]; if (!c) continue;
        // Markers and aborts get at least one device pixel so they never vanish.
        const hh = Math.max(c / tot * h, k === 0 || k === 7 ? 0 : 1);
        mctx.fillStyle = k === 7 ? COLORS.gap : COLORS[MINI_KINDS[k]];
        mctx.fillRect(x, y, 1, hh); y += hh;
      }
    }
    miniImage = mctx.getImageData(0, 0, w, h);
    drawViewportOnMini();
  }
  // miniX is where offset off lies across the minimap, 0 to 1 (the domain's
  // ends), in offsets or in time as the main view; miniCentre centres the
  // view, keeping its width, on the point a fraction f across.
  function miniX(off) {
    if (state.axis !== "time") return (off - domain.from) / (domain.to - domain.from);
    const [t0, t1] = tl.timeDomain();
    return (tl.tOf(off) - t0) / Math.max(t1 - t0, 1e-9);
  }
  function miniCentre(f) {
    if (state.axis !== "time") { const o = domain.from + f * (domain.to - domain.from), span = view.to - view.from; tl.setView(o - span / 2, o + span / 2); return; }
    const [t0, t1] = tl.timeDomain(), [a, b] = tl.viewTimes(), tm = t0 + f * (t1 - t0);
    tl.setTimeView(tm - (b - a) / 2, tm + (b - a) / 2);
  }
  function drawViewportOnMini() {
    if (!miniImage) return;
    mctx.putImageData(miniImage, 0, 0);
    const w = mini.width, h = mini.height, x0 = miniX(view.from) * w, x1 = miniX(view.to) * w;
    mctx.strokeStyle = THEME.ink; mctx.lineWidth = 2 * S.dpr;
    mctx.strokeRect(Math.max(x0, 1), 1, Math.max(x1 - x0, 3), h - 2);
  }

  Object.assign(tl, { drawMini, drawViewportOnMini, miniCentre });
})();
