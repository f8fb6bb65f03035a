// txnscope timeline, segments: the segment strip of a partition directory
// (web/segments.go), above the timeline of the whole partition or of one
// segment's window.
//
// A partition loaded whole: a click on a cell zooms the timeline to that
// segment in place (no new page, no second stream of the log; the URL's
// from and to follow as for any other view change), at its first offset
// with the view as wide as it was, as a segment page opens one (below).
//
// A partition too large to load whole: the page of one segment's window is
// a stretch of one continuous timeline. The view's domain is the segment
// (timeline-state.js setDomain); a pan past either end of it
// (timeline-axes.js setView, with the view already at that end) opens the
// neighbouring segment's page, the view as wide as it was and at the end
// it was entered from; the previous and next links and PgUp/PgDn do the
// same. The offset form, and centring on an offset (the LSO key), open
// the segment that holds the offset, the form's with its batch selected.
// A click on a cell of the strip opens that segment at its start, the view
// as wide as it was. "As wide" is as many offsets, or on the time axis as
// long a time (?time_span=, applied once the new page's stream has the
// segment's times): segments written at different rates hold different
// numbers of offsets per second. The pages are the server's (GET
// …?segment=BASE), each streaming its own window over the websocket: a
// page never holds more than one segment.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { $, root, view, state } = tl;
  const strip = $('[data-testid="segment-strip"]');
  // (a windowed strip without a current cell is no page this script knows)
  if (!strip || (!tl.segment && strip.dataset.windowed === "true")) return;
  const cellEls = Array.from(strip.querySelectorAll('[data-testid="segment-cell"]'));
  const seg = tl.segment, cells = seg ? seg.cells : cellEls.map((c) => ({ base: +c.dataset.base, next: +c.dataset.next }));
  if (cells.length === 0) return;
  let leaving = false;

  // widthIn is span, no wider than setView lets segment k's view be on its
  // own page (its offsets and the domain's margins, timeline-state.js).
  function widthIn(k, span) {
    const c = cells[k], n = Math.max(c.next - c.base, 1), pad = Math.max(n * 0.03, 0.6);
    return Math.min(span, (n + 2 * pad) * 1.02 + 4);
  }
  // timeSpan is the time (ms) the view spans on the time axis, 0 on the
  // offset axis.
  function timeSpan() {
    if (state.axis !== "time") return 0;
    const [a, b] = tl.viewTimes();
    return b - a;
  }
  // zoomHere moves the view of this page to segment k's start: 5% of the
  // view before its first offset, as a step forward does, so that the
  // boundary shows; as many offsets wide as before, or on the time axis
  // as long a time, no wider than segment k's page allows (widthIn).
  function zoomHere(k) {
    const c = cells[k], wmax = widthIn(k, Infinity), span = timeSpan();
    let from, to;
    if (span > 0) {
      const tb = tl.tOf(c.base);
      from = tl.offOfT(tb - span * 0.05); to = tl.offOfT(tb + span * 0.95);
    } else {
      const w = view.to - view.from;
      from = c.base - w * 0.05; to = from + w;
    }
    if (to - from > wmax) { from = c.base - wmax * 0.05; to = from + wmax; }
    tl.setView(from, to);
  }
  // The cells' own links (?from=&to=, or ?segment= on a segment page) are
  // what a modified click (a new tab or window) or a page without script
  // opens.
  const modified = (e) => e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey;

  if (!seg) {
    // The whole partition is this page's log: a cell zooms to its
    // segment, which a reload of ?from=&to= would stream again whole.
    cellEls.forEach((el, k) => {
      el.addEventListener("click", (e) => {
        if (modified(e)) return;
        // A page drawn from a lazily loaded partition's tail, before its
        // whole log lands (the stream's "loaded", docs/protocol.md), holds
        // no segment before the tail's: the link's page is asked for.
        if (cells[k].next <= tl.part.logStart) return;
        e.preventDefault();
        zoomHere(k);
      });
    });
    return;
  }

  // open shows segment k with the view [from, to) and the selection sel
  // (null: none); ms, when given, is the time the view of the time axis
  // spans there, from the segment's start, or with atEnd up to its end
  // (the ?time_span= hint below).
  function open(k, from, to, sel, ms, atEnd) {
    if (leaving || k < 0 || k >= cells.length) return false;
    leaving = true;
    const u = tl.pageURL(from, to, sel);
    u.searchParams.set("segment", cells[k].base);
    if (ms > 0) {
      u.searchParams.set("time_span", +ms.toFixed(3));
      if (atEnd) u.searchParams.set("time_anchor", "end");
    }
    root.dataset.leaving = cells[k].base;
    tl.status("opening segment " + window.txnscopeFormat.count(k + 1) + " of " + window.txnscopeFormat.count(cells.length) + "…");
    location.assign(u.toString());
    return true;
  }
  // step opens the segment after (dir 1) or before (dir −1) this one, its
  // near end in view, span offsets wide, or on the time axis as long a
  // time as the view (the neighbour may be written at another rate);
  // false at either end of the log.
  function step(dir, span) {
    const k = seg.index + dir;
    if (k < 0 || k >= cells.length) return false;
    const c = cells[k], w = widthIn(k, span), m = w * 0.05, ms = timeSpan();
    // The selection is of this segment's batches: the next page has none.
    return dir > 0 ? open(k, c.base - m, c.base - m + w, null, ms) : open(k, c.next + m - w, c.next + m, null, ms, true);
  }
  tl.pastEdge = step;

  const stepLink = (el, dir) => {
    if (!el || el.tagName !== "A") return;
    el.addEventListener("click", (e) => {
      if (modified(e)) return; // a new tab or window: the link's own page
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

  // A cell of the strip opens its segment at its first offset as zoomHere
  // places it: the new page gets the view's offsets, and on the time axis
  // the time span (the ?time_span= hint below); until its stream has the
  // segment's times it draws the same number of offsets. The cell of the
  // segment shown moves the view in place.
  function cellOpen(k) {
    if (k === seg.index) { zoomHere(k); return true; }
    const c = cells[k], w = widthIn(k, view.to - view.from), m = w * 0.05;
    return open(k, c.base - m, c.base - m + w, null, timeSpan());
  }
  cellEls.forEach((el, k) => {
    el.addEventListener("click", (e) => {
      if (modified(e)) return;
      if (cellOpen(k)) e.preventDefault();
    });
  });
  // A page opened from the time axis (?time_span=MS, by a cell or a step)
  // shows that time from the segment's start, or with ?time_anchor=end (a
  // step back, entered from the end) up to its end, once its first stream
  // is done: only then are the batches' times, which place offsets on the
  // time axis (timeline-axes.js buildTime), known. A view moved before
  // then is the reader's and is left alone. The parameters are dropped
  // from the URL then (pageURL), so that a reload keeps the view's
  // offsets; the timeline's data-time-span-kept says the hint has been
  // dealt with.
  const hint = new URLSearchParams(location.search), keepSpan = hint.get("time_span"), atEnd = hint.get("time_anchor") === "end";
  if (keepSpan !== null && +keepSpan > 0 && state.axis === "time") {
    const from0 = view.from, to0 = view.to;
    const onDone = (e) => {
      if (!e.detail || e.detail.type !== "done") return;
      document.removeEventListener("txnscope:message", onDone);
      // After the stream's own handler has marked it done.
      setTimeout(() => {
        if (view.from === from0 && view.to === to0) {
          const span = +keepSpan, c = cells[seg.index];
          if (atEnd) { const te = tl.tOf(c.next); tl.setTimeView(te + span * 0.05 - span, te + span * 0.05); } else { const t0 = tl.tOf(c.base); tl.setTimeView(t0 - span * 0.05, t0 + span * 0.95); }
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
