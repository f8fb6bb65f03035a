// txnscope timeline, lanes: which row of the plot each lane of the stream
// is drawn in. A lane is a producer (lane 0: the batches without a
// producer id); present.Lanes is the rule, and each lane of the meta
// message carries its default row from it (`row`; -1: empty, never drawn):
// the non-transactional row first (lane 0 and every idempotent producer,
// which since Kafka 3.0 is every producer that is not transactional), a row
// per transactional producer up to LANE_CAP, and one "N more producers"
// row. The rows are rebuilt from each meta message (a live source gains
// producers), and from two controls: the producers filter gives the
// producers whose id or name contains its text a row each (up to LANE_CAP),
// and "each non-transactional" unfolds the idempotent producers.
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { root, $, S } = tl;
  const { LANE_CAP } = window.txnscopeContract;
  const filterEl = $('[data-testid="lane-filter"]'), expandEl = $('[data-testid="lane-expand"]');
  const q = new URLSearchParams(location.search);
  const lanesState = { filter: q.get("producers") || "", expanded: q.get("expand") === "1" };
  if (filterEl) filterEl.value = lanesState.filter;
  if (expandEl) expandEl.checked = lanesState.expanded;

  // thousands and plural write counts as package web does (the rows the
  // server rendered must read the same after a rebuild).
  const { count: thousands, plural } = window.txnscopeFormat;
  // pidText is a lane's producer id as text: ids exceed 2^53 (kfake's, and
  // Kafka's after many InitProducerId), so not from the JSON number.
  const pidText = (l) => l.producer_id_str || (l.label || "").split(" ")[1] || String(l.producer_id);

  // rowsOf lays the meta's lanes out: by the server's default rows, or by
  // the filter and the unfolding when they are set.
  function rowsOf(lanes) {
    const live = lanes.filter((l) => l.batches > 0);
    const folded = live.filter((l) => l.folded), txn = live.filter((l) => !l.folded);
    // The server's rows (present.LaneRows) by default; the same rule
    // below otherwise (a meta without rows lays out as the server would).
    if (!lanesState.filter && !lanesState.expanded && lanes.some((l) => l.row !== undefined)) {
      const byRow = [];
      for (const l of lanes) if (l.row >= 0) (byRow[l.row] = byRow[l.row] || []).push(l);
      // Past LANE_CAP producer rows comes the "more" row, even of one.
      let own = 0;
      return byRow.filter(Boolean).map((ls) => ls[0].folded ? foldedRow(ls) : own++ >= LANE_CAP ? moreRow(ls, false) : ownRow(ls[0]));
    }
    const f = lanesState.filter.toLowerCase();
    const match = (l) => !f || [l.display, l.label, pidText(l)].some((s) => s && s.toLowerCase().includes(f));
    // Transactional producers first: an unfolded crowd of idempotent ones
    // must not push them out of the cap.
    const own = txn.filter(match).concat(f || lanesState.expanded ? folded.filter(match) : []);
    const shown = new Set(own.slice(0, LANE_CAP));
    const rows = [];
    const restFolded = folded.filter((l) => !shown.has(l)), restTxn = txn.filter((l) => !shown.has(l));
    if (restFolded.length) rows.push(foldedRow(restFolded));
    for (const l of live) if (shown.has(l)) rows.push(ownRow(l));
    if (restTxn.length) rows.push(moreRow(restTxn, !!f));
    return rows;
  }
  const sum = (ls) => ls.reduce((n, l) => n + l.batches, 0);
  function foldedRow(ls) {
    const n = ls.length, none = ls.some((l) => l.lane === 0);
    const what = !none ? plural(n, "idempotent producer", "idempotent producers") : n === 1 ? "no producer id" : plural(n - 1, "idempotent producer", "idempotent producers") + " + no producer id";
    return { lanes: ls, testid: "lane-none", label: "non-transactional", epochs: what, note: plural(sum(ls), "batch", "batches"),
      title: "non-transactional: " + what + " (fold or expand them with the producers box)" };
  }
  function moreRow(ls, filtered) {
    return { lanes: ls, testid: "lane-more", label: plural(ls.length, "more producer", "more producers"),
      epochs: filtered ? "transactional, not matching the filter" : "transactional, past the first " + LANE_CAP, note: plural(sum(ls), "batch", "batches"),
      title: "type a producer id or name in the producers box to give it a row" };
  }
  function ownRow(l) {
    if (l.lane === 0) return { lanes: [l], testid: "lane-nopid", label: "no producer id", epochs: "non-transactional", note: plural(l.batches, "batch", "batches"), title: "no producer id" };
    return { lanes: [l], testid: "lane-" + pidText(l), label: l.display || "producer " + pidText(l), epochs: l.epochs,
      note: (l.transactional ? "txn" : "idempotent") + ", " + plural(l.batches, "batch", "batches") + ", " + plural(l.transactions, "txn", "txns"),
      title: "producer " + pidText(l) };
  }

  // layout rebuilds the rows for meta m (or the last one) and the lane to
  // row map, and redraws.
  let rowMap = null;
  function layout(m) {
    m = m || S.meta;
    if (!m) return;
    const rows = rowsOf(m.lanes || []);
    // Unfolding is offered when there are idempotent producers to unfold.
    // (style, not the hidden attribute: .controls label sets display.)
    if (expandEl && expandEl.parentElement) expandEl.parentElement.style.display = (m.lanes || []).some((l) => l.folded && l.lane !== 0 && l.batches > 0) ? "" : "none";
    rowMap = new Int32Array(Math.max((m.lanes || []).length, 1));
    rows.forEach((r, i) => { for (const l of r.lanes) rowMap[l.lane] = i; });
    const box = $(".labels", root);
    if (box) {
      // The rows are rebuilt only when the set of rows changes (a live
      // source's new generation usually keeps its producers and only
      // counts more batches): otherwise their words are updated in place.
      const els = Array.from(box.querySelectorAll(".lane"));
      const same = els.length === rows.length && rows.every((r, i) => els[i].dataset.testid === r.testid && els[i].dataset.lane === String(r.lanes[0].lane));
      if (!same) els.forEach((e) => e.remove());
      rows.forEach((r, i) => {
        let d = same ? els[i] : null;
        if (!d) {
          d = document.createElement("div");
          d.className = "lane"; d.dataset.testid = r.testid; d.dataset.lane = r.lanes[0].lane;
          const s = document.createElement("strong"), ep = document.createElement("span"), note = document.createElement("span");
          ep.className = "epochs"; note.className = "note";
          d.append(s, ep, note);
          box.appendChild(d);
        }
        const title = r.title + " · " + r.epochs + " · " + r.note;
        if (d.title !== title) d.title = title;
        const [s, ep, note] = d.children;
        for (const [el, v] of [[s, r.label], [ep, r.epochs], [note, r.note]]) if (el && el.textContent !== v) el.textContent = v;
      });
    }
    S.laneEls = Array.from(root.querySelectorAll(".lane"));
    S.pyrDirty = true;
    tl.resize();
  }
  // rowOf is the row lane ln is drawn in (not for the gap lane).
  function rowOf(ln) {
    if (rowMap && ln < rowMap.length) return rowMap[ln];
    return Math.max(Math.min(ln, S.laneEls.length - 1), 0);
  }

  function changed() {
    lanesState.filter = filterEl ? filterEl.value.trim() : "";
    lanesState.expanded = !!(expandEl && expandEl.checked);
    const u = new URL(location.href);
    if (lanesState.filter) u.searchParams.set("producers", lanesState.filter); else u.searchParams.delete("producers");
    if (lanesState.expanded) u.searchParams.set("expand", "1"); else u.searchParams.delete("expand");
    try { history.replaceState(null, "", u); } catch (e) { /* file:// may refuse */ }
    layout();
  }
  if (filterEl) filterEl.addEventListener("input", changed);
  if (expandEl) expandEl.addEventListener("change", changed);

  Object.assign(tl, { layoutLanes: layout, rowOf });
})();
