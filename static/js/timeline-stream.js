// txnscope timeline, stream decoding: the /ws/v1 stream (docs/protocol.md),
// or in a static export the messages recorded in the page, applied to typed
// arrays (S.D, the decisions; S.T, the transactions) as frames arrive; the
// lookups over those arrays; the viewport and options sent back.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { root, wsPath, embedded, part, state, view, metrics, mark, S } = tl;
  const C = window.txnscopeContract;
  const { LANE_GAP, FRAME_DECISIONS, FRAME_TXNS, HDR, DEC, TXR } = C;
  const { OPEN: TXN_OPEN } = C.TXN_STATE;

  let ws = null, streamStart = performance.now();

  // alloc returns the arrays of n decisions in chunks chunks (meta.totals).
  function alloc(n, chunks) {
    return {
      n, from: new Float64Array(n), to: new Float64Array(n), bidx: new Int32Array(n), txn: new Int32Array(n),
      lane: new Uint16Array(n), ts: new Float64Array(n).fill(-1), verdict: new Uint8Array(n), cause: new Uint8Array(n), unc: new Uint8Array(n),
      flags: new Uint8Array(n), loaded: new Uint8Array(chunks), chunkCount: 0,
    };
  }

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
    streamStart = performance.now(); S.done = false;
    if (embedded) { replay(); return; }
    ws = new WebSocket(wsURL());
    ws.binaryType = "arraybuffer";
    ws.onopen = () => mark("open");
    ws.onmessage = (ev) => typeof ev.data === "string" ? onText(JSON.parse(ev.data)) : onBinary(ev.data);
    ws.onclose = (ev) => { if (!S.done) tl.status("disconnected (" + ev.code + (ev.reason ? " " + ev.reason : "") + ")"); };
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
    if (!msgs) { tl.status("this export has no " + iso + " data"); return; }
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
        tl.layoutLanes(m); // the rows, re-laid for each generation (live sources gain producers)
        S.meta = m; S.gen = m.generation; S.done = false; mark("meta");
        S.D = alloc(m.totals.decisions, m.totals.chunks); S.pyrDirty = true; S.timeDirty = true;
        S.T = null;
        if (m.totals.transactions === 0) S.T = allocTxns(0);
        Object.assign(part, { logStart: m.log_start_offset, logEnd: m.log_end_offset, hwm: m.high_watermark, lso: m.last_stable_offset });
        tl.setDomain();
        tl.placeSegments();
        tl.status("streaming " + window.txnscopeFormat.count(m.totals.decisions) + " decisions…");
        tl.schedule(); tl.scheduleMini(); tl.updateCounts();
        break;
      case "progress":
        if (m.generation !== S.gen) return;
        if (m.phase === "rest") { S.windowLoaded = true; mark("window"); }
        tl.status((m.phase === "window" ? "visible window… " : "streaming… ") + window.txnscopeFormat.count(m.chunks_sent) + " of " + window.txnscopeFormat.plural(m.chunks_total, "chunk", "chunks"));
        break;
      case "done":
        if (m.generation !== S.gen) return;
        S.done = true; S.painted = false; S.windowLoaded = true; metrics.decisions = m.decisions;
        metrics.streamDone = performance.now() - streamStart;
        tl.status(window.txnscopeFormat.plural(m.decisions, "decision", "decisions") + " · " + state.isolation + (state.position >= 0 ? " from " + state.position : "") + (embedded ? " · static export" : ""));
        tl.schedule(); tl.drawMini();
        // An embedding page (the /embed route in an iframe) learns that the
        // timeline is drawn; the message carries nothing of the data.
        if (window.parent !== window) window.parent.postMessage({ type: "txnscope:rendered", generation: S.gen, decisions: m.decisions, lanes: S.laneEls.length }, "*");
        break;
      case "error":
        tl.status("server: " + m.message);
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
  const D_FROM = DEC.FROM / 8, D_TO = DEC.TO / 8, D_TS = DEC.MAX_TIMESTAMP / 8, D_BATCH = DEC.BATCH / 4, D_TXN = DEC.TXN / 4, D_LANE = DEC.LANE / 2;
  const { VERDICT: D_VERDICT, CAUSE: D_CAUSE, UNCOMMITTED: D_UNC, FLAGS: D_FLAGS } = DEC;
  const T_FIRST = TXR.FIRST / 8, T_LAST = TXR.LAST_DATA / 8, T_MARKER = TXR.MARKER / 8, T_LANE = TXR.LANE / 2, T_STATE = TXR.STATE, T_EPOCH = TXR.EPOCH / 2;
  function onBinary(buf) {
    const dv = new DataView(buf);
    const kind = dv.getUint8(HDR.KIND), g = dv.getUint32(HDR.GENERATION, true), start = dv.getUint32(HDR.START, true), count = dv.getUint32(HDR.COUNT, true);
    if (g !== S.gen || !S.meta) return;
    mark(kind === FRAME_TXNS ? "firstTxns" : "firstChunk");
    const at = C.FRAME_HEADER;
    if (kind === FRAME_TXNS) {
      if (!S.T) S.T = allocTxns(S.meta.totals.transactions);
      const T = S.T, rs = C.TXN_SIZE, q8 = rs / 8, q2 = rs / 2;
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
      const D = S.D, hasTs = rs >= DEC.MAX_TIMESTAMP + 8;
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
      S.timeDirty = true;
      D.loaded[Math.floor(start / S.meta.chunk_size)] = 1; D.chunkCount++;
      // The chunk that completes the visible window is drawn on the next
      // frame, not after the stream's redraw throttle.
      if (metrics.firstPaint === null && viewLoaded()) { S.pyrDirty = true; tl.schedule(); }
    }
    S.pyrDirty = true;
    tl.scheduleStream(); tl.scheduleMini();
  }

  // viewLoaded reports whether every chunk under the view has arrived.
  function viewLoaded() {
    const D = S.D, meta = S.meta;
    if (!D || !meta) return false;
    if (!D.n) return true;
    const c0 = chunkFor(view.from), c1 = chunkFor(view.to);
    for (let c = c0; c <= c1; c++) if (!D.loaded[c]) return false;
    return true;
  }

  // --- lookup -------------------------------------------------------------------
  // chunkFor returns the chunk that holds the decision covering off.
  function chunkFor(off) {
    const cs = S.meta.chunk_starts; let lo = 0, hi = cs.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (cs[m] <= off) lo = m + 1; else hi = m; }
    return Math.max(lo - 1, 0);
  }
  // firstAtOrAfter: first index in [a, b) with to >= off.
  function firstTo(off, a, b) {
    const D = S.D;
    let lo = a, hi = b;
    while (lo < hi) { const m = (lo + hi) >> 1; if (D.to[m] < off) lo = m + 1; else hi = m; }
    return lo;
  }
  // visibleRange returns [i0, i1) of decisions overlapping [from, to).
  function visibleRange(from, to) {
    const D = S.D, meta = S.meta;
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
  function decisionAt(off, row) {
    const D = S.D, meta = S.meta;
    if (!D || !D.n) return -1;
    const cs = meta.chunk_size;
    // Search a small window around off: at low zoom a pixel spans many
    // decisions; take the one nearest the pointer on that lane.
    const span = Math.max((view.to - view.from) / S.W * 3, 0.5);
    const [i0, i1] = visibleRange(off - span, off + span);
    let best = -1, bestDist = Infinity;
    for (let i = i0; i < i1; i++) {
      if (!D.loaded[Math.floor(i / cs)]) { i = (Math.floor(i / cs) + 1) * cs - 1; continue; }
      const ln = D.lane[i];
      if (ln !== LANE_GAP && tl.rowOf(ln) !== row) continue;
      const d = off < D.from[i] ? D.from[i] - off : off > D.to[i] + 1 ? off - D.to[i] - 1 : 0;
      if (d < bestDist || (d === bestDist && ln !== LANE_GAP && best >= 0 && D.lane[best] === LANE_GAP)) { best = i; bestDist = d; }
    }
    return bestDist <= span ? best : -1;
  }
  // viewportChanged tells the server, once the view stops moving, which
  // offsets are on screen: their chunks are sent next.
  let vpTimer = 0;
  function viewportChanged() {
    clearTimeout(vpTimer);
    vpTimer = setTimeout(() => { if (!S.done) send({ type: "viewport", from: Math.floor(view.from), to: Math.ceil(view.to) }); }, 60);
  }
  // restart streams the new options (isolation, position, …) as a new
  // generation.
  function restart() {
    tl.updateURL();
    // A tooltip open over a batch describes the old options' decision
    // (read_committed's "aborted" over a batch read_uncommitted delivers):
    // hidden, it is rebuilt from the new one at the next move.
    tl.hideTip();
    if (ws && ws.readyState === 1) {
      streamStart = performance.now(); S.done = false;
      send({ type: "options", isolation: state.isolation, position: state.position, max_bytes: state.maxBytes, variant: state.variant });
      send({ type: "viewport", from: Math.floor(view.from), to: Math.ceil(view.to) });
    } else connect();
    if (state.selected !== null) tl.openDetail(state.selected);
  }

  Object.assign(tl, { chunkFor, connect, decisionAt, restart, viewLoaded, viewportChanged, visibleRange });
})();
