// txnscope timeline, markers and labels: the DOM lines and labels of the log
// start, LSO, high watermark, consumer position and segment boundaries, laid
// out so that no label covers another, and, for a capture, the Fetch
// responses the consumer received, as bars in the marker band.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { root, $, markersEl, apiPath, embedded, part, state, S, BAND } = tl;

  // placeMarker puts marker el at offset off (hidden off screen).
  function placeMarker(el, off) {
    const x = tl.xOf(off);
    el.hidden = x < -1 || x > S.W + 1;
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
      const sides = x + 5 + w <= S.W ? [[right, false], [left, true]] : [[left, true], [right, false]];
      const rows = [usual, 1 - usual];
      const tries = [];
      for (const [b, flip] of sides.slice(0, 1)) for (const row of rows) tries.push([row, b, flip]);
      for (const [b, flip] of sides.slice(1)) for (const row of rows) tries.push([row, b, flip]);
      for (let row = 2; row < maxRows; row++) for (const [b, flip] of sides) tries.push([row, b, flip]);
      const fits = ([, b]) => b[0] >= 0 && b[1] <= S.W;
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
    (S.meta.segments || []).forEach((s, i) => {
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
      tl.schedule();
    }).catch(() => {});
  }
  const fetchCount = () => fetches.length;
  function fetchSummary(f) {
    // Counted from 1 for people ("fetch 1"); f.n stays the test id's index.
    const got = f.batches ? "offsets " + f.first_batch + "–" + f.last_offset + " in " + window.txnscopeFormat.plural(f.batches, "batch", "batches") + ", " + window.txnscopeFormat.plural(f.bytes, "byte", "bytes") : "no batches";
    return "fetch " + (f.n + 1) + " at offset " + f.offset + " (" + f.isolation + "): " + got;
  }
  function showFetch(f, e) {
    const ab = f.aborted_transactions;
    const abText = ab === null ? "null (not a read_committed response)" : ab.length === 0 ? "empty" : ab.map((a) => "producer " + tl.pid(a) + " from " + a.first_offset).join(", ");
    fetchTip.innerHTML = "<div><b></b></div><div class=ft-broker data-testid=fetch-tip-broker></div><div class=ft-aborted data-testid=fetch-tip-aborted></div>";
    fetchTip.querySelector("b").textContent = fetchSummary(f) + (f.time_ms ? " · " + new Date(f.time_ms).toISOString().replace("T", " ").replace("Z", " UTC") : "");
    fetchTip.querySelector(".ft-broker").textContent = "broker reported LSO " + f.last_stable_offset + " · HWM " + f.high_watermark + " · log start " + f.log_start_offset + (f.error_code ? " · error " + f.error_code : "") + (f.partial_bytes ? " · " + window.txnscopeFormat.plural(f.partial_bytes, "byte", "bytes") + " of a partial batch dropped" : "");
    fetchTip.querySelector(".ft-aborted").textContent = "aborted transactions: " + abText;
    fetchTip.hidden = false;
    fetchTip.style.left = Math.min(e.clientX + 12, window.innerWidth - 440) + "px";
    fetchTip.style.top = (e.clientY + 14) + "px";
  }
  function placeFetches() {
    for (const [el, f] of fetches) {
      const from = f.offset >= 0 ? f.offset : f.first_batch;
      if (from === null) { el.hidden = true; continue; }
      const x0 = tl.xOf(from), x1 = f.batches ? tl.xEnd(f.last_offset) : x0 + 2;
      el.hidden = x1 < 0 || x0 > S.W;
      if (el.hidden) continue;
      el.style.left = x0 + "px"; el.style.width = Math.max(x1 - x0, 2) + "px";
      el.style.top = (BAND - 11 + (f.n % 2) * 4) + "px";
    }
  }

  Object.assign(tl, { fetchCount, loadFetches, placeFetches, placeMarkers, placeSegments });
})();
