// txnscope timeline, detail panel: the decision under the pointer, its
// tooltip with the server's reason, and the panel a click opens with the
// batch's header, location, transaction, .txnindex entry and records (from
// the API, or from the export's recorded batches).
"use strict";
(function () {
  const tl = window.txnscopeTimeline;
  if (!tl) return;
  const { canvas, tooltip, detail, posEl, apiPath, embedded, state, S } = tl;
  const C = window.txnscopeContract;
  const { VERDICTS, CAUSES, VERDICT_WORDS, CAUSE_WORDS, F_COMMIT, F_ABORT, LANE_GAP } = C;
  // The words a reader sees for a verdict or cause name of the API (the
  // snake_case names stay in data-* attributes and the JSON).
  const verdictWords = (n) => { const i = VERDICTS.indexOf(n); return i < 0 ? n : VERDICT_WORDS[i]; };
  const causeWords = (n) => { const i = CAUSES.indexOf(n); return i < 0 ? n : CAUSE_WORDS[i]; };
  const offsetWords = (o) => o < 0 ? "log start" : o;

  // pointed returns the decision under the pointer of event e, or -1.
  function pointed(e) {
    const D = S.D;
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    if (x < 0 || y < 0 || x > r.width || y > r.height || !D) return -1;
    return tl.decisionAt(tl.offAt(x), Math.floor(y / tl.laneH()));
  }
  // Reasons are the server's sentences (txnindex Decision.Reason); they are
  // fetched on hover and cached per options.
  const reasons = new Map();
  function reasonOf(off) {
    // A lesson step drawn by asOf (timeline.js) has its own reasons.
    if (tl.asOfReason) return Promise.resolve(tl.asOfReason(off));
    const key = tl.optsQuery() + "@" + off;
    if (embedded && !reasons.has(key)) {
      const rs = embedded.reasons && embedded.reasons[state.isolation];
      if (!rs) return Promise.resolve(embedded.note || "the reasons are not in this export");
      const hits = rs.filter((d) => d[0] <= off && off <= d[1]);
      const d = hits.find((d) => d[2]) || hits[0];
      reasons.set(key, Promise.resolve(d ? d[3] : ""));
    }
    if (!reasons.has(key)) {
      reasons.set(key, fetch(apiPath + "/decisions?from=" + off + "&to=" + off + "&" + tl.optsQuery())
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
    const D = S.D, meta = S.meta;
    const v = VERDICTS[D.verdict[i]], f = D.flags[i];
    let what = VERDICT_WORDS[D.verdict[i]] || v;
    if (f & F_COMMIT) what = "control · COMMIT marker"; else if (f & F_ABORT) what = "control · ABORT marker";
    const lane = D.lane[i] === LANE_GAP ? "gap" : meta.lanes[D.lane[i]] ? meta.lanes[D.lane[i]].label : "";
    const time = D.ts[i] >= 0 ? "max timestamp " + new Date(D.ts[i]).toISOString().replace("T", " ").replace("Z", " UTC") : "";
    return { what, lane, time, range: D.from[i] === D.to[i] ? "offset " + D.from[i] : "offsets " + D.from[i] + "–" + D.to[i] };
  }
  function hover(e) {
    const D = S.D;
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
    tooltip.querySelector(".tt-lane").textContent = d.lane + " · " + (CAUSE_WORDS[D.cause[i]] || "");
    tooltip.querySelector(".tt-time").textContent = d.time;
    const off = D.from[i];
    reasonOf(off).then((s) => { if (tipFor === i) tooltip.querySelector(".reason").textContent = window.txnscopeFormat.reason(s); });
  }
  function hideTip() { tooltip.hidden = true; tipFor = -1; }
  function closeDetail() { detail.hidden = true; state.selected = null; tl.updateURL(); tl.schedule(); }
  function row(k, v) { return "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>"; }
  function esc(s) { return String(s === null || s === undefined ? "—" : s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }
  function loadBatch(off) {
    if (!embedded) return fetch(apiPath + "/batches/" + off + "?" + tl.optsQuery()).then((r) => r.ok ? r.json() : Promise.reject(r.status));
    const bs = embedded.batches && embedded.batches[state.isolation];
    if (!bs) return Promise.reject(embedded.note || "batch details are not in this export");
    const b = bs.find((b) => b.base_offset <= off && off <= b.last_offset);
    return b ? Promise.resolve(b) : Promise.reject(embedded.note || "not in this export");
  }
  // batchFor is the batch the panel shows: the API's (or the export's),
  // or, while a lesson step is drawn (timeline.js asOf), that batch as of
  // the step: the consumer's decision and cause, the transaction and the
  // .txnindex entry of that moment, and a remedy's marker, which only the
  // lesson has.
  function batchFor(off) {
    const asOf = tl.asOfBatch;
    if (!asOf) return loadBatch(off);
    return loadBatch(off).catch(() => null).then((b) => asOf(off, b) || Promise.reject("not written yet at this step"));
  }
  function openDetail(off) {
    batchFor(off).then((b) => {
      const d = b.decision || {}, t = b.transaction, a = b.aborted_entry;
      let h = '<button type="button" class="close" data-testid="detail-close" aria-label="close">✕</button>';
      h += "<h2>batch " + b.base_offset + (b.last_offset !== b.base_offset ? "–" + b.last_offset : "") +
        (b.as_of_step !== undefined ? ' <small data-testid="detail-as-of">as of step ' + b.as_of_step + "</small>" : "") + "</h2>";
      h += '<div class="reason" data-testid="detail-reason" data-decision="' + esc(d.decision) + '">' + esc(window.txnscopeFormat.reason(d.reason) || verdictWords(d.decision)) + "</div>";
      h += '<div class="cols"><table><caption>header</caption>' + row("producer id", tl.pid(b)) + row("epoch", b.producer_epoch) +
        row("base sequence", b.base_sequence) + row("records", window.txnscopeFormat.count(b.records_count)) + row("size", window.txnscopeFormat.plural(b.size, "byte", "bytes")) + row("position", b.position) +
        row("magic", b.magic) + row("attributes", "0x" + b.attributes.toString(16)) + row("transactional", b.transactional) +
        row("control", b.control) + row("compression", b.compression) + row("timestamp type", b.timestamp_type) +
        row("max timestamp", b.max_timestamp >= 0 ? new Date(b.max_timestamp).toISOString() : b.max_timestamp) + "</table>";
      h += "<table><caption>location</caption>" + row("segment", b.segment) + row(".txnindex", b.txnindex) +
        row("fetch offset", offsetWords(d.fetch_offset)) + row("decision", verdictWords(d.decision)) + row("cause", causeWords(d.cause)) + row("read uncommitted", verdictWords(d.read_uncommitted)) + "</table>";
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
          // A key or value the server cut (key_size, value_size: its whole length) says so.
          const show = (t, raw, size) => (t !== undefined && t !== null ? t : raw === null ? "null" : raw.length > 24 ? "base64:" + raw.slice(0, 24) + "…" : "base64:" + raw) +
            (size !== undefined ? " … (cut; " + window.txnscopeFormat.plural(size, "byte", "bytes") + " in all)" : "");
          const val = r.control ? r.control + " marker" + (r.coordinator_epoch !== undefined ? " (coordinator epoch " + r.coordinator_epoch + ")" : "") : show(r.value_text, r.value, r.value_size);
          h += "<tr><td>" + r.offset + "</td><td>" + (r.timestamp >= 0 ? esc(new Date(r.timestamp).toISOString()) : r.timestamp) + "</td><td>" +
            esc(r.control ? "—" : show(r.key_text, r.key, r.key_size)) + "</td><td>" + esc(val) + "</td><td>" + esc((r.headers || []).map((x) => x.key).join(", ")) + "</td></tr>";
        }
        h += "</table>";
      } else h += "<p>" + esc(b.records_note || "no records") + "</p>";
      // A lesson step plays its own consumer: no other position there.
      if (!embedded && b.as_of_step === undefined) h += '<button type="button" data-testid="consume-from-here">consume from here (position ' + b.base_offset + ")</button>";
      detail.innerHTML = h; detail.hidden = false; detail.dataset.offset = b.base_offset;
      detail.dataset.asOfStep = b.as_of_step === undefined ? "" : b.as_of_step;
      detail.querySelector(".close").onclick = closeDetail;
      const cfh = detail.querySelector('[data-testid="consume-from-here"]');
      if (cfh) cfh.onclick = () => { state.position = b.base_offset; posEl.value = b.base_offset; tl.restart(); };
    }).catch((err) => { detail.hidden = false; detail.textContent = (embedded ? "offset " + off + ": " : "no batch at offset " + off + " (") + err + (embedded ? "" : ")"); });
  }

  Object.assign(tl, { closeDetail, hideTip, hover, openDetail, pointed });
})();
