// txnscope lesson: renders the step list the server computed from the
// engine (web/lesson.go, inlined as <script type="application/json"
// id="txnscope-lesson">) one step at a time. It decides nothing itself.
//
// Controls: forward/back buttons, ← → (space: forward, shift+space: back),
// Home/End, p to play/pause; ?step=N is kept in the URL so a step can be
// shared. Quiz mode (data-mode="quiz") hides each batch's decision until
// the learner predicts it, then shows whether they were right and why.
// When the page also holds the timeline (embed, export), the current batch
// is outlined there through window.txnscope.highlight (see timeline.js).
"use strict";
(function () {
  const root = document.querySelector('[data-testid="lesson"]');
  const dataEl = document.getElementById("txnscope-lesson");
  if (!root || !dataEl) return;
  const L = JSON.parse(dataEl.textContent);
  const steps = L.steps;
  const $ = (id) => root.querySelector('[data-testid="' + id + '"]');
  const quiz = root.dataset.mode === "quiz";
  const answers = new Map(); // step -> the learner's choice
  let cur = 0, timer = 0;

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const span = (a, b) => (a === b ? "" + a : a + "–" + b);
  const offsets = (a, b) => (a === b ? "offset " : "offsets ") + span(a, b);
  const list = (el, items, fmt, empty) => {
    el.innerHTML = items.length ? items.map((x) => "<li>" + fmt(x) + "</li>").join("") : '<li class="none">' + empty + "</li>";
    el.dataset.count = items.length;
  };
  const abortText = (a) => "producer " + a.producer + ", first offset " + a.first;

  // The strip: one cell per batch, shown once appended; its colour is the
  // decision, hidden in a quiz until answered.
  const strip = $("lesson-strip");
  strip.innerHTML = steps.slice(1).map((s) =>
    '<li data-testid="strip-' + s.n + '" data-step="' + s.n + '" title="offsets ' + span(s.batch.from, s.batch.to) + " · " + esc(s.batch.kind) + '">' +
    esc(s.batch.kind.endsWith("marker") ? (s.batch.kind.startsWith("COMMIT") ? "✓" : "✕") : span(s.batch.from, s.batch.to)) + "</li>").join("");
  strip.addEventListener("click", (e) => { const li = e.target.closest("li[data-step]"); if (li) go(+li.dataset.step); });

  const revealed = (n) => !quiz || n === 0 || answers.has(n);

  function render() {
    const s = steps[cur];
    root.dataset.step = cur;
    $("lesson-count").textContent = "step " + cur + " of " + (steps.length - 1);
    $("lesson-prev").disabled = cur === 0;
    $("lesson-first").disabled = cur === 0;
    $("lesson-next").disabled = cur === steps.length - 1 || (quiz && !revealed(cur));
    $("lesson-last").disabled = cur === steps.length - 1 || quiz;
    $("lesson-sentence").textContent = revealed(cur) ? s.sentence : s.lead + " What does the consumer do with this batch?";

    for (const li of strip.children) {
      const n = +li.dataset.step, st = steps[n];
      li.hidden = n > cur;
      li.classList.toggle("current", n === cur);
      li.dataset.decision = revealed(n) ? st.consumer.verdict : "unknown";
    }

    const b = s.broker;
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
      li.dataset.testid = "broker-decided";
      li.setAttribute("data-testid", "broker-decided");
      li.textContent = "producer " + b.decided.producer + " from " + b.decided.first + ": " + b.decided.state + " now";
      $("broker-ongoing").appendChild(li);
    }
    const tb = $("broker-txnindex").tBodies[0];
    tb.innerHTML = b.txnindex.length ? b.txnindex.map((e) =>
      "<tr" + (e.new ? ' class="new" data-testid="txnindex-new"' : "") + "><td>" + esc(e.file) + "</td><td>" + e.producer + "</td><td>" + e.first + "</td><td>" + e.last + "</td><td>" + e.lso + "</td></tr>").join("")
      : '<tr class="none"><td colspan="5">no entry yet: the broker writes one per aborted transaction, when its ABORT marker lands</td></tr>';

    const c = s.consumer;
    $("consumer-fetch").textContent = cur === 0 ? "The consumer starts at offset " + c.position + "." :
      c.fetched ? "Fetch from offset " + c.fetch_offset + " returned this batch; position now " + c.position + "." :
        "No fetch returned this batch; position " + c.position + ".";
    list($("consumer-listed"), c.listed, abortText, c.fetched ? "empty list" : "—");
    // Before a quiz answer, the queue and the set as they were before the
    // batch: a new response starts from its whole list and an empty set
    // (CompletedFetch is per response).
    let queue = c.queue, set = c.set;
    if (!revealed(cur)) {
      const p = steps[cur - 1].consumer;
      const same = cur > 1 && p.fetched && p.fetch_offset === c.fetch_offset;
      queue = same ? p.queue : c.listed.slice().sort((x, y) => x.first - y.first);
      set = same ? p.set : [];
    }
    list($("consumer-queue"), queue, abortText, "empty");
    list($("consumer-set"), set, (a) => "producer " + a.producer + " (since its aborted transaction at " + a.first + ")", "empty");

    const dec = $("consumer-decision"), why = $("consumer-reason");
    if (cur === 0) {
      dec.textContent = ""; dec.dataset.decision = ""; why.textContent = "";
    } else if (revealed(cur)) {
      dec.innerHTML = offsets(s.batch.from, s.batch.to) + ': <strong class="verdict ' + esc(c.verdict) + '">' + esc(c.verdict) + "</strong>";
      dec.dataset.decision = c.verdict;
      why.textContent = c.reason;
    } else {
      dec.innerHTML = offsets(s.batch.from, s.batch.to) + ": <strong>?</strong>";
      dec.dataset.decision = "hidden"; why.textContent = "";
    }
    if (quiz) renderQuiz(s);

    const link = $("lesson-link");
    const u = new URL(location.href);
    u.searchParams.set("step", cur);
    link.href = u.toString();
    try { if (location.protocol !== "file:") history.replaceState(null, "", u); } catch (e) { /* file:// may refuse */ }

    // The timeline, when on the page, outlines the batch (hook in timeline.js).
    const tl = window.txnscope;
    if (tl && tl.highlight) tl.highlight(s.batch ? s.batch.from : null, s.batch ? s.batch.to : null);
    // An embedding page learns which step its frame shows (what the panel
    // reads, not the data).
    if (window.parent !== window) {
      const tr = document.querySelector('[data-testid="timeline"]');
      window.parent.postMessage({ type: "txnscope:lesson-step", step: cur, steps: steps.length - 1, count: $("lesson-count").textContent,
        decision: $("consumer-decision").dataset.decision, highlight: tr ? tr.dataset.highlight || "" : "" }, "*");
    }
  }

  function renderQuiz(s) {
    const box = $("quiz"), res = $("quiz-result"), why = $("quiz-why");
    const a = answers.get(cur);
    box.hidden = cur === 0;
    for (const btn of box.querySelectorAll("button[data-choice]")) {
      btn.disabled = a !== undefined;
      btn.classList.toggle("chosen", a === btn.dataset.choice);
      btn.classList.toggle("right", a !== undefined && btn.dataset.choice === s.answer);
    }
    if (a === undefined) { res.hidden = true; why.hidden = true; }
    else {
      const ok = a === s.answer;
      res.hidden = false; why.hidden = false;
      res.dataset.correct = ok;
      res.textContent = ok ? "Right: " + s.answer + "." : "Not quite: you said " + a + ", the consumer's decision is " + s.answer + ".";
      why.textContent = s.why;
    }
    let right = 0;
    answers.forEach((v, n) => { if (v === steps[n].answer) right++; });
    const sc = $("quiz-score");
    sc.textContent = "score " + right + " / " + answers.size + " (" + (steps.length - 1) + " batches)";
    sc.dataset.right = right; sc.dataset.answered = answers.size;
  }

  function go(n) {
    n = Math.max(0, Math.min(steps.length - 1, n));
    // A quiz does not skip ahead of an unanswered step.
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
      if (!btn || answers.has(cur) || cur === 0) return;
      answers.set(cur, btn.dataset.choice);
      render();
    });
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
  // The timeline script may run after this one: outline the batch once it is there.
  window.addEventListener("load", render);
  window.txnscopeLesson = { step: () => cur, steps: () => steps.length, go, playing: () => !!timer };
})();
