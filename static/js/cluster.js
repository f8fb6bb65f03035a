// The cluster view (web/cluster.templ): the filter box hides the rows whose
// text does not contain every word typed, and the table is fetched again
// every scan interval (data-poll-ms) and swapped in, the filter kept.
(() => {
  "use strict";
  const main = document.querySelector('[data-testid="cluster"]');
  const box = document.querySelector('[data-testid="cluster-filter"]');
  if (!main || !box) return;
  const body = () => main.querySelector('[data-testid="cluster-body"]');

  const apply = () => {
    const words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const tb of body().querySelectorAll('[data-testid="cluster-topic"]')) {
      let any = false;
      for (const tr of tb.querySelectorAll('[data-testid="cluster-row"]')) {
        const text = tr.textContent.toLowerCase();
        const ok = words.every((w) => text.includes(w));
        tr.hidden = !ok;
        any = any || ok;
        if (ok) shown++;
      }
      tb.hidden = !any;
    }
    body().querySelector('[data-testid="cluster-empty"]').hidden = shown > 0;
  };
  box.addEventListener("input", apply);

  const poll = Number(main.dataset.pollMs) || 5000;
  const refresh = async () => {
    try {
      const resp = await fetch(location.pathname + location.search, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (resp.ok) {
        const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
        const next = doc.querySelector('[data-testid="cluster-body"]');
        if (next) {
          body().replaceWith(next);
          apply();
        }
      }
    } catch (e) {
      // The server is restarting or gone: keep the last table.
    }
    setTimeout(refresh, poll);
  };
  setTimeout(refresh, poll);
  apply();
})();
