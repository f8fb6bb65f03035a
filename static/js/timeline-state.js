// txnscope timeline, state and URL (the timeline's scripts and their order:
// static.TimelineScripts; the overview is at the top of timeline.js). This,
// the first after contract.js, creates the namespace the scripts share,
// window.txnscopeTimeline ("tl" in each), and fills it with the page's
// elements, the consumer options and view read from the URL, and:
//   - objects every script reads and updates in place: part (the log's
//     offsets), state (the options), domain and view (in offsets), metrics;
//   - S, the mutable state shared between the scripts (the stream's arrays,
//     the plot's size, what must be rebuilt), one object so that who writes
//     what is easy to find ("S.D =");
//   - each script's functions (tl.schedule, tl.setView, …), called through tl
//     at run time, so that a script may call one that a later script adds.
"use strict";
(function () {
  const root = document.querySelector('[data-testid="timeline"]');
  if (!root) return;
  const $ = (sel, el) => (el || document).querySelector(sel);
  const tl = window.txnscopeTimeline = { root, $ };
  // pid is the exact producer id of an API object: its string twin when the
  // id is past 2^53, where JSON.parse rounds the number (docs/cli.md, "JSON
  // output").
  tl.pid = (o) => o.producer_id_str || String(o.producer_id);

  const plot = $('[data-testid="plot"]', root);
  const canvas = $('canvas.main', root);
  const mini = $('[data-testid="minimap"]');
  Object.assign(tl, {
    plot, canvas, ctx: canvas.getContext("2d"),
    markersEl: $('[data-testid="markers"]', root), axisEl: $('[data-testid="axis"]', root),
    mini, mctx: mini.getContext("2d"),
    tooltip: $('[data-testid="tooltip"]'), detail: $('[data-testid="detail"]'), batchList: $('[data-testid="batch-list"]'),
    statusEl: $('[data-testid="status"]'), isoEl: $('[data-testid="isolation"]'), posEl: $('[data-testid="position"]'),
    maxEl: $('[data-testid="max-bytes"]'), varEl: $('[data-testid="variant"]'),
  });
  const { isoEl, posEl, maxEl, varEl } = tl;
  // Enter in a control must not submit (navigate); this was an inline
  // onsubmit, which the Content-Security-Policy (script-src 'self') forbids.
  const controlsEl = $('[data-testid="controls"]');
  if (controlsEl) controlsEl.addEventListener("submit", (e) => e.preventDefault());

  tl.wsPath = root.dataset.ws; tl.apiPath = root.dataset.api;
  const embedded = tl.embedded = loadEmbedded();
  function loadEmbedded() {
    if (window.TXNSCOPE_EMBEDDED) return window.TXNSCOPE_EMBEDDED;
    const el = document.getElementById("txnscope-embedded");
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { return null; }
  }
  const part = tl.part = {
    logStart: +root.dataset.logStart, logEnd: +root.dataset.logEnd,
    hwm: +root.dataset.hwm, lso: +root.dataset.lso, batches: +root.dataset.batches,
  };
  // The transaction that pins the LSO (from the server's diagnosis), drawn
  // with a glow on its span and batches and a DOM outline on top.
  tl.pinned = root.dataset.pinnedProducer === undefined ? null : {
    producer: +root.dataset.pinnedProducer, pid: root.dataset.pinnedProducer, first: +root.dataset.pinnedFirst, last: +root.dataset.pinnedLast,
    state: root.dataset.pinnedState, stateText: root.dataset.pinnedStateText || root.dataset.pinnedState, lane: -1, shown: false, x0: 0, x1: 0,
  };

  // --- state -------------------------------------------------------------
  const q = new URLSearchParams(location.search);
  const state = tl.state = {
    isolation: q.get("isolation") === "read_uncommitted" ? "read_uncommitted" : "read_committed",
    position: q.has("position") && q.get("position") !== "" ? +q.get("position") : -1,
    maxBytes: q.has("max_bytes") ? +q.get("max_bytes") : 1048576,
    selected: q.has("sel") ? +q.get("sel") : null,
    variant: ["librdkafka", "franz-go", "kafkajs", "kafka-go", "kafka-python"].includes(q.get("variant")) ? q.get("variant") : "java",
    axis: q.get("axis") === "time" ? "time" : "offset",
  };
  // The page of one segment's window (a partition too large to load
  // whole, web/segments.go) is a timeline of that segment: its domain (the
  // axis, "fit", the minimap) spans the segment's offsets, and panning past
  // either end opens the neighbouring segment (timeline-segments.js).
  // tl.segment: the strip's cells and the index of the one shown; null on
  // every other page.
  tl.segment = null;
  const stripEl = document.querySelector('[data-testid="segment-strip"][data-windowed="true"]');
  if (stripEl) {
    const cells = Array.from(stripEl.querySelectorAll('[data-testid="segment-cell"]')).map((c) => ({ base: +c.dataset.base, next: +c.dataset.next, current: c.classList.contains("current") }));
    const k = cells.findIndex((c) => c.current);
    if (k >= 0) tl.segment = { index: k, cells };
  }
  // The domain has a margin on both sides so that the log start, LSO and
  // HWM markers at its ends stay visible.
  const domain = tl.domain = {};
  function setDomain() {
    if (tl.segment) {
      const c = tl.segment.cells[tl.segment.index], span = Math.max(c.next - c.base, 1), pad = Math.max(span * 0.03, 0.6);
      domain.from = c.base - pad; domain.to = Math.max(c.next, c.base + 1) + pad;
      return;
    }
    const span = Math.max(part.logEnd - part.logStart, 1), pad = Math.max(span * 0.03, 0.6);
    domain.from = part.logStart - pad; domain.to = Math.max(part.logEnd, part.hwm) + pad;
  }
  setDomain();
  const view = tl.view = { from: domain.from, to: domain.to }; // [from, to) in offsets
  // A large log opens on the offsets around the LSO, the part a reader
  // usually came for; the whole log is one key (0) away.
  if (+root.dataset.batches > 50000) {
    const span = 20000;
    view.from = Math.max(domain.from, part.lso - span * 0.8); view.to = view.from + span;
  }
  if (q.has("from") && q.has("to") && +q.get("to") > +q.get("from")) {
    view.from = +q.get("from"); view.to = +q.get("to");
  }
  if (embedded) {
    // The export holds the default consumer for both isolations only.
    state.position = -1; state.maxBytes = 1048576; state.variant = "java";
    for (const el of [posEl, maxEl, varEl]) { el.disabled = true; el.title = "a static export holds the default consumer only; run txnscope serve for the rest"; }
  }
  isoEl.value = state.isolation;
  if (state.position >= 0) posEl.value = state.position;
  maxEl.value = state.maxBytes;
  varEl.value = state.variant;

  // S is the mutable state the scripts share (see the top of this file).
  const S = tl.S = {
    meta: null, gen: 0, // the stream's meta message and generation
    D: null, // decision arrays (timeline-stream.js alloc)
    T: null, // transaction arrays (allocTxns)
    done: false, windowLoaded: false,
    painted: false, // a frame has been drawn since the stream finished
    W: 0, H: 0, dpr: 1, miniW: 0, // the plot's and the minimap's size (resize)
    laneEls: Array.from(root.querySelectorAll(".lane")), // re-read at each meta: a live source gains lanes (live.js)
    lastDrawVisible: null, // the decisions the last frame drew one by one
    listFresh: true, // the hidden batch list matches the view
    lessonMark: null, // offsets outlined for lesson.js (window.txnscope.highlight)
    timeDirty: true, // the time axis' knots must be rebuilt (timeline-axes.js)
    pyrDirty: true, // the overview must be rebuilt (timeline-draw.js)
  };
  // marks are milliseconds from navigation start of the first stream's
  // milestones, so a slow first paint can be attributed (benchmark output).
  const metrics = tl.metrics = { navStart: 0, firstPaint: null, streamDone: null, decisions: 0, frames: [], marks: { script: performance.now() } };
  tl.mark = (k) => { if (metrics.marks[k] === undefined) metrics.marks[k] = Math.round(performance.now()); };

  const axisSw = $('[data-testid="axis-switch"]');
  if (axisSw) {
    axisSw.value = state.axis;
    // The overview pyramid and the minimap are laid out along the axis.
    axisSw.onchange = () => { state.axis = axisSw.value === "time" ? "time" : "offset"; axisShown(); updateURL(); S.pyrDirty = true; tl.schedule(); tl.drawMini(); };
  }
  function axisShown() {
    root.dataset.axis = state.axis;
    const head = $(".axis-row .lane-head", root);
    if (head) head.textContent = state.axis === "time" ? "time (UTC)" : "offset";
  }
  axisShown();

  function status(s) { tl.statusEl.textContent = s; }
  function optsQuery() { return "isolation=" + state.isolation + "&position=" + state.position + "&max_bytes=" + state.maxBytes + "&variant=" + state.variant; }

  let urlTimer = 0;
  function updateURL() {
    clearTimeout(urlTimer);
    // The counts under the minimap are about to be asked for the new view:
    // data-pending says so until they arrive (the browser tests wait for it
    // before a screenshot, not to picture the last view's counts).
    const ce = document.querySelector('[data-testid="view-counts"]');
    if (ce) ce.dataset.pending = "1";
    urlTimer = setTimeout(() => {
      try { history.replaceState(null, "", pageURL(view.from, view.to, state.selected)); } catch (e) { /* file:// may refuse */ }
      updateCounts();
    }, 80);
  }
  // pageURL is this page's URL with the view [from, to), the selection sel
  // (null: none) and the options.
  function pageURL(from, to, sel) {
    const u = new URL(location.href);
    // A time view may be a fraction of an offset wide (setView).
    const tm = state.axis === "time";
    u.searchParams.set("from", tm ? +from.toFixed(6) : Math.floor(from));
    u.searchParams.set("to", tm ? +to.toFixed(6) : Math.ceil(to));
    u.searchParams.set("isolation", state.isolation);
    if (state.position >= 0) u.searchParams.set("position", state.position); else u.searchParams.delete("position");
    if (state.maxBytes !== 1048576) u.searchParams.set("max_bytes", state.maxBytes); else u.searchParams.delete("max_bytes");
    if (sel !== null) u.searchParams.set("sel", sel); else u.searchParams.delete("sel");
    if (state.variant !== "java") u.searchParams.set("variant", state.variant); else u.searchParams.delete("variant");
    if (state.axis === "time") u.searchParams.set("axis", "time"); else u.searchParams.delete("axis");
    // A time span to show once the stream has the times (a segment page
    // opened by a strip cell or a step from the time axis,
    // timeline-segments.js) is a one-time hint: the view is in from and
    // to from the first update on.
    u.searchParams.delete("time_span");
    u.searchParams.delete("time_anchor");
    return u;
  }

  // --- records in view -----------------------------------------------------
  // The true record counts of the offsets in view (GET …/counts): what
  // HWM − LWM arithmetic gets wrong on a transactional topic, where markers
  // and aborted records are offsets too (kafbat/kafka-ui#450). Records, not
  // offsets, so only the server, which has the batches' record counts, can
  // say; a static export has no server and shows no counts.
  const countsEl = $('[data-testid="view-counts"]');
  let countsSeq = 0;
  function updateCounts() {
    if (!countsEl) return;
    if (embedded || !tl.apiPath) { countsEl.hidden = true; delete countsEl.dataset.pending; return; }
    let from = Math.max(Math.floor(view.from), part.logStart), to = Math.min(Math.ceil(view.to) - 1, part.logEnd - 1);
    // A segment's window holds that segment's batches only.
    if (tl.segment) { const c = tl.segment.cells[tl.segment.index]; from = Math.max(from, c.base); to = Math.min(to, c.next - 1); }
    const seq = ++countsSeq;
    countsEl.dataset.pending = "1";
    if (from > to) { countsEl.textContent = "no offsets in view"; countsEl.dataset.from = ""; delete countsEl.dataset.pending; return; }
    fetch(tl.apiPath + "/counts?from=" + from + "&to=" + to + "&" + optsQuery()).then((r) => r.ok ? r.json() : Promise.reject(r.status)).then((c) => {
      if (seq !== countsSeq) return; // a newer view asked since
      const n = window.txnscopeFormat.count;
      const kinds = [["delivered", c.delivered_records, "delivered"], ["aborted", c.aborted_records, "aborted"], ["control", c.control_markers, "markers"],
        ["pending", c.pending_records, "pending behind the LSO"], ["before_position", c.before_position_records, "below the position"],
        ["gap", c.missing_offsets, "offsets without a record"]];
      // Offsets are identifiers, plain digits as everywhere (the LSO
      // marker, the header, kcat); counts are separated.
      let h = "in view, offsets " + c.from + "–" + c.to + ': <b data-kind="records">' + n(c.records) + "</b> record" + (c.records === 1 ? "" : "s");
      kinds.forEach(([k, v, label], j) => {
        if (j > 0 && v === 0) return; // delivered is always shown; the rest when present
        if (v === 1) label = label.replace("markers", "marker").replace("offsets", "offset");
        h += (j === 0 ? ": " : " · ") + '<span class="vc-' + k + '"><b data-kind="' + k + '">' + n(v) + "</b> " + label + "</span>";
      });
      countsEl.innerHTML = h;
      countsEl.dataset.from = c.from; countsEl.dataset.to = c.to; countsEl.dataset.isolation = c.options.isolation;
      countsEl.hidden = false;
      delete countsEl.dataset.pending;
    }).catch(() => { if (seq === countsSeq) { countsEl.textContent = "record counts unavailable"; delete countsEl.dataset.pending; } });
  }

  Object.assign(tl, { setDomain, status, optsQuery, pageURL, updateURL, updateCounts });
})();
