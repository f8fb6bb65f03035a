// txnscope lesson: renders the step list the server computed from the
// engine (web/lesson.go, inlined as <script type="application/json"
// id="txnscope-lesson">) one step at a time. It decides nothing itself.
//
// Each step is one moment: the broker's log after one more append, and the
// consumer after fetching what that log lets it read. The strip and, when
// the page holds the timeline (embed, export), the timeline show the log
// as of the step (window.txnscope.asOf): batches not written yet are left
// out, the ones behind the LSO are pending, the current batch is outlined
// (window.txnscope.highlight).
//
// Controls: forward/back buttons, ← → (space: forward, shift+space: back),
// Home/End, p to play/pause; ?step=N is kept in the URL so a step can be
// shared. Quiz mode (data-mode="quiz") asks for each decision at the step
// where the consumer makes it, shows whether the answer was right and why,
// and ends with a summary (score, the questions missed) and a restart.
"use strict";
(function () {
  // verdictWords is a verdict as the pages say it ("control marker"), not
  // its identifier.
  const verdictWords = window.txnscopeFormat.verdict, reasonWords = window.txnscopeFormat.reason;
  const root = document.querySelector('[data-testid="lesson"]');
  const dataEl = document.getElementById("txnscope-lesson");
  if (!root || !dataEl) return;
  const L = JSON.parse(dataEl.textContent);
  const steps = L.steps, cells = L.cells;
  const $ = (id) => root.querySelector('[data-testid="' + id + '"]');
  const quiz = root.dataset.mode === "quiz";
  const answers = new Map(); // "step:i" -> the learner's choice
  let cur = 0, timer = 0;

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const span = (a, b) => (a === b ? "" + a : a + "–" + b);
  const offsets = (a, b) => (a === b ? "offset " : "offsets ") + span(a, b);
  const list = (el, items, fmt, empty) => {
    el.innerHTML = items.length ? items.map((x) => "<li>" + fmt(x) + "</li>").join("") : '<li class="none">' + esc(empty) + "</li>";
    el.dataset.count = items.length;
  };
  const abortText = (a) => "producer " + a.producer + ", first offset " + a.first;
  // kindClass is the timeline's colour of a decision: markers by their kind.
  const kindClass = (kind, verdict) => (verdict === "control" ? (kind.startsWith("COMMIT") ? "commit" : kind.startsWith("ABORT") ? "abort" : "control") : verdict);

  // The questions of a step: its decisions the consumer makes (a batch
  // below the starting position is never fetched, nothing to ask).
  const questions = (n) => steps[n].consumer.decided.map((d, i) => [d, i]).filter(([d]) => d.ask);
  const key = (n, i) => n + ":" + i;
  const answered = (n, i) => answers.has(key(n, i));
  const revealed = (n) => !quiz || questions(n).every(([, i]) => answered(n, i));
  const totalQuestions = steps.reduce((a, s, n) => a + questions(n).length, 0);

  // A cell's state at step n: not written yet (null), pending, or its
  // verdict; in a quiz, a decision of an unanswered question stays hidden.
  function cellState(c, n) {
    if (c.appended > n) return null;
    if (c.decided < 0 || c.decided > n) return "pending";
    if (quiz && c.decided === n) {
      const ds = steps[n].consumer.decided;
      for (let i = 0; i < ds.length; i++) if (ds[i].batch === c.index && ds[i].ask && !answered(n, i)) return "unknown";
    }
    return c.verdict;
  }

  // The strip: one cell per batch, shown once appended.
  const strip = $("lesson-strip");
  strip.innerHTML = cells.map((c) =>
    '<li data-testid="strip-' + c.appended + '" data-step="' + c.appended + '" data-kind="' + esc(c.kind) + '"' + (c.remedy ? ' class="remedy"' : "") +
    ' title="offsets ' + span(c.from, c.to) + " · " + esc(c.kind) + (c.remedy ? " (the remedy)" : "") + '">' +
    esc(c.kind.endsWith("marker") ? (c.kind.startsWith("COMMIT") ? "✓" : "✕") : span(c.from, c.to)) + "</li>").join("");
  strip.addEventListener("click", (e) => { const li = e.target.closest("li[data-step]"); if (li) go(+li.dataset.step); });

  function render() {
    const s = steps[cur], c = s.consumer, b = s.broker;
    root.dataset.step = cur;
    root.dataset.position = c.position;
    // Steps count from 1, as people do; the step before the first (no
    // batch written yet) is the start.
    $("lesson-count").textContent = cur === 0 ? "start, " + window.txnscopeFormat.plural(steps.length - 1, "step", "steps") : "step " + cur + " of " + (steps.length - 1);
    $("lesson-prev").disabled = cur === 0;
    $("lesson-first").disabled = cur === 0;
    $("lesson-next").disabled = cur === steps.length - 1 || !revealed(cur);
    $("lesson-last").disabled = cur === steps.length - 1 || quiz;
    const qs = questions(cur);
    $("lesson-sentence").textContent = revealed(cur) ? s.sentence : s.lead + " The consumer fetches what the broker now returns: what does it do with " +
      (qs.length === 1 ? "the batch it receives?" : "each of the " + window.txnscopeFormat.count(qs.length) + " batches it receives?");
    root.classList.toggle("remedy-step", !!s.remedy);

    for (const li of strip.children) {
      const st = cellState(cells[+li.dataset.step - 1], cur);
      li.hidden = st === null;
      li.classList.toggle("current", +li.dataset.step === cur);
      li.dataset.decision = st || "";
    }

    $("broker-log-end").textContent = b.log_end;
    $("broker-hwm").textContent = b.hwm;
    const lso = $("broker-lso");
    lso.textContent = b.lso !== b.prev_lso ? b.prev_lso + " → " + b.lso : "" + b.lso;
    lso.classList.toggle("moved", b.lso !== b.prev_lso);
    list($("broker-ongoing"), b.ongoing, (t) => "producer " + t.producer + " from " + t.first + (t.last >= 0 ? " (data to " + t.last + ")" : ""), b.decided ? "" : "none");
    if (b.decided && !b.ongoing.length) $("broker-ongoing").innerHTML = "";
    if (b.decided) {
      const li = document.createElement("li");
      li.className = "decided " + b.decided.state;
      li.setAttribute("data-testid", "broker-decided");
      li.textContent = "producer " + b.decided.producer + " from " + b.decided.first + ": " + b.decided.state + " now";
      $("broker-ongoing").appendChild(li);
    }
    const tb = $("broker-txnindex").tBodies[0];
    tb.innerHTML = b.txnindex.length ? b.txnindex.map((e) =>
      "<tr" + (e.new ? ' class="new" data-testid="txnindex-new"' : "") + "><td>" + esc(e.file) + "</td><td>" + e.producer + "</td><td>" + e.first + "</td><td>" + e.last + "</td><td>" + e.lso + "</td></tr>").join("")
      : b.txnindex_note ? "" : '<tr class="none"><td colspan="5">no entry yet: the broker writes one per aborted transaction, when its ABORT marker lands</td></tr>';
    if (b.txnindex_note) tb.insertAdjacentHTML("beforeend", '<tr class="none" data-testid="txnindex-lost"><td colspan="5">' + esc(b.txnindex_note) + "</td></tr>");
    const rem = $("lesson-remedy");
    rem.hidden = !s.remedy;
    if (s.remedy) rem.querySelector("code").textContent = s.remedy;

    // The consumer: its fetches at this moment, and (in a quiz, up to the
    // question asked) the aborted list, queue and set it works with.
    const active = quiz ? qs.find(([, i]) => !answered(cur, i)) : undefined;
    const upto = active ? active[1] : c.decided.length; // decisions shown revealed
    const fetchText = cur === 0 ? ["The consumer starts at offset " + c.position + "."] :
      c.fetches.map((f) => "Fetch from offset " + f.offset + " returned " + offsets(f.from, f.to) + ".");
    if (cur > 0 && c.waiting && !active) fetchText.push("Fetch from offset " + c.position + " returns nothing: read_committed reads only below the LSO, " + b.lso + ". The consumer waits.");
    else if (cur > 0 && !active) fetchText.push("Position " + c.position + ".");
    $("consumer-fetch").textContent = fetchText.join(" ");
    const fi = active ? active[0].fetch : c.fetches.length - 1;
    const fetch = fi >= 0 ? c.fetches[fi] : null;
    list($("consumer-listed"), fetch ? fetch.listed : [], abortText, fetch ? "empty list" : c.waiting && cur > 0 ? "empty: the response held no batch" : "no fetch response");
    // Before a question: the queue and the set as they were before its
    // batch (a new response starts from its whole list and an empty set:
    // CompletedFetch is per response).
    let queue = c.queue, set = c.set;
    if (active) {
      const prev = upto > 0 ? c.decided[upto - 1] : null;
      const same = prev && prev.fetch === fi;
      queue = same ? prev.queue : fetch ? fetch.listed.slice().sort((x, y) => x.first - y.first) : [];
      set = same ? prev.set : [];
    }
    list($("consumer-queue"), queue, abortText, "empty");
    list($("consumer-set"), set, (a) => "producer " + a.producer + " (since its aborted transaction at " + a.first + ")", "empty");

    const dl = $("consumer-decisions");
    dl.innerHTML = c.decided.map((d, i) => {
      const shown = !quiz || !d.ask || answered(cur, i);
      return '<li data-testid="decided-' + i + '" data-decision="' + (shown ? esc(d.verdict) : "hidden") + '">' + offsets(d.from, d.to) + " <small>(" + esc(d.kind) +
        (d.producer >= 0 ? " of producer " + d.producer : "") + ")</small>: " +
        (shown ? '<strong class="verdict ' + esc(kindClass(d.kind, d.verdict)) + '">' + esc(verdictWords(d.verdict)) + '</strong> <span class="lesson-reason">' + esc(reasonWords(d.reason)) + "</span>" : "<strong>?</strong>") +
        (d.gap && shown ? '<div class="lesson-gap">Before it, ' + esc(d.gap) + ".</div>" : "") + "</li>";
    }).join("") || '<li class="none">' + (cur === 0 ? "" : "nothing decided at this step") + "</li>";
    dl.dataset.count = c.decided.length;

    // The batch this step appended, as the consumer has it at this moment.
    const dec = $("consumer-decision"), why = $("consumer-reason");
    if (cur === 0) {
      dec.textContent = ""; dec.dataset.decision = ""; why.textContent = "";
    } else {
      const st = cellState(cells[cur - 1], cur), k = kindClass(s.batch.kind, st);
      const own = c.decided.filter((d) => d.batch === cur - 1).pop();
      dec.innerHTML = "This step's batch, " + offsets(s.batch.from, s.batch.to) + ': <strong class="verdict ' + esc(k) + '">' + (st === "unknown" ? "?" : esc(verdictWords(st))) + "</strong>";
      dec.dataset.decision = st === "unknown" ? "hidden" : st;
      why.textContent = st === "pending" ? "behind the LSO (" + b.lso + "): the consumer cannot read it yet" : own && st !== "unknown" ? reasonWords(own.reason) : "";
    }
    if (quiz) renderQuiz(active);

    const link = $("lesson-link");
    const u = new URL(location.href);
    u.searchParams.set("step", cur);
    link.href = u.toString();
    try { if (location.protocol !== "file:") history.replaceState(null, "", u); } catch (e) { /* file:// may refuse */ }

    drawTimeline(s);
    // An embedding page learns which step its frame shows (what the panel
    // reads, not the data).
    if (window.parent !== window) {
      const tr = document.querySelector('[data-testid="timeline"]');
      window.parent.postMessage({ type: "txnscope:lesson-step", step: cur, steps: steps.length - 1, count: $("lesson-count").textContent,
        decision: dec.dataset.decision, highlight: tr ? tr.dataset.highlight || "" : "", asOf: tr ? tr.dataset.asOf || "" : "" }, "*");
    }
  }

  // drawTimeline shows the step on the timeline when the page has one:
  // the log as of the step, the step's batch outlined. A remedy's marker is
  // not in the partition the timeline streamed: it is drawn from the
  // lesson (asOf's extra), in its producer's lane, ending its transaction.
  // The embed draws the step from the start; an export's timeline shows
  // the whole partition until the learner steps (or a link names a step).
  let follow = root.dataset.follow === "1" || new URLSearchParams(location.search).has("step");
  let asOfDone = false;
  const cellAtOffset = (off) => cells.find((x) => x.from <= off && off <= x.to);
  // decisionOf is the consumer's decision of (the part holding off of)
  // cell c, made at step c.decided, and the fetch offset that returned it.
  function decisionOf(c, off) {
    if (c.decided < 0) return null;
    const s = steps[c.decided], d = s.consumer.decided.filter((x) => x.batch === c.index && x.from <= off && off <= x.to).pop() ||
      s.consumer.decided.filter((x) => x.batch === c.index).pop();
    return d ? { d, fetch: d.fetch >= 0 ? s.consumer.fetches[d.fetch].offset : -1 } : null;
  }
  // txnAsOf is the transaction of cell c as the broker has it at step n:
  // open until its marker is written, with the data batches written so far.
  function txnAsOf(c, first, n) {
    const mine = (x) => x.producer === c.producer && x.from >= first && x.appended <= n;
    const marker = cells.filter((x) => mine(x) && x.kind.endsWith("marker")).sort((x, y) => x.from - y.from)[0];
    const data = cells.filter((x) => mine(x) && x.kind === "transactional data" && (!marker || x.from < marker.from));
    return { state: marker ? (marker.kind.startsWith("COMMIT") ? "committed" : "aborted") : "open", first_offset: first,
      last_data_offset: data.reduce((m, x) => Math.max(m, x.to), -1), marker_offset: marker ? marker.from : -1,
      batches: data.length, records: data.reduce((m, x) => m + x.records, 0) };
  }
  // batchAsOf is the detail panel's batch as of the current step: the
  // API's batch b (null for a remedy's marker, built from the lesson) with
  // the consumer's decision, the transaction and the .txnindex entry of
  // that moment; null for a batch not written yet.
  function batchAsOf(off, b) {
    const c = cellAtOffset(off), s = steps[cur];
    if (!c || c.appended > cur) return null;
    if (!b) {
      const h = c.header || {};
      b = { base_offset: c.from, last_offset: c.to, producer_id: c.producer, producer_epoch: c.epoch, records_count: c.records, segment: c.segment,
        base_sequence: h.base_sequence, size: h.size, position: h.position, magic: h.magic, attributes: h.attributes || 0, compression: h.compression,
        timestamp_type: h.timestamp_type, max_timestamp: h.max_timestamp, txnindex: h.txnindex, transactional: true, control: true,
        record_list: [{ offset: c.from, timestamp: h.max_timestamp, key: null, value: null, control: "ABORT", coordinator_epoch: h.coordinator_epoch }],
        records_note: "" };
    }
    b = Object.assign({}, b, { as_of_step: cur });
    const st = cellState(c, cur), got = decisionOf(c, off);
    const unc = b.decision ? b.decision.read_uncommitted : c.kind.endsWith("marker") ? "control" : "delivered";
    if (st === "pending") b.decision = { decision: "pending", cause: "at_or_above_lso", read_uncommitted: unc, fetch_offset: -1,
      reason: "pending: behind the LSO (" + s.broker.lso + ") at this step; the consumer cannot read it yet" };
    else if (st === "unknown") b.decision = { decision: "", cause: "", read_uncommitted: unc, fetch_offset: -1, reason: "the quiz asks for this one" };
    else if (got) b.decision = { decision: got.d.verdict, cause: got.d.cause, read_uncommitted: unc, fetch_offset: got.fetch, reason: got.d.reason };
    // The transaction: the API's (or, for a remedy's marker, the one it
    // ended), as of the step.
    const first = b.transaction ? b.transaction.first_offset : c.remedy && steps[c.appended].broker.decided ? steps[c.appended].broker.decided.first : null;
    if (first !== null && c.producer >= 0) b.transaction = txnAsOf(c, first, cur);
    const e = first === null ? null : s.broker.txnindex.find((x) => x.producer === c.producer && x.first === first);
    b.aborted_entry = e ? { file: e.file, first_offset: e.first, last_offset: e.last, last_stable_offset: e.lso,
      from_disk: !!(b.aborted_entry && b.aborted_entry.from_disk && b.aborted_entry.first_offset === e.first && !c.remedy) } : null;
    return b;
  }
  function drawTimeline(s) {
    const tl = window.txnscope;
    if (!tl || !tl.asOf || !follow) return;
    const b = s.broker, c = s.consumer, end = b.log_end;
    const byFrom = new Map(cells.map((c) => [c.from, c]));
    const extra = cells.filter((x) => x.remedy && x.appended <= cur && steps[x.appended].broker.decided).map((x) =>
      ({ from: x.from, to: x.to, producer: x.producer, first: steps[x.appended].broker.decided.first, ts: x.header ? x.header.max_timestamp : -1 }));
    const status = (cur === 0 ? "start: " : "step " + cur + ": ") + (cur === 0 ? "the consumer starts at offset " + c.position
      : c.waiting ? "the consumer waits at the LSO, " + b.lso : "the consumer has decided every offset below " + c.position);
    asOfDone = tl.asOf({ logEnd: end, lso: Math.min(b.lso, end), hwm: Math.min(b.hwm, end), ongoing: b.ongoing, extra, status, batch: batchAsOf,
      verdict: (from, to, had) => {
        let c = byFrom.get(from);
        if (!c) c = cellAtOffset(from); // the part of a batch past the position
        if (!c) return null;
        const st = cellState(c, cur);
        return st === "pending" || st === "unknown" ? "pending" : had === "before_position" ? null : st;
      },
      // The reason as of the step: the one the engine gave when the
      // consumer decided the batch, never one citing a later marker.
      reason: (off) => {
        const c = cellAtOffset(off);
        if (!c) return "";
        const st = cellState(c, cur);
        if (st === "pending") return "pending: behind the LSO (" + b.lso + ") at this step; the consumer cannot read it yet";
        if (st === "unknown") return "the quiz asks for this one";
        const got = decisionOf(c, off);
        return got ? got.d.reason : "";
      } });
    if (!document.body.classList.contains("lesson-asof")) {
      document.body.classList.add("lesson-asof");
      // The timeline now plays the lesson's consumer (read_committed, its
      // rules, from its position): its consumer controls would draw
      // another one. The rules selector shows the lesson's.
      for (const id of ["isolation", "position", "max-bytes", "variant"]) {
        const el = document.querySelector('[data-testid="' + id + '"]');
        if (!el) continue;
        if (id === "variant" && L.variant) el.value = L.variant;
        el.disabled = true;
        el.title = "the lesson plays a read_committed consumer (" + L.rules + " rules) from offset " + L.position;
      }
    }
    if (tl.highlight) tl.highlight(s.batch ? s.batch.from : null, s.batch ? s.batch.to : null);
  }

  function renderQuiz(active) {
    const box = $("quiz"), res = $("quiz-result"), why = $("quiz-why"), q = $("quiz-q");
    box.hidden = cur === 0 || questions(cur).length === 0;
    q.hidden = !active;
    if (active) {
      const d = active[0];
      q.textContent = offsets(d.from, d.to) + " (" + d.kind + (d.producer >= 0 ? " of producer " + d.producer : "") + "): what does the consumer do with it?";
    }
    for (const btn of box.querySelectorAll("button[data-choice]")) {
      btn.disabled = !active;
      btn.classList.remove("chosen", "right");
    }
    // The last answer given at this step.
    const done = questions(cur).filter(([, i]) => answered(cur, i)).pop();
    if (!done) { res.hidden = true; why.hidden = true; }
    else {
      const [d, i] = done, a = answers.get(key(cur, i)), ok = a === d.verdict;
      res.hidden = false; why.hidden = false;
      res.dataset.correct = ok;
      res.textContent = (ok ? "Right: " + offsets(d.from, d.to) + " " + verdictWords(d.verdict) + "." : "Not quite: you said " + verdictWords(a) + " for " + offsets(d.from, d.to) + ", the consumer's decision is " + verdictWords(d.verdict) + ".");
      why.textContent = d.why;
    }
    let right = 0;
    const missed = [];
    answers.forEach((v, k) => {
      const [n, i] = k.split(":").map(Number), d = steps[n].consumer.decided[i];
      if (v === d.verdict) right++; else missed.push([n, d, v]);
    });
    const sc = $("quiz-score");
    sc.textContent = "score " + right + " / " + answers.size + " (" + totalQuestions + " questions)";
    sc.dataset.right = right; sc.dataset.answered = answers.size;
    // The summary, once every question is answered.
    const sum = $("quiz-summary");
    sum.hidden = answers.size < totalQuestions;
    if (!sum.hidden) {
      $("quiz-summary-score").textContent = "You scored " + right + " of " + totalQuestions + ".";
      missed.sort((x, y) => x[0] - y[0]);
      list($("quiz-missed"), missed, ([n, d, v]) => "<b>Step " + n + ", " + offsets(d.from, d.to) + "</b>: you said " + esc(verdictWords(v)) + ", the consumer's decision is " +
        esc(verdictWords(d.verdict)) + ". " + esc(d.why), "none: every answer was right");
    }
  }

  function go(n) {
    follow = true;
    n = Math.max(0, Math.min(steps.length - 1, n));
    // A quiz does not skip ahead of an unanswered question.
    if (quiz) while (n > cur && !revealed(cur)) n--;
    cur = n;
    render();
  }
  function play(on) {
    clearInterval(timer); timer = 0;
    if (on) timer = setInterval(() => { if (cur >= steps.length - 1) play(false); else go(cur + 1); }, +root.dataset.autoplay || 1500);
    root.dataset.playing = timer ? "1" : "0";
    $("lesson-play").textContent = timer ? "❚❚ pause" : "▶ play";
  }

  $("lesson-first").onclick = () => go(0);
  $("lesson-prev").onclick = () => go(cur - 1);
  $("lesson-next").onclick = () => go(cur + 1);
  $("lesson-last").onclick = () => go(steps.length - 1);
  $("lesson-play").onclick = () => play(!timer);
  if (quiz) {
    $("quiz").addEventListener("click", (e) => {
      const btn = e.target.closest("button[data-choice]");
      const active = questions(cur).find(([, i]) => !answered(cur, i));
      if (!btn || !active) return;
      answers.set(key(cur, active[1]), btn.dataset.choice);
      render();
    });
    $("quiz-restart").onclick = () => { answers.clear(); cur = 0; render(); };
    $("lesson-play").hidden = true;
  }
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    // The timeline pans with the arrows when it has the focus, and form
    // fields keep their keys.
    if (t && t.closest && (t.closest('[data-testid="timeline"]') || t.closest("input, select, textarea"))) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    switch (e.key) {
      case "ArrowRight": go(cur + 1); break;
      case "ArrowLeft": go(cur - 1); break;
      case " ": go(e.shiftKey ? cur - 1 : cur + 1); break;
      case "Home": go(0); break;
      case "End": go(quiz ? cur : steps.length - 1); break;
      case "p": if (!quiz) play(!timer); break;
      default: return;
    }
    e.preventDefault();
  });


  const q = new URLSearchParams(location.search);
  cur = Math.max(0, Math.min(steps.length - 1, +(q.get("step") || root.dataset.startStep) || 0));
  if (quiz) cur = 0; // a quiz starts at the beginning, whatever the link says
  render();
  if (+root.dataset.autoplay > 0 && !quiz) play(true);
  // The timeline's stream may finish after this script ran: draw the step
  // on it once it has (asOf answers false until then).
  const wait = setInterval(() => {
    if (asOfDone || (!window.txnscope && document.readyState === "complete")) { clearInterval(wait); return; }
    if (!follow) return;
    drawTimeline(steps[cur]);
  }, 100);
  window.txnscopeLesson = { step: () => cur, steps: () => steps.length, go, playing: () => !!timer };
})();
