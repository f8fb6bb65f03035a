// txnscope diagnosis panel: copy buttons (the Clipboard API, or a hidden
// textarea and execCommand where it is unavailable), the bootstrap field
// that fills in the commands they copy, discard-range links
// that move the timeline's view (window.txnscope.setView) instead of
// reloading the page, and a panel that follows the page's consumer
// position: when the position changes (the position field or "consume from
// here"), the panel is fetched again as a fragment
// (.../diagnosis?position=N) and swapped in, so the lag split matches what
// the timeline draws; and when the stream says that a lazily loaded
// partition's whole log replaced the tail the page was drawn from
// ("loaded"), the panel is fetched again the same way, and so is the
// summary above the timeline (.../summary with the page's query: its
// counts and problems list were the tail's). The page works
// without it: the links carry the view in their query, and a reload with
// ?position= renders the same panel.
"use strict";
(function () {
  const panel0 = document.querySelector('[data-testid="diagnosis"]');
  const panel = () => document.querySelector('[data-testid="diagnosis"]');
  const copies = []; // what was copied, and how (for tests)
  let refreshes = 0, pending = null;

  function fallbackCopy(text) {
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.className = "copy-buffer";
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    ta.remove();
    return ok;
  }
  function copy(text) {
    const fb = () => fallbackCopy(text) ? "fallback" : Promise.reject(new Error("copy failed"));
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text).then(() => "clipboard", fb);
    }
    return Promise.resolve().then(fb);
  }
  const timers = new WeakMap();
  function flash(b, msg, ok) {
    const st = b.parentElement.querySelector(".copied");
    if (st) { st.textContent = msg; st.classList.toggle("failed", !ok); }
    clearTimeout(timers.get(b));
    timers.set(b, setTimeout(() => { if (st) st.textContent = ""; }, 4000));
  }

  // Delegated on the document: the panel element is replaced on refresh.
  // The embed snippet's copy button (web/lesson.templ lessonLinks) is
  // answered here too, with or without a diagnosis panel.
  document.addEventListener("click", (e) => {
    if (!e.target.closest || !e.target.closest('[data-testid="diagnosis"], [data-testid="embed-box"]')) return;
    // button.copy copies a command, button.copy-snippet the embed's HTML.
    const b = e.target.closest("button.copy, button.copy-snippet");
    if (b) {
      const text = b.dataset.copy;
      copy(text).then((how) => { copies.push({ text, how }); flash(b, "copied", true); },
        () => {
          // Leave the command selected so that Ctrl+C works.
          const code = b.parentElement.querySelector("code"), area = b.parentElement.querySelector("textarea");
          if (area) area.select();
          else if (code) { const r = document.createRange(); r.selectNodeContents(code); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
          flash(b, "copy failed: press Ctrl+C", false);
        });
      return;
    }
    const a = e.target.closest("a.range");
    if (a && window.txnscope && window.txnscope.setView) {
      e.preventDefault();
      window.txnscope.setView(+a.dataset.viewFrom, +a.dataset.viewTo);
      const tl = document.querySelector('[data-testid="timeline"]');
      if (tl) { tl.scrollIntoView({ block: "nearest" }); tl.focus({ preventScroll: true }); }
    }
  });
  if (!panel0) { window.txnscopeDiagnosis = { copies: () => copies.slice() }; return; }

  // The fragment URL: this page's path + /diagnosis, with the page's
  // diagnosis options (now, bootstrap, timeouts) and the new position.
  function refresh(position, force) {
    const p = panel();
    if (!p || (!force && String(position) === p.dataset.position)) return;
    const page = new URL(location.href);
    const u = new URL(page.pathname.replace(/\/$/, "") + "/diagnosis", page);
    for (const k of ["now", "bootstrap", "topic_name", "transaction_timeout", "max_transaction_timeout"]) {
      if (page.searchParams.has(k)) u.searchParams.set(k, page.searchParams.get(k));
    }
    if (position >= 0) u.searchParams.set("position", position);
    if (pending) pending.abort();
    const ctl = new AbortController();
    pending = ctl;
    fetch(u, { signal: ctl.signal, headers: { Accept: "text/html" } })
      .then((r) => r.ok ? r.text() : Promise.reject(new Error(r.status + " " + r.statusText)))
      .then((html) => {
        const t = document.createElement("template");
        t.innerHTML = html.trim();
        const next = t.content.querySelector('[data-testid="diagnosis"]');
        const cur = panel();
        if (next && cur) { cur.replaceWith(next); refreshes++; document.dispatchEvent(new CustomEvent("txnscope:diagnosis")); }
      })
      .catch((e) => { if (e.name !== "AbortError") { const cur = panel(); if (cur) cur.dataset.refreshError = String(e); } })
      .finally(() => { if (pending === ctl) pending = null; });
  }
  function currentPosition() {
    const s = window.txnscope && window.txnscope.state && window.txnscope.state();
    if (s && typeof s.position === "number") return s.position;
    const el = document.querySelector('[data-testid="position"]');
    return el && el.value !== "" ? Math.max(-1, Math.floor(+el.value)) : -1;
  }
  // The timeline updates its state in its own handlers; read it after
  // they ran.
  const later = () => setTimeout(() => refresh(currentPosition()), 0);
  // A lazily loaded partition's page was drawn from its tail; when the
  // stream says the whole log has landed ("loaded", docs/protocol.md), the
  // panel is fetched again for it.
  let loads = 0, summaries = 0;
  document.addEventListener("txnscope:message", (e) => {
    if (e.detail && e.detail.type === "loaded") { loads++; setTimeout(() => { refresh(currentPosition(), true); refreshSummary(); }, 0); }
  });
  // refreshSummary swaps in the summary the server renders now for this
  // page's URL (the same view model as the page's own, web.SummaryFragment).
  let summaryPending = null;
  function refreshSummary() {
    const cur = document.querySelector('[data-testid="summary"]');
    if (!cur) return; // the embed has none
    const page = new URL(location.href);
    const u = new URL(page.pathname.replace(/\/$/, "") + "/summary" + page.search, page);
    if (summaryPending) summaryPending.abort();
    const ctl = new AbortController();
    summaryPending = ctl;
    fetch(u, { signal: ctl.signal, headers: { Accept: "text/html" } })
      .then((r) => r.ok ? r.text() : Promise.reject(new Error(r.status + " " + r.statusText)))
      .then((html) => {
        const t = document.createElement("template");
        t.innerHTML = html.trim();
        const next = t.content.querySelector('[data-testid="summary"]'), now = document.querySelector('[data-testid="summary"]');
        if (!next || !now) return;
        // A box the reader opened or closed (the embed snippet, the
        // problems list) stays so.
        for (const d of now.querySelectorAll("details[data-testid]")) {
          const n = next.querySelector('details[data-testid="' + d.dataset.testid + '"]');
          if (n) n.open = d.open;
        }
        now.replaceWith(next); summaries++;
      })
      .catch((e) => { if (e.name !== "AbortError") { const now = document.querySelector('[data-testid="summary"]'); if (now) now.dataset.refreshError = String(e); } })
      .finally(() => { if (summaryPending === ctl) summaryPending = null; });
  }
  const pos = document.querySelector('[data-testid="position"]');
  if (pos) pos.addEventListener("change", later);
  document.addEventListener("click", (e) => {
    if (e.target.closest && e.target.closest('[data-testid="consume-from-here"]')) later();
  });

  // The bootstrap field: the address goes into every command, into the
  // link (?bootstrap=, so that a shared link and the panel's refresh carry
  // it) and into this browser's storage (so that the next partition opened
  // has it). The commands are the server's (web.Cmd, quoted by
  // present.ShellWord): this script never builds or quotes one. A change
  // of the field fetches the panel for the new link and takes its
  // commands' text; until they arrive the copy buttons wait. Empty, the
  // commands keep "$BOOTSTRAP" after the guard line that stops them until
  // BOOTSTRAP is set: what a button copies always runs.
  const STORE = "txnscope.bootstrap";
  let commandUpdates = 0, commandsPending = null, commandsTimer = 0;
  // The topic of a segment read alone is not known (present.TopicVar):
  // the topic field puts one in, as the bootstrap field does the address;
  // it stays in the link (?topic_name=), not in storage: it is this
  // segment's. The server puts it into the commands, quoted.
  const topicNow = () => (new URL(location.href).searchParams.get("topic_name") || "").trim();
  function applyBootstrap(boot) {
    const p = panel();
    if (!p) return;
    const f = p.querySelector('[data-testid="bootstrap"]');
    if (f && document.activeElement !== f) f.value = boot;
    const tf = p.querySelector('[data-testid="topic-name"]');
    if (tf && document.activeElement !== tf) tf.value = topicNow();
    const hint = p.querySelector('[data-testid="bootstrap-hint"]');
    if (hint) {
      hint.textContent = boot ? "Put into the commands below; remembered in the link and this browser."
        : 'Until it is set, the commands below use "$BOOTSTRAP" and begin with a line that stops them until BOOTSTRAP is set in your shell.';
    }
  }
  // updateCommands fetches the panel for the page's link and copies its
  // commands' text into this panel's, which keeps the field being typed in.
  function updateCommands() {
    const p = panel();
    if (!p) return;
    const cmds = p.querySelectorAll(".cmd");
    for (const b of p.querySelectorAll(".cmd button.copy")) b.disabled = true;
    const page = new URL(location.href);
    const u = new URL(page.pathname.replace(/\/$/, "") + "/diagnosis", page);
    for (const k of ["now", "bootstrap", "topic_name", "transaction_timeout", "max_transaction_timeout"]) {
      if (page.searchParams.has(k)) u.searchParams.set(k, page.searchParams.get(k));
    }
    if (p.dataset.position !== undefined && +p.dataset.position >= 0) u.searchParams.set("position", p.dataset.position);
    if (commandsPending) commandsPending.abort();
    const ctl = new AbortController();
    commandsPending = ctl;
    fetch(u, { signal: ctl.signal, headers: { Accept: "text/html" } })
      .then((r) => r.ok ? r.text() : Promise.reject(new Error(r.status + " " + r.statusText)))
      .then((html) => {
        const t = document.createElement("template");
        t.innerHTML = html.trim();
        const next = t.content.querySelectorAll('[data-testid="diagnosis"] .cmd');
        // A panel swapped in meanwhile was fetched with the link's
        // bootstrap already; one of another shape is fetched whole.
        if (panel() !== p) return;
        if (next.length !== cmds.length) { refresh(currentPosition(), true); return; }
        cmds.forEach((c, i) => {
          const code = c.querySelector("code"), b = c.querySelector("button.copy");
          const nc = next[i].querySelector("code"), nb = next[i].querySelector("button.copy");
          if (code && nc) code.textContent = nc.textContent;
          if (b && nb) b.dataset.copy = nb.dataset.copy;
        });
        commandUpdates++;
      })
      .catch((e) => { if (e.name !== "AbortError") p.dataset.refreshError = String(e); })
      .finally(() => {
        if (commandsPending !== ctl) return;
        commandsPending = null;
        for (const b of p.querySelectorAll(".cmd button.copy")) b.disabled = false;
      });
  }
  function storedBootstrap() { try { return localStorage.getItem(STORE) || ""; } catch (e) { return ""; } }
  function setBootstrap(boot) {
    boot = boot.trim().slice(0, 1024);
    try { if (boot) localStorage.setItem(STORE, boot); else localStorage.removeItem(STORE); } catch (e) { /* storage off */ }
    const u = new URL(location.href);
    if (boot) u.searchParams.set("bootstrap", boot); else u.searchParams.delete("bootstrap");
    history.replaceState(history.state, "", u);
    applyBootstrap(boot);
    // One fetch when the typing pauses, not one per key.
    clearTimeout(commandsTimer);
    commandsTimer = setTimeout(updateCommands, 150);
  }
  const bootNow = () => new URL(location.href).searchParams.get("bootstrap") || "";
  function setTopic(name) {
    name = name.trim().slice(0, 249); // Kafka's longest topic name
    const u = new URL(location.href);
    if (name) u.searchParams.set("topic_name", name); else u.searchParams.delete("topic_name");
    history.replaceState(history.state, "", u);
    applyBootstrap(bootNow());
    clearTimeout(commandsTimer);
    commandsTimer = setTimeout(updateCommands, 150);
  }
  document.addEventListener("input", (e) => {
    if (e.target.matches && e.target.matches('[data-testid="diagnosis"] [data-testid="bootstrap"]')) setBootstrap(e.target.value);
    if (e.target.matches && e.target.matches('[data-testid="diagnosis"] [data-testid="topic-name"]')) setTopic(e.target.value);
  });
  document.addEventListener("submit", (e) => {
    if (e.target.matches && e.target.matches('[data-testid="bootstrap-form"]')) {
      e.preventDefault();
      const f = e.target.querySelector('[data-testid="bootstrap"]');
      if (f) setBootstrap(f.value);
      const tf = e.target.querySelector('[data-testid="topic-name"]');
      if (tf) setTopic(tf.value);
    }
  });
  // A refreshed panel is rendered with the link's bootstrap already.
  document.addEventListener("txnscope:diagnosis", () => applyBootstrap(bootNow()));
  if (!new URL(location.href).searchParams.has("bootstrap") && storedBootstrap()) setBootstrap(storedBootstrap());
  else if (topicNow()) applyBootstrap(bootNow());

  window.txnscopeDiagnosis = { copies: () => copies.slice(), refreshes: () => refreshes, loads: () => loads, summaries: () => summaries, refresh, refreshSummary, setBootstrap, setTopic, commandUpdates: () => commandUpdates };
})();
