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
  // have arrived, and opens its detail.
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
    if (best < 0) { tl.status("no " + (dir > 0 ? "later" : "earlier") + " aborted batch"); return; }
    tl.centreOn((D.from[best] + D.to[best] + 1) / 2);
    state.selected = D.from[best]; tl.updateURL(); tl.schedule();
    tl.openDetail(D.from[best]);
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
