// txnscope live tail: for a partition of a watched cluster (server
// --bootstrap), the websocket sends a new generation each time the
// partition changes and a "live" message after each poll
// (docs/protocol.md, "Live sources"). timeline.js draws the generations;
// this script, fed every message through its "txnscope:message" event,
// follows the tail and shows the watcher's state (timeline-lanes.js keeps
// the lanes in step with the new producers): connected / reconnecting /
// error, any difference between the engine and the broker (loudly), the
// broker's LSO and HWM, and the open transactions with their transactional
// ids and KIP-664 verdicts in the diagnosis panel. On a source that is not
// live it does nothing.
"use strict";
(function () {
  const root = document.querySelector('[data-testid="timeline"]');
  if (!root) return;
  const $ = (sel, el) => (el || document).querySelector(sel);
  let isLive = false, follow = true, fitted = null, panel = null, diag = null;

  const css = `
.live { border: 1px solid var(--border-strong); border-radius: 6px; padding: 6px 12px; margin: 6px 0; background: var(--panel); font-size: .9em; }
.live-head { display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: center; }
.live-status { font-weight: 700; }
.live-status::before { content: "●"; margin-right: .35em; }
.live-status[data-state="connected"] { color: var(--ok); }
.live-status[data-state="reconnecting"] { color: var(--warn); }
.live-status[data-state="error"] { color: var(--bad); }
.live-nums { display: flex; flex-wrap: wrap; gap: 2px 14px; margin: 4px 0 0; }
.live-nums dt { color: var(--muted); }
.live-nums dd { margin: 0 0 0 -10px; font-weight: 600; font-variant-numeric: tabular-nums; }
.live-mismatch { margin: 6px 0; padding: 8px 12px; border: 3px solid var(--pin); border-radius: 6px; background: var(--bad-bg); color: var(--fg); }
.live-mismatch strong { font-size: 1.1em; letter-spacing: .02em; }
.live-mismatch ul { margin: 4px 0 0; padding-left: 1.3em; }
.live-notes { color: var(--muted); margin: 4px 0 0; padding-left: 1.3em; font-size: .9em; }
.live-diag { border-bottom: 1px solid var(--border); margin-bottom: 8px; padding-bottom: 6px; }
.live-diag table { border-collapse: collapse; font-size: .9em; }
.live-diag th, .live-diag td { text-align: left; vertical-align: top; padding: 3px 8px; border-bottom: 1px solid var(--line); }
.live-diag tr.hanging td { background: var(--bad-bg); }
.live-diag .txid { font-family: ui-monospace, monospace; font-weight: 700; }
.live-diag .verdict { margin-left: .5em; }
`;

  document.addEventListener("txnscope:message", (ev) => {
    const m = ev.detail;
    if (m.type === "meta") onMeta(m);
    else if (m.type === "live") onLive(m);
  });

  // --- lanes ----------------------------------------------------------------
  // A live partition gains producers, and its window may drop old ones:
  // timeline-lanes.js lays the rows of each new generation out from its
  // meta message, rebuilding them only when the set of rows changes.
  // pid is an object's exact producer id: the string twin past 2^53
  // (docs/cli.md, "JSON output").
  function pid(o) { return o.producer_id_str || String(o.producer_id); }
  const { count, plural, duration } = window.txnscopeFormat;

  function onMeta(m) {
    // timeline.js moves the markers and writes the LSO's label; the HWM's
    // and the log start's were rendered for the log at page load.
    setText('[data-testid="hwm"] span', "HWM " + m.high_watermark);
    setText('[data-testid="log-start"] span', "log start " + m.log_start_offset);
    if (!isLive) return;
    setText('[data-testid="summary-lso"]', m.last_stable_offset);
    setText('[data-testid="summary-hwm"]', m.high_watermark);
    setText('[data-testid="summary-log-start"]', m.log_start_offset);
    // The rest of the header is the window's too: the page rendered the
    // log of its first poll, and a header of 6 batches beside a live line
    // of 14 contradicted itself.
    setText('[data-testid="summary-log-end"]', m.log_end_offset);
    if (m.totals) {
      setText('[data-testid="summary-batches"]', count(m.totals.batches));
      setText('[data-testid="summary-transactions"]', count(m.totals.transactions) + " (" + count(m.totals.open_transactions) + " open)");
      setText('[data-testid="summary-gaps"]', count(m.totals.gaps));
    }
    if (m.segments) setText('[data-testid="summary-segments"]', count(m.segments.length));
    // Follow the tail: after timeline.js has taken the new domain, show
    // all of it, unless the reader has moved the view since the last fit.
    setTimeout(fitTail, 0);
  }
  function fitTail() {
    const t = window.txnscope;
    if (!t) return;
    const v = t.state().view;
    if (fitted && (Math.abs(v.from - fitted.from) > 1e-6 || Math.abs(v.to - fitted.to) > 1e-6)) {
      follow = false; // the reader zoomed or panned: leave the view alone
      const cb = $('[data-testid="live-follow"]');
      if (cb) cb.checked = false;
    }
    if (!follow) return;
    $('[data-testid="zoom-reset"]').click();
    fitted = t.state().view;
  }
  function setText(sel, v) { const e = $(sel); if (e) e.textContent = String(v); }

  // --- the live panel ------------------------------------------------------------
  function build() {
    const st = document.createElement("style");
    st.textContent = css;
    document.head.appendChild(st);
    panel = document.createElement("section");
    panel.className = "live"; panel.dataset.testid = "live";
    panel.innerHTML =
      '<div class="live-mismatch" data-testid="live-mismatch" role="alert" hidden>' +
      "<strong>⚠ THE ENGINE AND THE BROKER DISAGREE</strong> — a broker bug, a client bug, or one in txnscope:<ul></ul></div>" +
      '<div class="live-head"><span class="live-status" data-testid="live-status" aria-live="polite"></span>' +
      '<span class="live-seq" data-testid="live-seq"></span>' +
      '<label><input type="checkbox" data-testid="live-follow" checked> follow the tail</label></div>' +
      '<dl class="live-nums">' +
      '<dt title="ListOffsets(read_committed, latest)">LSO (broker, ListOffsets)</dt><dd data-testid="live-lso"></dd>' +
      '<dt title="LastStableOffset of the latest read_committed Fetch">LSO (Fetch)</dt><dd data-testid="live-fetch-lso"></dd>' +
      "<dt>LSO (engine)</dt><dd data-testid=\"live-engine-lso\"></dd>" +
      '<dt title="ListOffsets(read_uncommitted, latest)">HWM</dt><dd data-testid="live-hwm"></dd>' +
      "<dt>window</dt><dd data-testid=\"live-window\"></dd>" +
      "<dt>batches</dt><dd data-testid=\"live-batches\"></dd>" +
      '<dt title="offsets a read_committed consumer received from the window start">delivered</dt><dd data-testid="live-delivered"></dd>' +
      "</dl><ul class=\"live-notes\" data-testid=\"live-notes\"></ul>";
    const at = $(".summary") || root.previousElementSibling || root;
    at.parentNode.insertBefore(panel, at.nextSibling);
    $('[data-testid="live-follow"]', panel).onchange = (e) => {
      follow = e.target.checked; fitted = null;
      if (follow) fitTail();
    };
  }

  function onLive(m) {
    if (!panel) build();
    if (!isLive) {
      isLive = true;
      root.dataset.live = ""; // timeline.js stops drawing the page-load pin
      setTimeout(fitTail, 0);
    }
    panel.dataset.state = m.state;
    const s = $('[data-testid="live-status"]', panel);
    s.dataset.state = m.state;
    s.textContent = m.state === "connected" ? "live · connected to " + m.bootstrap
      : m.state === "reconnecting" ? "live · reconnecting to " + m.bootstrap + " in " + duration(m.retry_in_ms) + ": " + m.error
      : "live · stopped: " + m.error;
    $('[data-testid="live-seq"]', panel).textContent = "poll " + m.seq + (m.time && !isNaN(new Date(m.time)) ? " at " + new Date(m.time).toISOString().slice(0, 19).replace("T", " ") + " UTC" : "") + (m.unsettled ? " (log moved during the poll)" : "");
    setText('[data-testid="live-lso"]', m.listed_lso);
    setText('[data-testid="live-fetch-lso"]', m.fetch_lso);
    setText('[data-testid="live-engine-lso"]', m.engine_lso);
    setText('[data-testid="live-hwm"]', m.listed_hwm);
    setText('[data-testid="live-window"]', m.window_start + "–" + m.window_end + (m.dropped_batches ? " (" + plural(m.dropped_batches, "batch", "batches") + " dropped)" : ""));
    const nb = $('[data-testid="live-batches"]', panel);
    nb.textContent = m.batches + (m.new_batches ? " (+" + m.new_batches + ")" : "");
    nb.dataset.count = m.batches;
    setText('[data-testid="live-delivered"]', m.delivered + " to offset " + m.committed_position);
    const mm = $('[data-testid="live-mismatch"]', panel), ul = mm.querySelector("ul");
    ul.textContent = "";
    for (const x of m.mismatches) { const li = document.createElement("li"); li.textContent = x; ul.appendChild(li); }
    mm.hidden = m.mismatches.length === 0;
    mm.dataset.count = m.mismatches.length;
    const notes = $('[data-testid="live-notes"]', panel);
    notes.textContent = "";
    for (const n of (m.notes || []).slice(-5)) { const li = document.createElement("li"); li.textContent = n; notes.appendChild(li); }
    renderDiagnosis(m);
  }

  // --- diagnosis with coordinator state ----------------------------------------
  // The panel the server rendered describes the log at page load; for a
  // live partition its place is taken by the watcher's view: each open
  // transaction joined with DescribeProducers, ListTransactions and
  // DescribeTransactions, KIP-664's hanging verdict, and the abort command
  // for the real bootstrap address. The copy buttons keep diagnosis.js's
  // markup, so its delegated handler serves them.
  function esc(s) { return String(s === null || s === undefined ? "" : s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }
  // The consumer groups the watcher read (ListGroups, OffsetFetch) while
  // the LSO lags, placed against it in the update's diagnosis: the markup
  // and words of the server's panel (web/pages.templ affectedGroups), those
  // held up first.
  function groupsTable(m) {
    const gs = m.diagnosis && m.diagnosis.consumer_groups;
    if (!gs) return "";
    const rows = gs.filter((g) => g.behind_lso).concat(gs.filter((g) => !g.behind_lso));
    // The kind in words (present.GroupKindWords, through the contract).
    const C = window.txnscopeContract, kind = (k) => {
      const i = C ? C.GROUP_KINDS.indexOf(k) : -1;
      return i >= 0 ? C.GROUP_KIND_WORDS[i] : "group of an unknown kind";
    };
    let h = '<table class="consumer-groups" data-testid="consumer-groups"><caption>Consumer groups (' + rows.length + "): who is affected</caption><thead><tr>" +
      '<th scope="col">group</th><th scope="col">kind</th><th scope="col">committed offset</th><th scope="col">against the LSO ' + esc(m.diagnosis.last_stable_offset) + "</th></tr></thead><tbody>";
    for (const g of rows) {
      const what = g.blocked ? "blocked: waiting at the LSO"
        : g.behind_lso && g.records_to_lso >= 0 ? g.records_to_lso + (g.records_to_lso === 1 ? " record" : " records") + " to receive, then waits at the LSO"
        : g.behind_lso ? plural(g.offsets_to_lso, "offset", "offsets") + " below the LSO" : "past the LSO (read_uncommitted): not held";
      h += '<tr data-testid="group-' + esc(g.group) + '" data-group="' + esc(g.group) + '" data-committed="' + esc(g.committed_offset) + '" data-affected="' + g.behind_lso +
        '" data-blocked="' + g.blocked + '" class="' + (g.blocked ? "blocked " : "") + (g.behind_lso ? "affected" : "") + '"><td>' + esc(g.group) + "</td><td>" + esc(kind(g.group_kind)) + '</td><td class="num">' +
        esc(g.committed_offset) + "</td><td>" + esc(what) + "</td></tr>";
    }
    if (!rows.length) h += '<tr><td colspan="4">no group committed an offset on this partition</td></tr>';
    return h + "</tbody></table>";
  }
  function renderDiagnosis(m) {
    const host = $('[data-testid="diagnosis"]');
    if (!host) return;
    if (!diag) {
      Array.from(host.children).forEach((c) => { if (c.tagName !== "H2") c.style.display = "none"; });
      const v = $('[data-testid="diagnosis-verdict"]', host);
      if (v) v.remove();
      diag = document.createElement("div");
      diag.className = "live-diag"; diag.dataset.testid = "live-diagnosis";
      host.appendChild(diag);
    }
    // late: the log alone says so (DescribeProducers did not answer), and
    // no coordinator confirmed it hangs (live.OpenTxn.Late).
    const open = m.open_transactions, hanging = open.filter((o) => o.hanging), late = open.filter((o) => o.late && !o.hanging), pin = open.find((o) => o.pins_lso);
    const stuck = m.engine_lso < m.high_watermark;
    host.dataset.state = hanging.length ? "hanging" : late.length ? "late" : stuck ? "stuck" : "clear";
    host.classList.toggle("stuck", stuck); host.classList.toggle("clear", !stuck);
    let h = "<p>";
    h += hanging.length ? '<span class="verdict stuck" data-testid="live-verdict">HANGING</span> '
      : late.length ? '<span class="verdict stuck" data-testid="live-verdict">LATE, hanging not confirmed</span> '
      : stuck ? '<span class="verdict stuck" data-testid="live-verdict">LSO held</span> ' : '<span class="verdict clear" data-testid="live-verdict">clear</span> ';
    h += "LSO " + esc(m.engine_lso) + ", high watermark " + esc(m.high_watermark) + " (" + esc(plural(m.high_watermark - m.engine_lso, "offset", "offsets")) + " held back)";
    if (pin) h += ', pinned by producer ' + esc(pid(pin)) + (pin.transactional_id ? ' (<span class="txid">' + esc(pin.transactional_id) + "</span>)" : "") + " from offset " + esc(pin.first_offset);
    h += ".</p>";
    if (open.length) {
      h += '<table data-testid="live-open-transactions"><caption>Open transactions, with the coordinator\'s state</caption><thead><tr>' +
        "<th>producer</th><th>transactional id</th><th>offsets</th><th>state</th><th>why</th><th>abort command</th></tr></thead><tbody>";
      for (const o of open) {
        h += '<tr data-testid="live-open-' + esc(pid(o)) + "-" + esc(o.first_offset) + '" data-hanging="' + o.hanging + '" data-transactional-id="' + esc(o.transactional_id) + '" class="' + (o.hanging ? "hanging" : "") + '">' +
          "<td>" + esc(pid(o)) + " <small>epoch " + esc(o.producer_epoch) + "</small>" + (o.pins_lso ? ' <span class="pins-tag">pins LSO</span>' : "") + "</td>" +
          '<td class="txid">' + (o.transactional_id ? esc(o.transactional_id) : "<small>unknown to the coordinators</small>") + (o.coordinator_state ? " <small>" + esc(o.coordinator_state) + "</small>" : "") + "</td>" +
          "<td>" + esc(o.first_offset) + (o.last_offset > o.first_offset ? "–" + esc(o.last_offset) : "") + "</td>" +
          '<td><span class="state ' + (o.hanging ? "hanging" : o.late ? "late" : "open") + '">' + (o.hanging ? "HANGING" : o.late ? "late, hanging not confirmed" : "open") + "</span></td>" +
          '<td class="why">' + esc(o.reason) + "</td>" +
          '<td class="cmdcell"><div class="cmd"><code>' + esc(o.abort_command) + '</code><button type="button" class="copy" data-copy="' + esc(o.abort_command) + '" aria-label="copy the command">copy</button><span class="copied" role="status" aria-live="polite"></span></div></td></tr>';
      }
      h += "</tbody></table>";
    }
    h += groupsTable(m);
    // Only when it changed: a copy button's "copied" must survive polls.
    if (diag.dataset.html !== h) { diag.innerHTML = h; diag.dataset.html = h; }
    const sum = $('[data-testid="pinned"]');
    if (sum) sum.textContent = pin ? "LSO " + m.engine_lso + " is pinned by the open transaction of producer " + pid(pin) +
      (pin.transactional_id ? " (" + pin.transactional_id + ")" : "") + " from offset " + pin.first_offset + "; read_committed consumers stop there."
      : m.engine_lso < m.high_watermark ? "LSO trails the high watermark." : "LSO equals the high watermark.";
  }
})();
