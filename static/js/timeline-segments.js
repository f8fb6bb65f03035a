// txnscope timeline, segments: the page of one segment's window (a
// partition too large to load whole, web/segments.go) as a stretch of one
// continuous timeline. The view's domain is the segment (timeline-state.js
// setDomain); a pan past either end of it (timeline-axes.js setView, with
// the view already at that end) opens the neighbouring segment's page,
// the view as wide as it was and at the end it was entered from; the
// previous and next links and PgUp/PgDn do the same. The offset form, and
// centring on an offset (the LSO key), open the segment that holds the
// offset, the form's with its batch selected. The pages are the
// server's (GET …?segment=BASE), each streaming its own window over the
// websocket: a page never holds more than one segment.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl || !tl.segment) return;
  const { $, root, view, state } = tl;
  const seg = tl.segment, cells = seg.cells;
  let leaving = false;

  // open shows segment k with the view [from, to) and the selection sel
  // (null: none).
  function open(k, from, to, sel) {
    if (leaving || k < 0 || k >= cells.length) return false;
    leaving = true;
    const u = tl.pageURL(from, to, sel);
    u.searchParams.set("segment", cells[k].base);
    root.dataset.leaving = cells[k].base;
    tl.status("opening segment " + (k + 1).toLocaleString("en-US") + " of " + cells.length.toLocaleString("en-US") + "…");
    location.assign(u.toString());
    return true;
  }
  // widthIn is span, no wider than setView lets segment k's view be.
  function widthIn(k, span) {
    const c = cells[k], n = Math.max(c.next - c.base, 1), pad = Math.max(n * 0.03, 0.6);
    return Math.min(span, (n + 2 * pad) * 1.02 + 4);
  }
  // step opens the segment after (dir 1) or before (dir −1) this one, its
  // near end in view; false at either end of the log.
  function step(dir, span) {
    const k = seg.index + dir;
    if (k < 0 || k >= cells.length) return false;
    const c = cells[k], w = widthIn(k, span), m = w * 0.05;
    // The selection is of this segment's batches: the next page has none.
    return dir > 0 ? open(k, c.base - m, c.base - m + w, null) : open(k, c.next + m - w, c.next + m, null);
  }
  tl.pastEdge = step;

  const stepLink = (el, dir) => {
    if (!el || el.tagName !== "A") return;
    el.addEventListener("click", (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return; // a new tab or window: the link's own page
      if (step(dir, view.to - view.from)) e.preventDefault();
    });
  };
  stepLink($('[data-testid="segment-prev"]'), -1);
  stepLink($('[data-testid="segment-next"]'), 1);
  root.addEventListener("keydown", (e) => {
    if (e.key !== "PageDown" && e.key !== "PageUp") return;
    step(e.key === "PageDown" ? 1 : -1, view.to - view.from);
    e.preventDefault();
  });

  // elsewhere opens the segment holding offset n, if it is another, the
  // view centred on n at its width, sel selected; false when n is in this
  // segment.
  function elsewhere(n, sel) {
    let k = 0;
    while (k + 1 < cells.length && cells[k + 1].base <= n) k++;
    if (k === seg.index) return false;
    const w = widthIn(k, view.to - view.from);
    return open(k, n - w / 2, n + w / 2, sel);
  }
  // Centring on an offset of another segment (the LSO key, the lessons'
  // highlights) opens that segment.
  const centreHere = tl.centreOn;
  tl.centreOn = (off) => { if (!elsewhere(off, null)) centreHere(off); };

  // The offset form: an offset of this segment is centred and its batch
  // selected; one of another segment opens that segment so.
  const form = $('[data-testid="segment-goto"]'), input = $('[data-testid="segment-goto-offset"]');
  if (form && input) {
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const first = cells[0].base, last = cells[cells.length - 1];
      let n = Math.floor(+input.value);
      if (input.value === "" || !Number.isFinite(n)) return;
      n = Math.min(Math.max(n, first), Math.max(last.next - 1, last.base));
      if (elsewhere(n, n)) return;
      centreHere(n);
      state.selected = n; tl.updateURL(); tl.schedule();
      tl.openDetail(n);
    });
  }
})();
