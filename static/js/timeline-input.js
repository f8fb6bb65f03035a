// txnscope timeline, input: the mouse (wheel zoom, drag pan, hover, click),
// the keys, the buttons and consumer controls, the minimap's pointer, and
// resizes.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { root, $, plot, mini, isoEl, posEl, maxEl, varEl, part, state, domain, view, S } = tl;
  const C = window.txnscopeContract;
  const { LANE_GAP } = C;
  const { ABORTED } = C.VERDICT;

  // jumpAborted selects the next (dir 1) or previous (dir −1) aborted batch
  // after the selection, or the view's middle, among the decisions that
  // have arrived, and opens its detail. Past the last one it wraps to the
  // first (before the first, to the last), as a search does.
  function jumpAborted(dir) {
    const D = S.D, meta = S.meta;
    if (!D || !meta) return;
    const ref = state.selected !== null ? state.selected : tl.offAt(S.W / 2), cs = meta.chunk_size;
    let best = -1;
    for (let i = 0; i < D.n; i++) {
      if (!D.loaded[Math.floor(i / cs)] || D.verdict[i] !== ABORTED) continue;
      const f = D.from[i];
      if (dir > 0 ? f > ref && (best < 0 || f < D.from[best]) : f < ref && (best < 0 || f > D.from[best])) best = i;
    }
    if (best < 0) {
      for (let i = 0; i < D.n; i++) {
        if (!D.loaded[Math.floor(i / cs)] || D.verdict[i] !== ABORTED) continue;
        if (best < 0 || (dir > 0 ? D.from[i] < D.from[best] : D.from[i] > D.from[best])) best = i;
      }
      if (best < 0) { tl.status("no aborted batch"); return; }
      tl.status(dir > 0 ? "past the last aborted batch: back to the first" : "before the first aborted batch: on to the last");
    }
    select(D.from[best], (D.from[best] + D.to[best] + 1) / 2, false);
  }
  // select centres the view on at (zoomed in to a few dozen offsets when
  // zoom is set and the view is wider), selects the batch holding offset
  // off and opens its detail.
  function select(off, at, zoom) {
    tl.centreOn(at);
    if (zoom && state.axis !== "time" && view.to - view.from > 200) tl.zoom(80 / (view.to - view.from), S.W / 2);
    state.selected = off; tl.updateURL(); tl.schedule();
    tl.openDetail(off);
  }

  // The search box goes to an offset, a producer (by its id) or a
  // transactional id (a lane's name, or the pinning transaction's). Numbers
  // are offsets and producer ids both: each match is listed, Enter takes
  // the first, a click any.
  const searchEl = $('[data-testid="search"]'), resultsEl = $('[data-testid="search-results"]');
  const laneName = (l) => { const m = /^(.*) \(producer [^)]*\)$/.exec(l.display || ""); return m ? m[1] : ""; };
  function matches(q) {
    const out = [], lanes = ((S.meta && S.meta.lanes) || []).filter((l) => l.lane > 0 && l.batches > 0);
    q = q.trim();
    if (!q) return out;
    if (/^\d+$/.test(q)) {
      const n = Number(q);
      if (n >= part.logStart && n < Math.max(part.logEnd, part.logStart + 1)) out.push({ what: "offset " + q, go: () => select(n, n + 0.5, true) });
      for (const l of lanes) if (tl.pid(l) === q) out.push({ what: "producer " + q + (laneName(l) ? ", transactional id " + laneName(l) : ""), go: () => goLane(l) });
    }
    const f = q.toLowerCase();
    for (const l of lanes) if (laneName(l).toLowerCase().includes(f)) out.push({ what: "transactional id " + laneName(l) + " (producer " + tl.pid(l) + ")", go: () => goLane(l) });
    const pinnedId = $('[data-testid="pinned-transactional-id"]'), pinnedPid = root.dataset.pinnedProducer;
    if (pinnedId && pinnedPid && pinnedId.textContent.toLowerCase().includes(f) && !out.some((m) => m.what.endsWith("(producer " + pinnedPid + ")"))) {
      const l = lanes.find((x) => tl.pid(x) === pinnedPid);
      if (l) out.push({ what: "transactional id " + pinnedId.textContent + " (producer " + pinnedPid + ")", go: () => goLane(l) });
    }
    return out.slice(0, 12);
  }
  // goLane gives the producer a row of its own (the producers filter, when
  // it shares one) and selects its first batch.
  function goLane(l) {
    const D = S.D, pid = tl.pid(l), filter = $('[data-testid="lane-filter"]');
    if (!D) return;
    if (!root.querySelector('[data-testid="lane-' + pid + '"]') && filter) { filter.value = pid; filter.dispatchEvent(new Event("input")); }
    root.querySelectorAll(".lane.found").forEach((e) => e.classList.remove("found"));
    const row = root.querySelector('[data-testid="lane-' + pid + '"]');
    if (row) row.classList.add("found");
    for (let i = 0; i < D.n; i++) if (D.lane[i] === l.lane) { select(D.from[i], (D.from[i] + D.to[i] + 1) / 2, true); return; }
    tl.status("producer " + pid + "'s batches have not arrived yet");
  }
  function showMatches() {
    const ms = matches(searchEl.value);
    resultsEl.textContent = "";
    if (!searchEl.value.trim()) { resultsEl.hidden = true; return ms; }
    for (const m of ms) {
      const li = document.createElement("li"), b = document.createElement("button");
      b.type = "button"; b.textContent = m.what; b.dataset.testid = "search-result";
      b.onclick = () => { resultsEl.hidden = true; m.go(); };
      li.appendChild(b); resultsEl.appendChild(li);
    }
    if (!ms.length) { const li = document.createElement("li"); li.className = "none"; li.textContent = "no offset, producer id or transactional id matches"; resultsEl.appendChild(li); }
    resultsEl.hidden = false;
    return ms;
  }
  if (searchEl && resultsEl) {
    searchEl.addEventListener("input", showMatches);
    searchEl.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); const ms = showMatches(); if (ms.length) { resultsEl.hidden = true; ms[0].go(); } }
      else if (e.key === "Escape") { resultsEl.hidden = true; }
    });
    // Leaving the box closes the list, unless for one of its buttons (a
    // click's mousedown blurs the box first) or back into the box.
    searchEl.addEventListener("blur", () => setTimeout(() => {
      if (document.activeElement !== searchEl && !resultsEl.contains(document.activeElement)) resultsEl.hidden = true;
    }, 150));
  }
  const help = $('[data-testid="shortcuts"]');
  function toggleHelp(show) { if (help) help.hidden = show === undefined ? !help.hidden : !show; }
  const helpBtn = $('[data-testid="shortcuts-button"]');
  if (helpBtn) helpBtn.onclick = () => toggleHelp();

  plot.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = plot.getBoundingClientRect();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) tl.pan(e.deltaX || e.deltaY);
    else tl.zoom(Math.pow(1.0015, e.deltaY), e.clientX - r.left);
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
        if (state.axis === "time") { const a = tl.tOf(drag.from), b = tl.tOf(drag.to), d = -dx / S.W * (b - a); tl.setTimeView(a + d, b + d, { pan: true }); }
        else { const d = -dx / S.W * (drag.to - drag.from); tl.setView(drag.from + d, drag.to + d, { pan: true }); }
        tl.hideTip(); return;
      }
    }
    tl.hover(e);
  });
  window.addEventListener("mouseup", (e) => {
    if (!drag) return;
    const wasDrag = drag.moved; drag = null; plot.classList.remove("dragging");
    if (!wasDrag) click(e);
  });
  root.addEventListener("keydown", (e) => {
    switch (e.key) {
      case "+": case "=": tl.zoom(1 / 1.5); break;
      case "-": case "_": tl.zoom(1.5); break;
      case "ArrowLeft": tl.pan(-S.W / 8); break;
      case "ArrowRight": tl.pan(S.W / 8); break;
      case "0": case "Home": tl.setView(domain.from, domain.to); break;
      case "l": case "L": tl.centreOn(part.lso); break;
      case "a": jumpAborted(1); break;
      case "A": jumpAborted(-1); break;
      case "?": toggleHelp(); break;
      case "/": if (searchEl) { searchEl.focus(); searchEl.select(); } break;
      case "Escape": if (help && !help.hidden) toggleHelp(false); else tl.closeDetail(); break;
      default: return;
    }
    e.preventDefault();
  });
  $('[data-testid="zoom-in"]').onclick = () => tl.zoom(1 / 1.5);
  $('[data-testid="zoom-out"]').onclick = () => tl.zoom(1.5);
  $('[data-testid="zoom-reset"]').onclick = () => tl.setView(domain.from, domain.to);
  isoEl.onchange = () => { state.isolation = isoEl.value; tl.restart(); };
  varEl.onchange = () => { state.variant = varEl.value; tl.restart(); };
  posEl.onchange = () => { state.position = posEl.value === "" ? -1 : Math.max(-1, Math.floor(+posEl.value)); tl.restart(); };
  maxEl.onchange = () => { const v = Math.floor(+maxEl.value); if (v > 0) { state.maxBytes = v; tl.restart(); } };
  let miniDrag = false;
  // A click or drag on the minimap centres the view there, on either axis.
  const miniMove = (e) => { const r = mini.getBoundingClientRect(); tl.miniCentre((e.clientX - r.left) / r.width); };
  mini.addEventListener("mousedown", (e) => { miniDrag = true; miniMove(e); });
  window.addEventListener("mousemove", (e) => { if (miniDrag) miniMove(e); });
  window.addEventListener("mouseup", () => { miniDrag = false; });
  window.addEventListener("resize", tl.resize);
  // The plot also changes width without a window resize (a vertical
  // scrollbar appearing as the page grows): W would then be stale, the
  // canvas bitmap scaled to the new width and the DOM markers and ticks,
  // placed in W's pixels, off from the drawn batches.
  // (resize records the widths it laid out for, so the observer's first
  // call, on observe, is a no-op.)
  if (window.ResizeObserver) {
    const ro = new ResizeObserver(() => { if (plot.clientWidth !== S.W || mini.clientWidth !== S.miniW) tl.resize(); });
    ro.observe(plot); ro.observe(mini);
  }
  plot.addEventListener("mouseleave", tl.hideTip);

  // click selects the batch under the pointer and opens its detail.
  function click(e) {
    const i = tl.pointed(e), D = S.D;
    if (i < 0 || D.lane[i] === LANE_GAP) return;
    state.selected = D.from[i]; tl.updateURL(); tl.schedule();
    tl.openDetail(D.from[i]);
  }
})();
