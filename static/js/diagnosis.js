// txnscope diagnosis panel: copy buttons (the Clipboard API, or a hidden
// textarea and execCommand where it is unavailable) and discard-range links
// that move the timeline's view (window.txnscope.setView) instead of
// reloading the page. The page works without it: the links carry the view
// in their query.
"use strict";
(function () {
  const panel = document.querySelector('[data-testid="diagnosis"]');
  if (!panel) return;
  const copies = []; // what was copied, and how (for tests)

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

  panel.addEventListener("click", (e) => {
    const b = e.target.closest("button.copy");
    if (b) {
      const text = b.dataset.copy;
      copy(text).then((how) => { copies.push({ text, how }); flash(b, "copied", true); },
        () => {
          // Leave the command selected so that Ctrl+C works.
          const code = b.parentElement.querySelector("code");
          if (code) { const r = document.createRange(); r.selectNodeContents(code); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
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

  window.txnscopeDiagnosis = { copies: () => copies.slice() };
})();
