// txnscope timeline, segments: the page of one segment's window (a
// partition too large to load whole, web/segments.go) as a stretch of one
// continuous timeline. The view's domain is the segment (timeline-state.js
// setDomain); a pan past either end of it (timeline-axes.js setView, with
// the view already at that end) opens the neighbouring segment's page,
// the view as wide as it was and at the end it was entered from; the
// previous and next links and PgUp/PgDn do the same. The offset form, and
// centring on an offset (the LSO key), open the segment that holds the
// offset, the form's with its batch selected. A click on a cell of the
// strip opens that segment at its start, the view as wide as it was: as
// many offsets, or on the time axis as long a time (?time_span=, applied
// once the new page's stream has the segment's times). The pages are the
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
  // (null: none); timeSpan, when given, is the time (ms) the view of the
  // time axis spans there (cellOpen).
  function open(k, from, to, sel, timeSpan) {
    if (leaving || k < 0 || k >= cells.length) return false;
    leaving = true;
    const u = tl.pageURL(from, to, sel);
    u.searchParams.set("segment", cells[k].base);
    if (timeSpan > 0) u.searchParams.set("time_span", +timeSpan.toFixed(3));
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

  // A cell of the strip opens its segment at its first offset (5% of the
  // view before it, as a step forward does, so that the boundary shows),
  // keeping the view's width, no wider than that segment's view may be
  // (widthIn). The link itself (?segment=BASE, the whole segment) is
  // what a modified click, a new tab or a page without script opens. On
  // the time axis, where a segment written faster or slower than this one
  // packs another number of offsets into the same time, the width kept is
  // the time: the new page gets the time span and shows it once its
  // stream has the segment's times (the ?time_span= hint below); until
  // then it draws the same number of offsets.
  function cellOpen(k) {
    const c = cells[k], w = widthIn(k, view.to - view.from), m = w * 0.05;
    const [t0, t1] = state.axis === "time" ? tl.viewTimes() : [0, 0], span = t1 - t0;
    if (k !== seg.index) return open(k, c.base - m, c.base - m + w, null, span);
    // This segment: moved to its start in place, no new page.
    if (span > 0) { const tb = tl.tOf(c.base); tl.setTimeView(tb - span * 0.05, tb + span * 0.95); } else tl.setView(c.base - m, c.base - m + w);
    return true;
  }
  document.querySelectorAll('[data-testid="segment-strip"] [data-testid="segment-cell"]').forEach((el, k) => {
    el.addEventListener("click", (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      if (cellOpen(k)) e.preventDefault();
    });
  });
  // A page opened by a cell from the time axis (?time_span=MS) shows that
  // time from the segment's start once its first stream is done: only
  // then are the batches' times, which place offsets on the time axis
  // (timeline-axes.js buildTime), known. A view moved before then is the
  // reader's and is left alone. The parameter is dropped from the URL
  // then (pageURL), so that a reload keeps the view's offsets; the
  // timeline's data-time-span-kept says the hint has been dealt with.
  const keepSpan = new URLSearchParams(location.search).get("time_span");
  if (keepSpan !== null && +keepSpan > 0 && state.axis === "time") {
    const from0 = view.from, to0 = view.to;
    const onDone = (e) => {
      if (!e.detail || e.detail.type !== "done") return;
      document.removeEventListener("txnscope:message", onDone);
      // After the stream's own handler has marked it done.
      setTimeout(() => {
        if (view.from === from0 && view.to === to0) {
          const span = +keepSpan, t0 = tl.tOf(cells[seg.index].base);
          tl.setTimeView(t0 - span * 0.05, t0 + span * 0.95);
        }
        root.dataset.timeSpanKept = keepSpan;
      }, 0);
    };
    document.addEventListener("txnscope:message", onDone);
  }

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
