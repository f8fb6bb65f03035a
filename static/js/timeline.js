// txnscope timeline: applies the /ws/v1 decision stream (docs/protocol.md)
// to typed arrays and draws them on a canvas with level of detail. The DOM
// holds only lanes, markers, labels and controls.
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
  const root = document.querySelector('[data-testid="timeline"]');
  if (!root) return;

  // The codes, names and frame layout shared with the server, generated
  // from its Go constants (static/js/contract.js, loaded first).
  const C = window.txnscopeContract;
  const { VERDICTS, CAUSES, F_COMMIT, F_ABORT, LANE_GAP, FRAME_DECISIONS, FRAME_TXNS } = C;
  const { DELIVERED, ABORTED, CONTROL, PENDING, BEFORE_POSITION } = C.VERDICT;
  const { OPEN: TXN_OPEN, COMMITTED: TXN_COMMITTED, ABORTED: TXN_ABORTED } = C.TXN_STATE;
  const COLORS = {
    delivered: "#009E73", aborted: "#D55E00", commit: "#0072B2", abort: "#CC79A7", control: "#56B4E9",
    pending: "#E69F00", before: "#999999", gap: "#dddddd", loading: "#f0f0f0",
  };
  // Draw priority when several decisions share a pixel: what a reader most
  // needs to see wins (aborted data, then the pending region, markers...).
  const BIN = { aborted: 1, pending: 2, abort: 4, commit: 8, control: 16, delivered: 32, before: 64, gap: 128 };
  const BIN_ORDER = [["aborted", 1], ["pending", 2], ["abort", 4], ["commit", 8], ["control", 16], ["delivered", 32], ["before", 64], ["gap", 128]];

  const $ = (sel, el) => (el || document).querySelector(sel);
  const plot = $('[data-testid="plot"]', root);
  const canvas = $('canvas.main', root);
  const ctx = canvas.getContext("2d");
  const markersEl = $('[data-testid="markers"]', root);
  const axisEl = $('[data-testid="axis"]', root);
  let laneEls = Array.from(root.querySelectorAll(".lane")); // re-read at each meta: a live source gains lanes (live.js)
  const mini = $('[data-testid="minimap"]');
  const mctx = mini.getContext("2d");
  const tooltip = $('[data-testid="tooltip"]');
  const detail = $('[data-testid="detail"]');
  const batchList = $('[data-testid="batch-list"]');
  const statusEl = $('[data-testid="status"]');
  const isoEl = $('[data-testid="isolation"]');
  const posEl = $('[data-testid="position"]');
  const maxEl = $('[data-testid="max-bytes"]');
  const varEl = $('[data-testid="variant"]');
  // Enter in a control must not submit (navigate); this was an inline
  // onsubmit, which the Content-Security-Policy (script-src 'self') forbids.
  const controlsEl = $('[data-testid="controls"]');
  if (controlsEl) controlsEl.addEventListener("submit", (e) => e.preventDefault());

  const wsPath = root.dataset.ws, apiPath = root.dataset.api;
  const embedded = loadEmbedded();
  function loadEmbedded() {
    if (window.TXNSCOPE_EMBEDDED) return window.TXNSCOPE_EMBEDDED;
    const el = document.getElementById("txnscope-embedded");
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { return null; }
  }
  const part = {
    logStart: +root.dataset.logStart, logEnd: +root.dataset.logEnd,
    hwm: +root.dataset.hwm, lso: +root.dataset.lso, batches: +root.dataset.batches,
  };
  // The transaction that pins the LSO (from the server's diagnosis), drawn
  // with a glow on its span and batches and a DOM outline on top.
  const pinned = root.dataset.pinnedProducer === undefined ? null : {
    producer: +root.dataset.pinnedProducer, first: +root.dataset.pinnedFirst, last: +root.dataset.pinnedLast,
    state: root.dataset.pinnedState, lane: -1, shown: false, x0: 0, x1: 0,
  };
  let pinnedEl = null;
  let lessonMark = null; // offsets outlined for lesson.js (window.txnscope.highlight)

  // --- state -------------------------------------------------------------
  const q = new URLSearchParams(location.search);
  const state = {
    isolation: q.get("isolation") === "read_uncommitted" ? "read_uncommitted" : "read_committed",
    position: q.has("position") && q.get("position") !== "" ? +q.get("position") : -1,
    maxBytes: q.has("max_bytes") ? +q.get("max_bytes") : 1048576,
    selected: q.has("sel") ? +q.get("sel") : null,
    variant: ["librdkafka", "franz-go"].includes(q.get("variant")) ? q.get("variant") : "java",
    axis: q.get("axis") === "time" ? "time" : "offset",
  };
  // The domain has a margin on both sides so that the log start, LSO and
  // HWM markers at its ends stay visible.
  const domain = {};
  function setDomain() {
    const span = Math.max(part.logEnd - part.logStart, 1), pad = Math.max(span * 0.03, 0.6);
    domain.from = part.logStart - pad; domain.to = Math.max(part.logEnd, part.hwm) + pad;
  }
  setDomain();
  const view = { from: domain.from, to: domain.to }; // [from, to) in offsets
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
  const axisSw = $('[data-testid="axis-switch"]');
  if (axisSw) {
    axisSw.value = state.axis;
    // The overview pyramid and the minimap are laid out along the axis.
    axisSw.onchange = () => { state.axis = axisSw.value === "time" ? "time" : "offset"; axisShown(); updateURL(); pyrDirty = true; schedule(); drawMini(); };
  }
  function axisShown() {
    root.dataset.axis = state.axis;
    const head = $(".axis-row .lane-head", root);
    if (head) head.textContent = state.axis === "time" ? "time (UTC)" : "offset";
  }
  axisShown();

  let meta = null, gen = 0, ws = null;
  let D = null; // decision arrays
  let T = null; // transaction arrays
  // marks are milliseconds from navigation start of the first stream's
  // milestones, so a slow first paint can be attributed (benchmark output).
  const metrics = { navStart: 0, firstPaint: null, streamDone: null, decisions: 0, frames: [], marks: { script: performance.now() } };
  const mark = (k) => { if (metrics.marks[k] === undefined) metrics.marks[k] = Math.round(performance.now()); };
  let streamStart = performance.now(), done = false, lastDrawVisible = null, windowLoaded = false;
  let painted = false; // a frame has been drawn since the stream finished
  let probe = null; // the benchmark's frame probe (probeFrames)

  function alloc(n, chunks) {
    return {
      n, from: new Float64Array(n), to: new Float64Array(n), bidx: new Int32Array(n), txn: new Int32Array(n),
      lane: new Uint16Array(n), ts: new Float64Array(n).fill(-1), verdict: new Uint8Array(n), cause: new Uint8Array(n), unc: new Uint8Array(n),
      flags: new Uint8Array(n), loaded: new Uint8Array(chunks), chunkCount: 0,
    };
  }

  // --- geometry ----------------------------------------------------------
  const BAND = 30; // px above the lanes for marker labels (css: .band)
  const laneH = () => laneEls.length ? laneEls[0].getBoundingClientRect().height : 44;
  let W = 0, H = 0, dpr = 1, miniW = 0;
  function resize() {
    dpr = window.devicePixelRatio || 1;
    W = plot.clientWidth; miniW = mini.clientWidth; H = Math.max(laneEls.length, 1) * laneH();
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.height = H + "px";
    mini.width = Math.round(mini.clientWidth * dpr); mini.height = Math.round(mini.clientHeight * dpr);
    schedule(); scheduleMini();
  }
  const xOf = (off) => state.axis === "time" ? xOfTime(off) : (off - view.from) / (view.to - view.from) * W;
  const offAt = (x) => state.axis === "time" ? offAtTime(x) : view.from + x / W * (view.to - view.from);

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
  let timeDirty = true, tk = null, tbuf = null;
  function buildTime() {
    timeDirty = false;
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
    if (timeDirty) buildTime();
    if (!tk) return off;
    const { n, o, t } = tk;
    if (off <= o[0]) return t[0] + (off - o[0]) * tk.slope;
    if (off >= o[n - 1]) return t[n - 1] + (off - o[n - 1]) * tk.slope;
    let lo = 0, hi = n - 1;
    while (hi - lo > 1) { const m = (lo + hi) >> 1; if (o[m] <= off) lo = m; else hi = m; }
    return t[lo] + (off - o[lo]) / (o[hi] - o[lo]) * (t[hi] - t[lo]);
  }
  function offOfT(tm) {
    if (timeDirty) buildTime();
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
    if (timeDirty) buildTime();
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
    if (timeDirty) buildTime();
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
  function xOfTime(off) { const [a, b] = viewTimes(); return (tOf(off) - a) / Math.max(b - a, 1e-9) * W; }
  function offAtTime(x) { const [a, b] = viewTimes(); return offOfT(a + x / W * (b - a)); }
  // setTimeView shows the times [a, b), converted to the offset view.
  function setTimeView(a, b) { setView(offOfT(a), offOfT(b)); }
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
    const [a, b] = viewTimes(), span = b - a, raw = span / Math.max(W / 120, 1);
    let step = TIME_STEPS.find((v) => v >= raw);
    if (!step) step = Math.ceil(raw / 864e5) * 864e5;
    let html = "", end = -Infinity;
    for (let tm = Math.ceil(a / step) * step, n = 0; tm <= b && n < 60; tm += step, n++) {
      const x = (tm - a) / span * W, label = utcLabel(tm, step, n === 0);
      // The first label carries the date and is twice as wide as the
      // step allows for: a tick whose label would run into it is left out.
      if (x < end) continue;
      end = x + 3 + label.length * TICK_CHAR_PX + 6;
      html += '<div class="tick time" data-testid="time-tick" data-time="' + tm + '" style="left:' + x.toFixed(1) + 'px">' + label + "</div>";
    }
    axisEl.innerHTML = html;
  }

  // --- stream --------------------------------------------------------------
  function wsURL() {
    const u = new URL(wsPath, location.href);
    u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    u.searchParams.set("isolation", state.isolation);
    u.searchParams.set("position", state.position);
    u.searchParams.set("max_bytes", state.maxBytes);
    u.searchParams.set("variant", state.variant);
    u.searchParams.set("from", Math.floor(view.from));
    u.searchParams.set("to", Math.ceil(view.to));
    return u.toString();
  }
  function connect() {
    streamStart = performance.now(); done = false;
    if (embedded) { replay(); return; }
    ws = new WebSocket(wsURL());
    ws.binaryType = "arraybuffer";
    ws.onopen = () => mark("open");
    ws.onmessage = (ev) => typeof ev.data === "string" ? onText(JSON.parse(ev.data)) : onBinary(ev.data);
    ws.onclose = (ev) => { if (!done) status("disconnected (" + ev.code + (ev.reason ? " " + ev.reason : "") + ")"); };
  }
  // replay plays the embedded messages of the current isolation as a new
  // generation, as the server would stream them.
  let embGen = 0;
  const decoded = {};
  function b64(s) {
    const bin = atob(s), u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u.buffer;
  }
  function replay() {
    const iso = state.isolation, msgs = embedded.streams && embedded.streams[iso];
    if (!msgs) { status("this export has no " + iso + " data"); return; }
    if (!decoded[iso]) decoded[iso] = msgs.map((m) => typeof m === "string" ? b64(m) : m);
    const g = ++embGen, list = decoded[iso];
    setTimeout(() => {
      if (g !== embGen) return;
      for (const m of list) {
        if (m instanceof ArrayBuffer) { new DataView(m).setUint32(HDR.GENERATION, g, true); onBinary(m); }
        else onText(m.generation === undefined ? m : Object.assign({}, m, { generation: g }));
      }
    }, 0);
  }
  function send(m) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(m)); }
  function onText(m) {
    // Hook for the live tail (live.js): it sees each message first and may
    // rebuild the lanes of a live source's new generation.
    document.dispatchEvent(new CustomEvent("txnscope:message", { detail: m }));
    switch (m.type) {
      case "meta":
        laneEls = Array.from(root.querySelectorAll(".lane")); resize();
        meta = m; gen = m.generation; done = false; mark("meta");
        D = alloc(m.totals.decisions, m.totals.chunks); pyrDirty = true; timeDirty = true;
        T = null;
        if (m.totals.transactions === 0) T = allocTxns(0);
        Object.assign(part, { logStart: m.log_start_offset, logEnd: m.log_end_offset, hwm: m.high_watermark, lso: m.last_stable_offset });
        setDomain();
        placeSegments();
        status("streaming " + m.totals.decisions.toLocaleString() + " decisions…");
        schedule(); scheduleMini(); updateCounts();
        break;
      case "progress":
        if (m.generation !== gen) return;
        if (m.phase === "rest") { windowLoaded = true; mark("window"); }
        status((m.phase === "window" ? "visible window… " : "streaming… ") + m.chunks_sent + "/" + m.chunks_total + " chunks");
        break;
      case "done":
        if (m.generation !== gen) return;
        done = true; painted = false; windowLoaded = true; metrics.decisions = m.decisions;
        metrics.streamDone = performance.now() - streamStart;
        status(m.decisions.toLocaleString() + " decisions · " + state.isolation + (state.position >= 0 ? " from " + state.position : "") + (embedded ? " · static export" : ""));
        schedule(); drawMini();
        // An embedding page (the /embed route in an iframe) learns that the
        // timeline is drawn; the message carries nothing of the data.
        if (window.parent !== window) window.parent.postMessage({ type: "txnscope:rendered", generation: gen, decisions: m.decisions, lanes: laneEls.length }, "*");
        break;
      case "error":
        status("server: " + m.message);
        break;
    }
  }
  function allocTxns(n) {
    return { n, filled: 0, maxLen: 0, first: new Float64Array(n), last: new Float64Array(n), marker: new Float64Array(n), lane: new Uint16Array(n), st: new Uint8Array(n), epoch: new Int16Array(n) };
  }
  // The frame layout (contract.js: byte offsets) as indexes into typed
  // views laid over the records: a byte offset / 8 in a Float64Array, / 4
  // in an Int32Array, / 2 in a (U)Int16Array. Records are multiples of 8
  // bytes and start at FRAME_HEADER, so the views line up with their fields
  // (browsers are little-endian, as the frame is).
  const { HDR, DEC, TXR } = C;
  const D_FROM = DEC.FROM / 8, D_TO = DEC.TO / 8, D_TS = DEC.MAX_TIMESTAMP / 8, D_BATCH = DEC.BATCH / 4, D_TXN = DEC.TXN / 4, D_LANE = DEC.LANE / 2;
  const { VERDICT: D_VERDICT, CAUSE: D_CAUSE, UNCOMMITTED: D_UNC, FLAGS: D_FLAGS } = DEC;
  const T_FIRST = TXR.FIRST / 8, T_LAST = TXR.LAST_DATA / 8, T_MARKER = TXR.MARKER / 8, T_LANE = TXR.LANE / 2, T_STATE = TXR.STATE, T_EPOCH = TXR.EPOCH / 2;
  function onBinary(buf) {
    const dv = new DataView(buf);
    const kind = dv.getUint8(HDR.KIND), g = dv.getUint32(HDR.GENERATION, true), start = dv.getUint32(HDR.START, true), count = dv.getUint32(HDR.COUNT, true);
    if (g !== gen || !meta) return;
    mark(kind === FRAME_TXNS ? "firstTxns" : "firstChunk");
    const at = C.FRAME_HEADER;
    if (kind === FRAME_TXNS) {
      if (!T) T = allocTxns(meta.totals.transactions);
      const rs = C.TXN_SIZE, q8 = rs / 8, q2 = rs / 2;
      const f64 = new Float64Array(buf, at, count * q8), u16 = new Uint16Array(buf, at, count * q2), u8 = new Uint8Array(buf, at, count * rs);
      const i16 = new Int16Array(buf, at, count * q2);
      for (let i = 0; i < count; i++) {
        const k = start + i;
        T.first[k] = f64[i * q8 + T_FIRST]; T.last[k] = f64[i * q8 + T_LAST]; T.marker[k] = f64[i * q8 + T_MARKER];
        T.lane[k] = u16[i * q2 + T_LANE]; T.st[k] = u8[i * rs + T_STATE]; T.epoch[k] = i16[i * q2 + T_EPOCH];
        if (T.st[k] !== TXN_OPEN && T.marker[k] - T.first[k] > T.maxLen) T.maxLen = T.marker[k] - T.first[k];
      }
      T.filled = Math.max(T.filled, start + count);
    } else if (kind === FRAME_DECISIONS) {
      // The record layout is in the header (layout 1 had 32-byte records
      // without the timestamp).
      const rs = dv.getUint8(HDR.LAYOUT) >= C.DECISION_LAYOUT ? C.DECISION_SIZE : C.DECISION_SIZE_LAYOUT1, q8 = rs / 8, q4 = rs / 4, q2 = rs / 2;
      const hasTs = rs >= DEC.MAX_TIMESTAMP + 8;
      const f64 = new Float64Array(buf, at, count * q8), i32 = new Int32Array(buf, at, count * q4);
      const u16 = new Uint16Array(buf, at, count * q2), u8 = new Uint8Array(buf, at, count * rs);
      for (let i = 0; i < count; i++) {
        const k = start + i;
        D.from[k] = f64[i * q8 + D_FROM]; D.to[k] = f64[i * q8 + D_TO];
        D.bidx[k] = i32[i * q4 + D_BATCH]; D.txn[k] = i32[i * q4 + D_TXN];
        D.lane[k] = u16[i * q2 + D_LANE];
        const b = i * rs;
        D.verdict[k] = u8[b + D_VERDICT]; D.cause[k] = u8[b + D_CAUSE]; D.unc[k] = u8[b + D_UNC]; D.flags[k] = u8[b + D_FLAGS];
        D.ts[k] = hasTs ? f64[i * q8 + D_TS] : -1;
      }
      timeDirty = true;
      D.loaded[Math.floor(start / meta.chunk_size)] = 1; D.chunkCount++;
      // The chunk that completes the visible window is drawn on the next
      // frame, not after the stream's redraw throttle.
      if (metrics.firstPaint === null && viewLoaded()) { pyrDirty = true; schedule(); }
    }
    pyrDirty = true;
    scheduleStream(); scheduleMini();
  }
  function status(s) { statusEl.textContent = s; }

  // viewLoaded reports whether every chunk under the view has arrived.
  function viewLoaded() {
    if (!D || !meta) return false;
    if (!D.n) return true;
    const c0 = chunkFor(view.from), c1 = chunkFor(view.to);
    for (let c = c0; c <= c1; c++) if (!D.loaded[c]) return false;
    return true;
  }

  // --- lookup -------------------------------------------------------------------
  // chunkFor returns the chunk that holds the decision covering off.
  function chunkFor(off) {
    const cs = meta.chunk_starts; let lo = 0, hi = cs.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (cs[m] <= off) lo = m + 1; else hi = m; }
    return Math.max(lo - 1, 0);
  }
  // firstAtOrAfter: first index in [a, b) with to >= off.
  function firstTo(off, a, b) {
    let lo = a, hi = b;
    while (lo < hi) { const m = (lo + hi) >> 1; if (D.to[m] < off) lo = m + 1; else hi = m; }
    return lo;
  }
  // visibleRange returns [i0, i1) of decisions overlapping [from, to).
  function visibleRange(from, to) {
    if (!D || !D.n) return [0, 0];
    // Decisions cover whole offsets: a fractional from (a time-axis view or
    // pointer) lies in the decision holding its integer part.
    from = Math.floor(from);
    const cs = meta.chunk_size;
    const c0 = chunkFor(from), c1 = chunkFor(to);
    let i0 = c0 * cs, i1 = Math.min((c1 + 1) * cs, D.n);
    if (D.loaded[c0]) i0 = firstTo(from, i0, Math.min((c0 + 1) * cs, D.n));
    if (D.loaded[c1]) { let lo = c1 * cs, hi = i1; while (lo < hi) { const m = (lo + hi) >> 1; if (D.from[m] < to) lo = m + 1; else hi = m; } i1 = lo; }
    return [i0, i1];
  }
  function decisionAt(off, lane) {
    if (!D || !D.n) return -1;
    const cs = meta.chunk_size;
    // Search a small window around off: at low zoom a pixel spans many
    // decisions; take the one nearest the pointer on that lane.
    const span = Math.max((view.to - view.from) / W * 3, 0.5);
    const [i0, i1] = visibleRange(off - span, off + span);
    let best = -1, bestDist = Infinity;
    for (let i = i0; i < i1; i++) {
      if (!D.loaded[Math.floor(i / cs)]) { i = (Math.floor(i / cs) + 1) * cs - 1; continue; }
      const ln = D.lane[i];
      if (ln !== lane && ln !== LANE_GAP) continue;
      const d = off < D.from[i] ? D.from[i] - off : off > D.to[i] + 1 ? off - D.to[i] - 1 : 0;
      if (d < bestDist || (d === bestDist && ln !== LANE_GAP && best >= 0 && D.lane[best] === LANE_GAP)) { best = i; bestDist = d; }
    }
    return bestDist <= span ? best : -1;
  }
  function binOf(i) {
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

  // --- drawing ------------------------------------------------------------------
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
  function scheduleMini() { if (!pendingMini) { pendingMini = true; setTimeout(() => { pendingMini = false; drawMini(); }, done ? 0 : 600); } }

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
    const lh = laneH(), nl = laneEls.length;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    // lane stripes
    for (let l = 0; l < nl; l++) { ctx.fillStyle = l % 2 ? "#fafafa" : "#ffffff"; ctx.fillRect(0, l * lh, W, lh); }
    // above the LSO / HWM: a faint wash so the unreadable region shows
    const xl = xOf(part.lso), xh = xOf(part.hwm);
    if (xl < W) { ctx.fillStyle = "rgba(230,159,0,.07)"; ctx.fillRect(Math.max(xl, 0), 0, W, H); }
    if (xh < W) { ctx.fillStyle = "rgba(0,0,0,.05)"; ctx.fillRect(Math.max(xh, 0), 0, W, H); }
    const visible = [];
    let visibleCount = 0;
    if (D && D.n) {
      const [i0, i1] = visibleRange(view.from, view.to);
      visibleCount = i1 - i0;
      const perPx = (view.to - view.from) / W;
      if (i1 - i0 > W * 1.5) drawBinned(i0, i1, lh, nl); else drawEach(i0, i1, lh, nl, perPx, visible);
      drawLoading(lh, nl);
    }
    const t1 = performance.now();
    drawTxns(lh, nl);
    const t2 = performance.now();
    placeMarkers();
    placeFetches();
    drawAxis();
    updateList(visible, visibleCount);
    const t3 = performance.now();
    metrics.parts = { batches: t1 - t0, txns: t2 - t1, dom: t3 - t2 };
    lastDrawVisible = visible;
    if (done) painted = true;
    metrics.frames.push(performance.now() - t0);
    if (metrics.frames.length > 600) metrics.frames.shift();
    metrics.draws = (metrics.draws || 0) + 1;
    // First paint of the visible window, measured from navigation start.
    if (metrics.firstPaint === null && (windowLoaded || viewLoaded())) { metrics.firstPaint = performance.now(); mark("paint"); }
    if (lessonMark) { const x0 = xOf(lessonMark.from), x1 = xEnd(lessonMark.to); ctx.strokeStyle = "#000"; ctx.lineWidth = 3; ctx.strokeRect(x0 - 2, 1.5, Math.max(x1 - x0, 2) + 4, H - 3); }
    drawViewportOnMini();
  }

  function drawLoading(lh, nl) {
    const cs = meta.chunk_size, starts = meta.chunk_starts;
    for (let c = chunkFor(view.from); c < starts.length; c++) {
      if (starts[c] > view.to) break;
      if (D.loaded[c]) continue;
      const x0 = Math.max(xOf(starts[c]), 0), x1 = c + 1 < starts.length ? xOf(starts[c + 1]) : W;
      ctx.fillStyle = "rgba(200,200,200,.35)"; ctx.fillRect(x0, 0, Math.max(x1 - x0, 1), nl * lh);
    }
    void cs;
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
  let pyr = null, tpyr = null, pyrDirty = true, pyrAxis = "offset", pyrT0 = 0, pyrT1 = 1;
  const kindBit = (v, f) => v === DELIVERED ? 32 : v === ABORTED ? 1 : v === CONTROL ? (f & F_COMMIT ? 8 : f & F_ABORT ? 4 : 16) : v === PENDING ? 2 : v === BEFORE_POSITION ? 64 : 128;
  function buildPyr(nl) {
    if (!pyr || pyr.length !== PYR * (nl + 1)) { pyr = new Uint8Array(PYR * (nl + 1)); tpyr = new Uint8Array(PYR * nl); }
    else { pyr.fill(0); tpyr.fill(0); }
    pyrAxis = state.axis; pyrDirty = false;
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
    [pyrT0, pyrT1] = timeDomain();
    const bounds = timeBounds(pyrT0, pyrT1, PYR);
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
    for (let k = k0; k < k1; k++) {
      if (T.st[k] === TXN_OPEN) continue;
      const c1 = colOf(bounds, m, T.marker[k] + 1 - END_OFF);
      if (c1 < 0 || T.first[k] >= bounds[m]) continue;
      const c0 = Math.max(colOf(bounds, m, T.first[k]), 0);
      const base = Math.min(T.lane[k], nl - 1) * m, bit = T.st[k] === TXN_ABORTED ? 2 : 1;
      for (let x = c0; x <= c1; x++) out[base + x] |= bit;
    }
  }
  // pyrGeom maps the view onto pyramid columns: pixel x starts at column
  // p0 + x * pk (in offsets, or in time on the time axis).
  function pyrGeom() {
    if (state.axis === "time") {
      const [a, b] = viewTimes(), [t0, t1] = pyrDirty || pyrAxis !== "time" ? timeDomain() : [pyrT0, pyrT1], colT = (t1 - t0) / PYR;
      return { p0: (a - t0) / colT, pk: (b - a) / W / colT };
    }
    const colW = (domain.to - domain.from) / PYR;
    return { p0: (view.from - domain.from) / colW, pk: (view.to - view.from) / W / colW };
  }
  // The pyramid serves a view where a pixel spans at least one column.
  const pyrUsable = () => pyrGeom().pk >= 1;
  function ensurePyr(nl) { if (pyrDirty || pyrAxis !== state.axis) buildPyr(nl); }
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

  // viewBounds returns the offsets where the w pixel columns of the view
  // begin on the time axis, computed once per view.
  let vbKey = "", vbTk = null, vb = null;
  function viewBounds(w) {
    const [a, b] = viewTimes(), key = a + ":" + b + ":" + w;
    if (key !== vbKey || vbTk !== tk) { vb = timeBounds(a, a + (b - a) * w / W, w); vbKey = key; vbTk = tk; }
    return vb;
  }

  // drawBinned: more decisions than pixels. Each lane gets one byte per
  // column with a bit per kind; the column takes the highest-priority kind.
  let bins = null;
  function drawBinned(i0, i1, lh, nl) {
    const w = Math.ceil(W);
    if (!bins || bins.length !== w * (nl + 1)) bins = new Uint8Array(w * (nl + 1)); else bins.fill(0);
    const cs = meta.chunk_size, scale = W / (view.to - view.from), vf = view.from;
    if (pyrUsable()) {
      ensurePyr(nl);
      fromPyr(pyr, nl + 1, bins, w);
      i1 = i0; // skip the per-decision pass
    } else if (state.axis === "time") {
      // x is linear in time, not in offsets: the pixel columns' offsets
      // (monotone, since held times never go back) place the decisions.
      binTime(viewBounds(w), w, i0, i1, bins, nl);
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

  function drawEach(i0, i1, lh, nl, perPx, visible) {
    const cs = meta.chunk_size;
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
        const lx = Math.max(x, 0), vw = Math.min(x + w, W) - lx;
        if (tw < vw - 24) {
          // A white plate keeps the label readable over hatching.
          ctx.fillStyle = "rgba(255,255,255,.92)"; ctx.fillRect(lx + 2, y + h - 14, tw + 6, 12);
          ctx.fillStyle = "#000"; ctx.fillText(label, lx + 5, y + h - 8);
        }
      }
    }
    void perPx;
  }

  // drawTxns draws each transaction as a bar from its first offset to its
  // marker above the lane's batches. Open ones (from meta) run to the HWM
  // and get a DOM flag. With more transactions than pixels they are binned
  // per column, as decisions are.
  let tbins = null;
  function drawTxns(lh, nl) {
    markersEl.querySelectorAll(".flag").forEach((e) => e.remove());
    if (T && T.filled) {
      // Transaction frames arrive in order after the window: search the
      // prefix that has arrived.
      let lo = 0, hi = T.filled;
      const from = view.from - T.maxLen - 1;
      while (lo < hi) { const m = (lo + hi) >> 1; if (T.first[m] < from) lo = m + 1; else hi = m; }
      let end = lo; { let l2 = lo, h2 = T.filled; while (l2 < h2) { const m = (l2 + h2) >> 1; if (T.first[m] < view.to) l2 = m + 1; else h2 = m; } end = l2; }
      const w = Math.ceil(W), scale = W / (view.to - view.from), vf = view.from;
      if (end - lo > W) {
        if (!tbins || tbins.length !== w * nl) tbins = new Uint8Array(w * nl); else tbins.fill(0);
        let kEnd = end;
        if (pyrUsable()) {
          ensurePyr(nl);
          fromPyr(tpyr, nl, tbins, w);
          kEnd = lo;
        } else if (state.axis === "time") {
          binTxnsTime(viewBounds(w), w, lo, end, tbins, nl);
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
          const x0 = Math.max(xOf(T.first[k]), -2), x1 = Math.min(xEnd(T.marker[k]), W + 2);
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
      if (x1 < 0 || x0 > W) return;
      ctx.fillStyle = COLORS.pending; ctx.fillRect(Math.max(x0, -2), y - 1, Math.max(Math.min(x1, W + 2) - Math.max(x0, -2), 2), 6);
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

  function drawPinned(lh, nl) {
    if (!pinned || !meta) return;
    if (root.dataset.live !== undefined) { if (pinnedEl) pinnedEl.hidden = true; return; } // live.js: the page-load diagnosis is stale
    const ln = meta.lanes.findIndex((l) => l.producer_id === pinned.producer);
    pinned.lane = ln;
    if (!pinnedEl) {
      pinnedEl = document.createElement("div");
      pinnedEl.className = "pinned-highlight"; pinnedEl.dataset.testid = "pinned-highlight";
      pinnedEl.title = "producer " + pinned.producer + "'s " + pinned.state + " transaction from offset " + pinned.first + " pins the LSO";
      pinnedEl.innerHTML = "<span></span>";
      pinnedEl.firstChild.textContent = "pins LSO · " + pinned.state;
      markersEl.appendChild(pinnedEl);
    }
    const x0 = xOf(pinned.first), x1 = xEnd(pinned.last), xs = xOf(Math.max(part.hwm, pinned.last + 1));
    const row = Math.min(Math.max(ln, 0), nl - 1);
    pinned.shown = ln >= 0 && x1 >= 0 && x0 <= W;
    pinnedEl.hidden = !pinned.shown;
    if (!pinned.shown) return;
    const y = row * lh;
    ctx.save();
    // The span to the HWM: a soft glow; the batches: a strong outline.
    ctx.shadowColor = "rgba(204,0,102,.85)"; ctx.shadowBlur = 10;
    ctx.strokeStyle = "rgba(204,0,102,.55)"; ctx.lineWidth = 2;
    ctx.strokeRect(Math.max(x0, -4), y + 3, Math.min(xs, W + 4) - Math.max(x0, -4), 8);
    ctx.strokeStyle = "#cc0066"; ctx.lineWidth = 3;
    ctx.strokeRect(Math.max(x0, -4) + 1, y + 12, Math.max(Math.min(x1, W + 4) - Math.max(x0, -4) - 2, 2), lh - 16);
    ctx.restore();
    pinned.x0 = x0; pinned.x1 = x1;
    const l = Math.max(x0, 0), r = Math.min(x1, W);
    pinnedEl.style.left = l + "px"; pinnedEl.style.width = Math.max(r - l, 3) + "px";
    pinnedEl.style.top = (BAND + y + 10) + "px"; pinnedEl.style.height = (lh - 12) + "px";
    pinnedEl.classList.toggle("flip", r > W - 130);
  }

  function placeMarker(el, off) {
    const x = xOf(off);
    el.hidden = x < -1 || x > W + 1;
    el.style.left = x + "px";
    el._x = x; // for layoutLabels
  }
  function placeMarkers() {
    placeMarker($('[data-testid="lso"]', root), part.lso);
    placeMarker($('[data-testid="hwm"]', root), part.hwm);
    placeMarker($('[data-testid="log-start"]', root), part.logStart);
    const pm = $('[data-testid="position-marker"]', root);
    if (state.position >= 0) { placeMarker(pm, state.position); pm.querySelector("span").textContent = "position " + state.position; }
    else pm.hidden = true;
    // LSO and HWM labels collide when they coincide.
    $('[data-testid="lso"] span', root).textContent = part.lso === part.hwm ? "LSO = HWM " + part.lso : "LSO " + part.lso;
    $('[data-testid="hwm"] span', root).style.visibility = part.lso === part.hwm ? "hidden" : "";
    segEls.forEach(([el, off]) => placeMarker(el, off));
    layoutLabels();
  }
  // layoutLabels places the marker labels so that none covers another:
  // markers close together (the log start and the LSO of the stuck-LSO
  // demo on the time axis, segment boundaries on a zoomed-out log) would
  // otherwise print one label over the other. Each label stays beside its
  // own line, right of it where it fits (left near the right edge, as
  // before); the more important ones are placed first, each on the first
  // free spot among: its usual row of the band, the band's other row, the
  // other side of the line on either row, then (for the log start, LSO, HWM
  // and position only) rows below the band, over the top of the first lane
  // on the label's white plate. A segment name without room in the band is
  // left out until a zoom makes room: dozens of them stacked over the lanes
  // hid the batches.
  const LABEL_ROW = 14, LABEL_GAP = 4, LABEL_ROWS = 6;
  const labelWidths = new WeakMap(); // span -> [text, width]: measured once per text, not per frame
  function labelWidth(span) {
    const c = labelWidths.get(span);
    if (c && c[0] === span.textContent) return c[1];
    const w = span.offsetWidth;
    labelWidths.set(span, [span.textContent, w]);
    return w;
  }
  function layoutLabels() {
    const marks = [["lso", 0], ["hwm", 1], ["position-marker", 1], ["log-start", 0]]
      .map(([id, row]) => [$('[data-testid="' + id + '"]', root), row, LABEL_ROWS]);
    segEls.forEach(([el]) => marks.push([el, 1, 2]));
    const placed = []; // [row, left, right]
    const free = (row, l, r) => placed.every(([pr, pl, pp]) => pr !== row || r + LABEL_GAP <= pl || pp + LABEL_GAP <= l);
    for (const [el, usual, maxRows] of marks) {
      const span = el && el.firstElementChild;
      if (!span || el.hidden || span.style.visibility === "hidden") continue;
      span.hidden = false;
      const x = el._x, w = labelWidth(span);
      // The span sits 3 px right of the marker's 2-3 px line, or its right
      // edge 3 px left of it when flipped (app.css .marker span).
      const right = [x + 5, x + 5 + w], left = [x - 1 - w, x - 1];
      const sides = x + 5 + w <= W ? [[right, false], [left, true]] : [[left, true], [right, false]];
      const rows = [usual, 1 - usual];
      const tries = [];
      for (const [b, flip] of sides.slice(0, 1)) for (const row of rows) tries.push([row, b, flip]);
      for (const [b, flip] of sides.slice(1)) for (const row of rows) tries.push([row, b, flip]);
      for (let row = 2; row < maxRows; row++) for (const [b, flip] of sides) tries.push([row, b, flip]);
      const fits = ([, b]) => b[0] >= 0 && b[1] <= W;
      const pick = tries.find((c) => fits(c) && free(c[0], c[1][0], c[1][1])) || tries.find((c) => free(c[0], c[1][0], c[1][1]));
      // No room: the line stays and the label waits for a zoom rather than
      // print over another (a segment's name is in its marker's title).
      span.hidden = !pick;
      if (!pick) continue;
      const [row, b, flip] = pick;
      placed.push([row, b[0], b[1]]);
      el.classList.toggle("flip", flip);
      span.style.top = row * LABEL_ROW + "px";
    }
  }
  let segEls = [];
  function placeSegments() {
    segEls.forEach(([el]) => el.remove()); segEls = [];
    (meta.segments || []).forEach((s, i) => {
      if (i === 0) return; // the first segment starts at the log start
      const el = document.createElement("div");
      el.className = "marker segment"; el.dataset.testid = "segment-" + i;
      el.title = s.name + " (" + s.txnindex + ", " + s.aborted_entries + " aborted entries)";
      el.innerHTML = "<span></span>"; el.firstChild.textContent = s.name.replace(/^0+(?=\d)/, "");
      markersEl.appendChild(el); segEls.push([el, s.base_offset]);
    });
  }

  // --- captured fetches -------------------------------------------------
  // For a capture, each Fetch response the real consumer received is a bar
  // in the marker band from its fetch offset to the end of the batches it
  // returned (a boundary tick when it returned none); hover or click shows
  // the broker's LSO/HWM and aborted-transactions list for that response.
  const FETCH_CAP = 2000; // DOM bars; a longer capture shows its first ones
  let fetches = [], fetchTip = null, fetchPinned = -1;
  function loadFetches() {
    if (embedded || !apiPath) return;
    fetch(apiPath + "/fetches").then((r) => r.ok ? r.json() : null).then((j) => {
      if (!j || !j.fetches || !j.fetches.length) return;
      fetchTip = document.createElement("div");
      fetchTip.className = "fetch-tip"; fetchTip.dataset.testid = "fetch-tip"; fetchTip.hidden = true;
      document.body.appendChild(fetchTip);
      fetches = j.fetches.slice(0, FETCH_CAP).map((f) => {
        const el = document.createElement("div");
        el.className = "fetch" + (f.batches ? "" : " empty"); el.dataset.testid = "fetch-" + f.n;
        el.dataset.offset = f.offset; el.dataset.lso = f.last_stable_offset; el.dataset.hwm = f.high_watermark;
        el.setAttribute("aria-label", fetchSummary(f));
        el.addEventListener("mouseenter", (e) => { if (fetchPinned < 0) showFetch(f, e); });
        el.addEventListener("mouseleave", () => { if (fetchPinned < 0) fetchTip.hidden = true; });
        el.addEventListener("mousedown", (e) => e.stopPropagation()); // not a drag of the view
        el.addEventListener("click", (e) => { e.stopPropagation(); fetchPinned = fetchPinned === f.n ? -1 : f.n; showFetch(f, e); fetchTip.hidden = fetchPinned < 0; });
        markersEl.appendChild(el);
        return [el, f];
      });
      root.dataset.fetches = j.fetches.length;
      schedule();
    }).catch(() => {});
  }
  function fetchSummary(f) {
    const got = f.batches ? "batches " + f.first_batch + "–" + f.last_offset + " (" + f.batches + ", " + f.bytes.toLocaleString() + " bytes)" : "no batches";
    return "fetch #" + f.n + " at offset " + f.offset + " (" + f.isolation + "): " + got;
  }
  function showFetch(f, e) {
    const ab = f.aborted_transactions;
    const abText = ab === null ? "null (not a read_committed response)" : ab.length === 0 ? "empty" : ab.map((a) => "producer " + a.producer_id + " from " + a.first_offset).join(", ");
    fetchTip.innerHTML = "<div><b></b></div><div class=ft-broker data-testid=fetch-tip-broker></div><div class=ft-aborted data-testid=fetch-tip-aborted></div>";
    fetchTip.querySelector("b").textContent = fetchSummary(f) + (f.time_ms ? " · " + new Date(f.time_ms).toISOString().replace("T", " ").replace("Z", " UTC") : "");
    fetchTip.querySelector(".ft-broker").textContent = "broker reported LSO " + f.last_stable_offset + " · HWM " + f.high_watermark + " · log start " + f.log_start_offset + (f.error_code ? " · error " + f.error_code : "") + (f.partial_bytes ? " · " + f.partial_bytes + " bytes of a partial batch dropped" : "");
    fetchTip.querySelector(".ft-aborted").textContent = "aborted transactions: " + abText;
    fetchTip.hidden = false;
    fetchTip.style.left = Math.min(e.clientX + 12, window.innerWidth - 440) + "px";
    fetchTip.style.top = (e.clientY + 14) + "px";
  }
  function placeFetches() {
    for (const [el, f] of fetches) {
      const from = f.offset >= 0 ? f.offset : f.first_batch;
      if (from === null) { el.hidden = true; continue; }
      const x0 = xOf(from), x1 = f.batches ? xEnd(f.last_offset) : x0 + 2;
      el.hidden = x1 < 0 || x0 > W;
      if (el.hidden) continue;
      el.style.left = x0 + "px"; el.style.width = Math.max(x1 - x0, 2) + "px";
      el.style.top = (BAND - 11 + (f.n % 2) * 4) + "px";
    }
  }

  function niceStep(span, px) {
    const raw = span / Math.max(px / 90, 1), p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return Math.max(m * p, 1);
    return 10 * p;
  }
  function drawAxis() {
    if (state.axis === "time") { drawTimeAxis(); return; }
    const step = niceStep(view.to - view.from, W);
    let html = "";
    for (let o = Math.ceil(view.from / step) * step, n = 0; o <= view.to && n < 60; o += step, n++) {
      if (o < part.logStart) continue;
      o += 0; // no "-0"
      html += '<div class="tick" style="left:' + xOf(o).toFixed(1) + 'px">' + o.toLocaleString() + "</div>";
    }
    axisEl.innerHTML = html;
  }

  // The hidden list makes the canvas accessible (and testable) when few
  // batches are in view.
  //
  // Rebuilding it is DOM work (up to 2,000 elements, then style and layout)
  // that made zoom frames take 80-140 ms in the 1M-batch benchmark, so it
  // runs once the view has stopped moving, not on every frame.
  let listKey = "", listTimer = 0, listFresh = true;
  function updateList(visible, count) {
    const key = gen + ":" + (visible.length ? visible[0] + "-" + visible[visible.length - 1] : "none") + ":" + count;
    if (key === listKey) return;
    listFresh = false;
    clearTimeout(listTimer);
    listTimer = setTimeout(() => { listFresh = true; rebuildList(key, visible, count); }, 120);
  }
  function rebuildList(key, visible, count) {
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
      li.textContent = "offsets " + D.from[i] + "–" + D.to[i] + ": " + VERDICTS[D.verdict[i]] + " (" + (CAUSES[D.cause[i]] || "") + ")";
      frag.appendChild(li);
    }
    batchList.appendChild(frag);
  }

  // --- minimap ------------------------------------------------------------------
  let miniImage = null;
  // The minimap shows the whole log as stacked proportions: per column, the
  // share of offsets of each kind, so that a rare kind is visible without
  // hiding what dominates. On the time axis it follows the main view: the
  // columns are equal steps of time over the domain (miniX), a decision
  // counts for the share of its time extent in a column.
  const MINI_KINDS = ["delivered", "aborted", "commit", "abort", "control", "pending", "before", "gap"];
  function drawMini() {
    if (!D || !meta) return;
    const w = mini.width, h = mini.height;
    const cnt = new Float64Array(w * 8);
    const scale = w / (domain.to - domain.from), cs = meta.chunk_size, time = state.axis === "time";
    const tc = time ? timeCursor() : null, [t0, t1] = time ? timeDomain() : [0, 1], tscale = w / Math.max(t1 - t0, 1e-9);
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
    mctx.fillStyle = "#f4f4f4"; mctx.fillRect(0, 0, w, h);
    for (let x = 0; x < w; x++) {
      let tot = 0;
      for (let k = 0; k < 8; k++) tot += cnt[x * 8 + k];
      if (!tot) continue;
      let y = 0;
      for (let k = 0; k < 8; k++) {
        const c = cnt[x * 8 + k]; if (!c) continue;
        // Markers and aborts get at least one device pixel so they never vanish.
        const hh = Math.max(c / tot * h, k === 0 || k === 7 ? 0 : 1);
        mctx.fillStyle = k === 7 ? "#ccc" : COLORS[MINI_KINDS[k]];
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
    const [t0, t1] = timeDomain();
    return (tOf(off) - t0) / Math.max(t1 - t0, 1e-9);
  }
  function miniCentre(f) {
    if (state.axis !== "time") { const o = domain.from + f * (domain.to - domain.from), span = view.to - view.from; setView(o - span / 2, o + span / 2); return; }
    const [t0, t1] = timeDomain(), [a, b] = viewTimes(), tm = t0 + f * (t1 - t0);
    setTimeView(tm - (b - a) / 2, tm + (b - a) / 2);
  }
  function drawViewportOnMini() {
    if (!miniImage) return;
    mctx.putImageData(miniImage, 0, 0);
    const w = mini.width, h = mini.height, x0 = miniX(view.from) * w, x1 = miniX(view.to) * w;
    mctx.strokeStyle = "#000"; mctx.lineWidth = 2 * dpr;
    mctx.strokeRect(Math.max(x0, 1), 1, Math.max(x1 - x0, 3), h - 2);
  }

  // --- interaction -------------------------------------------------------------
  function setView(from, to, opts) {
    // On the time axis a long pause lies between two offsets, so zooming
    // into it needs views narrower than one offset.
    let span = Math.max(to - from, state.axis === "time" ? 1e-6 : 4);
    const full = domain.to - domain.from;
    span = Math.min(span, full * 1.02 + 4);
    let f = from;
    if (f < domain.from - span * 0.1) f = domain.from - span * 0.1;
    if (f + span > domain.to + span * 0.1) f = domain.to + span * 0.1 - span;
    view.from = f; view.to = f + span;
    schedule();
    viewportChanged();
    if (!opts || !opts.quiet) updateURL();
  }
  function zoom(factor, atX) {
    const x = atX === undefined ? W / 2 : atX, o = offAt(x);
    if (state.axis === "time") {
      const [a, b] = viewTimes(), tm = a + x / W * (b - a), span = (b - a) * factor;
      setTimeView(tm - span * (x / W), tm - span * (x / W) + span);
      return;
    }
    const span = (view.to - view.from) * factor;
    setView(o - span * (x / W), o - span * (x / W) + span);
  }
  function pan(dx) {
    if (state.axis === "time") { const [a, b] = viewTimes(), d = dx / W * (b - a); setTimeView(a + d, b + d); return; }
    const d = dx / W * (view.to - view.from); setView(view.from + d, view.to + d);
  }
  let vpTimer = 0;
  function viewportChanged() {
    clearTimeout(vpTimer);
    vpTimer = setTimeout(() => { if (!done) send({ type: "viewport", from: Math.floor(view.from), to: Math.ceil(view.to) }); }, 60);
  }
  let urlTimer = 0;
  function updateURL() {
    clearTimeout(urlTimer);
    urlTimer = setTimeout(() => {
      const u = new URL(location.href);
      // A time view may be a fraction of an offset wide (setView).
      const tm = state.axis === "time";
      u.searchParams.set("from", tm ? +view.from.toFixed(6) : Math.floor(view.from));
      u.searchParams.set("to", tm ? +view.to.toFixed(6) : Math.ceil(view.to));
      u.searchParams.set("isolation", state.isolation);
      if (state.position >= 0) u.searchParams.set("position", state.position); else u.searchParams.delete("position");
      if (state.maxBytes !== 1048576) u.searchParams.set("max_bytes", state.maxBytes); else u.searchParams.delete("max_bytes");
      if (state.selected !== null) u.searchParams.set("sel", state.selected); else u.searchParams.delete("sel");
      if (state.variant !== "java") u.searchParams.set("variant", state.variant); else u.searchParams.delete("variant");
      if (state.axis === "time") u.searchParams.set("axis", "time"); else u.searchParams.delete("axis");
      try { history.replaceState(null, "", u); } catch (e) { /* file:// may refuse */ }
      updateCounts();
    }, 80);
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
    if (embedded || !apiPath) { countsEl.hidden = true; return; }
    const from = Math.max(Math.floor(view.from), part.logStart), to = Math.min(Math.ceil(view.to) - 1, part.logEnd - 1);
    const seq = ++countsSeq;
    if (from > to) { countsEl.textContent = "no offsets in view"; countsEl.dataset.from = ""; return; }
    fetch(apiPath + "/counts?from=" + from + "&to=" + to + "&" + optsQuery()).then((r) => r.ok ? r.json() : Promise.reject(r.status)).then((c) => {
      if (seq !== countsSeq) return; // a newer view asked since
      const n = (v) => Number(v).toLocaleString();
      const kinds = [["delivered", c.delivered_records, "delivered"], ["aborted", c.aborted_records, "aborted"], ["control", c.control_markers, "markers"],
        ["pending", c.pending_records, "pending behind the LSO"], ["before_position", c.before_position_records, "below the position"],
        ["gap", c.missing_offsets, "offsets without a record"]];
      let h = "in view, offsets " + n(c.from) + "–" + n(c.to) + ': <b data-kind="records">' + n(c.records) + "</b> record" + (c.records === 1 ? "" : "s");
      kinds.forEach(([k, v, label], j) => {
        if (j > 0 && v === 0) return; // delivered is always shown; the rest when present
        if (v === 1) label = label.replace("markers", "marker").replace("offsets", "offset");
        h += (j === 0 ? ": " : " · ") + '<span class="vc-' + k + '"><b data-kind="' + k + '">' + n(v) + "</b> " + label + "</span>";
      });
      countsEl.innerHTML = h;
      countsEl.dataset.from = c.from; countsEl.dataset.to = c.to; countsEl.dataset.isolation = c.options.isolation;
      countsEl.hidden = false;
    }).catch(() => { if (seq === countsSeq) countsEl.textContent = "record counts unavailable"; });
  }

  // --- jumping -------------------------------------------------------------
  // centreOn moves the view, keeping its width, so that offset off is in
  // its middle, on either axis.
  function centreOn(off) {
    if (state.axis !== "time") { const span = view.to - view.from; setView(off - span / 2, off + span / 2); return; }
    const [a, b] = viewTimes(), tm = tOf(off);
    setTimeView(tm - (b - a) / 2, tm + (b - a) / 2);
  }
  // jumpAborted selects the next (dir 1) or previous (dir −1) aborted batch
  // after the selection, or the view's middle, among the decisions that
  // have arrived, and opens its detail.
  function jumpAborted(dir) {
    if (!D || !meta) return;
    const ref = state.selected !== null ? state.selected : offAt(W / 2), cs = meta.chunk_size;
    let best = -1;
    for (let i = 0; i < D.n; i++) {
      if (!D.loaded[Math.floor(i / cs)] || D.verdict[i] !== ABORTED) continue;
      const f = D.from[i];
      if (dir > 0 ? f > ref && (best < 0 || f < D.from[best]) : f < ref && (best < 0 || f > D.from[best])) best = i;
    }
    if (best < 0) { status("no " + (dir > 0 ? "later" : "earlier") + " aborted batch"); return; }
    centreOn((D.from[best] + D.to[best] + 1) / 2);
    state.selected = D.from[best]; updateURL(); schedule();
    openDetail(D.from[best]);
  }
  const help = $('[data-testid="shortcuts"]');
  function toggleHelp(show) { if (help) help.hidden = show === undefined ? !help.hidden : !show; }
  const helpBtn = $('[data-testid="shortcuts-button"]');
  if (helpBtn) helpBtn.onclick = () => toggleHelp();
  function restart() {
    updateURL();
    if (ws && ws.readyState === 1) {
      streamStart = performance.now(); done = false;
      send({ type: "options", isolation: state.isolation, position: state.position, max_bytes: state.maxBytes, variant: state.variant });
      send({ type: "viewport", from: Math.floor(view.from), to: Math.ceil(view.to) });
    } else connect();
    if (state.selected !== null) openDetail(state.selected);
  }

  plot.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = plot.getBoundingClientRect();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan(e.deltaX || e.deltaY);
    else zoom(Math.pow(1.0015, e.deltaY), e.clientX - r.left);
  }, { passive: false });
  let drag = null;
  // Focus (for the keys) must not scroll: the page would move under the
  // pointer between mousedown and mouseup, and the click land elsewhere.
  plot.addEventListener("mousedown", (e) => { drag = { x: e.clientX, moved: false, from: view.from, to: view.to }; plot.classList.add("dragging"); root.focus({ preventScroll: true }); });
  window.addEventListener("mousemove", (e) => {
    if (drag) {
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) {
        if (state.axis === "time") { const a = tOf(drag.from), b = tOf(drag.to), d = -dx / W * (b - a); setTimeView(a + d, b + d); }
        else { const d = -dx / W * (drag.to - drag.from); setView(drag.from + d, drag.to + d); }
        hideTip(); return;
      }
    }
    hover(e);
  });
  window.addEventListener("mouseup", (e) => {
    if (!drag) return;
    const wasDrag = drag.moved; drag = null; plot.classList.remove("dragging");
    if (!wasDrag) click(e);
  });
  root.addEventListener("keydown", (e) => {
    switch (e.key) {
      case "+": case "=": zoom(1 / 1.5); break;
      case "-": case "_": zoom(1.5); break;
      case "ArrowLeft": pan(-W / 8); break;
      case "ArrowRight": pan(W / 8); break;
      case "0": case "Home": setView(domain.from, domain.to); break;
      case "l": case "L": centreOn(part.lso); break;
      case "a": jumpAborted(1); break;
      case "A": jumpAborted(-1); break;
      case "?": toggleHelp(); break;
      case "Escape": if (help && !help.hidden) toggleHelp(false); else closeDetail(); break;
      default: return;
    }
    e.preventDefault();
  });
  $('[data-testid="zoom-in"]').onclick = () => zoom(1 / 1.5);
  $('[data-testid="zoom-out"]').onclick = () => zoom(1.5);
  $('[data-testid="zoom-reset"]').onclick = () => setView(domain.from, domain.to);
  isoEl.onchange = () => { state.isolation = isoEl.value; restart(); };
  varEl.onchange = () => { state.variant = varEl.value; restart(); };
  posEl.onchange = () => { state.position = posEl.value === "" ? -1 : Math.max(-1, Math.floor(+posEl.value)); restart(); };
  maxEl.onchange = () => { const v = Math.floor(+maxEl.value); if (v > 0) { state.maxBytes = v; restart(); } };
  let miniDrag = false;
  // A click or drag on the minimap centres the view there, on either axis.
  const miniMove = (e) => { const r = mini.getBoundingClientRect(); miniCentre((e.clientX - r.left) / r.width); };
  mini.addEventListener("mousedown", (e) => { miniDrag = true; miniMove(e); });
  window.addEventListener("mousemove", (e) => { if (miniDrag) miniMove(e); });
  window.addEventListener("mouseup", () => { miniDrag = false; });
  window.addEventListener("resize", resize);
  // The plot also changes width without a window resize (a vertical
  // scrollbar appearing as the page grows): W would then be stale, the
  // canvas bitmap scaled to the new width and the DOM markers and ticks,
  // placed in W's pixels, off from the drawn batches.
  // (resize records the widths it laid out for, so the observer's first
  // call, on observe, is a no-op.)
  if (window.ResizeObserver) {
    const ro = new ResizeObserver(() => { if (plot.clientWidth !== W || mini.clientWidth !== miniW) resize(); });
    ro.observe(plot); ro.observe(mini);
  }

  function pointed(e) {
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    if (x < 0 || y < 0 || x > r.width || y > r.height || !D) return -1;
    return decisionAt(offAt(x), Math.floor(y / laneH()));
  }
  // Reasons are the server's sentences (txnindex Decision.Reason); they are
  // fetched on hover and cached per options.
  const reasons = new Map();
  function optsQuery() { return "isolation=" + state.isolation + "&position=" + state.position + "&max_bytes=" + state.maxBytes + "&variant=" + state.variant; }
  function reasonOf(off) {
    const key = optsQuery() + "@" + off;
    if (embedded && !reasons.has(key)) {
      const rs = embedded.reasons && embedded.reasons[state.isolation];
      if (!rs) return Promise.resolve(embedded.note || "the reasons are not in this export");
      const hits = rs.filter((d) => d[0] <= off && off <= d[1]);
      const d = hits.find((d) => d[2]) || hits[0];
      reasons.set(key, Promise.resolve(d ? d[3] : ""));
    }
    if (!reasons.has(key)) {
      reasons.set(key, fetch(apiPath + "/decisions?from=" + off + "&to=" + off + "&" + optsQuery())
        .then((r) => r.text()).then((t) => {
          const lines = t.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
          const d = lines.find((d) => d.from <= off && off <= d.to && d.batch_base_offset !== undefined) || lines[0];
          return d ? d.reason : "";
        }).catch(() => ""));
    }
    return reasons.get(key);
  }
  let tipFor = -1;
  function describe(i) {
    const v = VERDICTS[D.verdict[i]], f = D.flags[i];
    let what = v;
    if (f & F_COMMIT) what = "control · COMMIT marker"; else if (f & F_ABORT) what = "control · ABORT marker";
    const lane = D.lane[i] === LANE_GAP ? "gap" : meta.lanes[D.lane[i]] ? meta.lanes[D.lane[i]].label : "";
    const time = D.ts[i] >= 0 ? "max timestamp " + new Date(D.ts[i]).toISOString().replace("T", " ").replace("Z", " UTC") : "";
    return { what, lane, time, range: D.from[i] === D.to[i] ? "offset " + D.from[i] : "offsets " + D.from[i] + "–" + D.to[i] };
  }
  function hover(e) {
    const i = pointed(e);
    if (i < 0) { hideTip(); return; }
    const d = describe(i);
    tooltip.hidden = false;
    tooltip.style.left = Math.min(e.clientX + 14, window.innerWidth - 430) + "px";
    tooltip.style.top = (e.clientY + 16) + "px";
    if (tipFor === i) return;
    tipFor = i;
    tooltip.dataset.decision = VERDICTS[D.verdict[i]];
    tooltip.dataset.offset = D.from[i];
    tooltip.innerHTML = "<div><b></b> · <span class=r></span></div><div class=tt-lane></div><div class=tt-time data-testid=tooltip-time></div><div class=reason>…</div>";
    tooltip.querySelector("b").textContent = d.what;
    tooltip.querySelector(".r").textContent = d.range;
    tooltip.querySelector(".tt-lane").textContent = d.lane + " · " + (CAUSES[D.cause[i]] || "");
    tooltip.querySelector(".tt-time").textContent = d.time;
    const off = D.from[i];
    reasonOf(off).then((s) => { if (tipFor === i) tooltip.querySelector(".reason").textContent = s; });
  }
  function hideTip() { tooltip.hidden = true; tipFor = -1; }
  plot.addEventListener("mouseleave", hideTip);

  function click(e) {
    const i = pointed(e);
    if (i < 0 || D.lane[i] === LANE_GAP) return;
    state.selected = D.from[i]; updateURL(); schedule();
    openDetail(D.from[i]);
  }
  function closeDetail() { detail.hidden = true; state.selected = null; updateURL(); schedule(); }
  function row(k, v) { return "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>"; }
  function esc(s) { return String(s === null || s === undefined ? "—" : s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }
  function loadBatch(off) {
    if (!embedded) return fetch(apiPath + "/batches/" + off + "?" + optsQuery()).then((r) => r.ok ? r.json() : Promise.reject(r.status));
    const bs = embedded.batches && embedded.batches[state.isolation];
    if (!bs) return Promise.reject(embedded.note || "batch details are not in this export");
    const b = bs.find((b) => b.base_offset <= off && off <= b.last_offset);
    return b ? Promise.resolve(b) : Promise.reject("not in this export");
  }
  function openDetail(off) {
    loadBatch(off).then((b) => {
      const d = b.decision || {}, t = b.transaction, a = b.aborted_entry;
      let h = '<button type="button" class="close" data-testid="detail-close" aria-label="close">✕</button>';
      h += "<h2>batch " + b.base_offset + (b.last_offset !== b.base_offset ? "–" + b.last_offset : "") + "</h2>";
      h += '<div class="reason" data-testid="detail-reason" data-decision="' + esc(d.decision) + '">' + esc(d.reason || d.decision) + "</div>";
      h += '<div class="cols"><table><caption>header</caption>' + row("producer id", b.producer_id) + row("epoch", b.producer_epoch) +
        row("base sequence", b.base_sequence) + row("records", b.records_count) + row("size", b.size + " bytes") + row("position", b.position) +
        row("magic", b.magic) + row("attributes", "0x" + b.attributes.toString(16)) + row("transactional", b.transactional) +
        row("control", b.control) + row("compression", b.compression) + row("timestamp type", b.timestamp_type) +
        row("max timestamp", b.max_timestamp >= 0 ? new Date(b.max_timestamp).toISOString() : b.max_timestamp) + "</table>";
      h += "<table><caption>location</caption>" + row("segment", b.segment) + row(".txnindex", b.txnindex) +
        row("fetch offset", d.fetch_offset) + row("decision", d.decision) + row("cause", d.cause) + row("read_uncommitted", d.read_uncommitted) + "</table>";
      if (t) h += "<table><caption>transaction</caption>" + row("state", t.state) + row("first offset", t.first_offset) + row("last data offset", t.last_data_offset) +
        row("marker offset", t.marker_offset < 0 ? "none (open)" : t.marker_offset) + row("batches", t.batches) + row("records", t.records) + "</table>";
      if (a) h += "<table><caption>aborted entry</caption>" + row("file", a.file) + row("first offset", a.first_offset) + row("last offset", a.last_offset) +
        row("last stable offset", a.last_stable_offset) + row("from disk", a.from_disk) + "</table>";
      h += "</div>";
      if (b.record_list.length) {
        const shown = b.record_list.slice(0, 50);
        h += '<table class="records" data-testid="detail-records"><caption>records' + (b.record_list.length > 50 ? " (first 50 of " + b.record_list.length + ")" : "") +
          "</caption><tr><th>offset</th><th>timestamp</th><th>key</th><th>value</th><th>headers</th></tr>";
        for (const r of shown) {
          const show = (t, raw) => t !== undefined && t !== null ? t : raw === null ? "null" : raw.length > 24 ? "base64:" + raw.slice(0, 24) + "…" : "base64:" + raw;
          const val = r.control ? r.control + " marker" + (r.coordinator_epoch !== undefined ? " (coordinator epoch " + r.coordinator_epoch + ")" : "") : show(r.value_text, r.value);
          h += "<tr><td>" + r.offset + "</td><td>" + (r.timestamp >= 0 ? esc(new Date(r.timestamp).toISOString()) : r.timestamp) + "</td><td>" +
            esc(r.control ? "—" : show(r.key_text, r.key)) + "</td><td>" + esc(val) + "</td><td>" + esc((r.headers || []).map((x) => x.key).join(", ")) + "</td></tr>";
        }
        h += "</table>";
      } else h += "<p>" + esc(b.records_note || "no records") + "</p>";
      if (!embedded) h += '<button type="button" data-testid="consume-from-here">consume from here (position ' + b.base_offset + ")</button>";
      detail.innerHTML = h; detail.hidden = false; detail.dataset.offset = b.base_offset;
      detail.querySelector(".close").onclick = closeDetail;
      const cfh = detail.querySelector('[data-testid="consume-from-here"]');
      if (cfh) cfh.onclick = () => { state.position = b.base_offset; posEl.value = b.base_offset; restart(); };
    }).catch((err) => { detail.hidden = false; detail.textContent = "no batch at offset " + off + " (" + err + ")"; });
  }

  // --- test and benchmark hooks -------------------------------------------
  window.txnscope = {
    state: () => ({ done, painted: done && painted && listFresh, gen, decisions: D ? D.n : 0, loadedChunks: D ? D.chunkCount : 0, view: { from: view.from, to: view.to },
      isolation: state.isolation, variant: state.variant, axis: state.axis, position: state.position, maxBytes: state.maxBytes, selected: state.selected, width: W }),
    // batchAt returns the decision under the client coordinates, or null.
    fetches: () => fetches.length,
    batchAt: (x, y) => {
      const i = pointed({ clientX: x, clientY: y });
      return i < 0 ? null : { from: D.from[i], to: D.to[i], decision: VERDICTS[D.verdict[i]], cause: CAUSES[D.cause[i]], lane: D.lane[i], flags: D.flags[i] };
    },
    // xAt returns the client x where offset off is drawn (on either axis).
    xAt: (off) => canvas.getBoundingClientRect().left + xOf(off),
    // pointOf returns client coordinates inside the drawn decision covering off.
    pointOf: (off) => {
      if (!D) return null;
      const [i0, i1] = visibleRange(off, off + 1);
      for (let i = i0; i < i1; i++) {
        if (D.from[i] <= off && off <= D.to[i] && D.lane[i] !== LANE_GAP) {
          const r = canvas.getBoundingClientRect(), lh = laneH();
          const x0 = Math.max(xOf(D.from[i]), 0), x1 = Math.min(xEnd(D.to[i]), W);
          return { x: r.left + (x0 + x1) / 2, y: r.top + D.lane[i] * lh + lh / 2 + 4 };
        }
      }
      return null;
    },
    // drawn summarises what the last frame drew: decisions per verdict.
    drawn: () => {
      const c = {};
      (lastDrawVisible || []).forEach((i) => { const k = binOf(i); c[k] = (c[k] || 0) + 1; });
      return c;
    },
    setView: (f, t) => setView(f, t),
    // highlight(from, to) outlines offsets [from, to] (lesson.js: the batch
    // of the current step) and pans it into view; highlight(null) clears it.
    highlight: (f, t) => { lessonMark = f === null ? null : { from: f, to: t }; root.dataset.highlight = f === null ? "" : f + "-" + t;
      if (lessonMark && (t < view.from || f > view.to)) setView(f - (view.to - view.from) / 2, f + (view.to - view.from) / 2, { quiet: true }); schedule(); },
    // pinned describes the highlighted pinning transaction, or null.
    pinned: () => pinned && { producer: pinned.producer, first: pinned.first, last: pinned.last, state: pinned.state,
      lane: pinned.lane, shown: pinned.shown, x0: pinned.x0, x1: pinned.x1 },
    zoom: (factor) => zoom(factor),
    pan: (px) => pan(px),
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

  resize();
  loadFetches();
  connect();
  if (state.selected !== null) openDetail(state.selected);
})();
