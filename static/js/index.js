// txnscope index page: the filter box, and the refresh of the lists while
// a log directory's partitions are ranked in the background.
//
// The filter matches the partitions' names (topic-partition, lower case,
// the rows' data-name) by substring; a topic group without a match is
// hidden, one with a match is unfolded while the filter is set and folds
// back as it was when the filter is cleared.
//
// While the server still scans partitions' tails ([data-testid="index-live"]
// data-scanning="true") the page fetches itself every 1.5 s and swaps in
// the new lists: the same HTML the server renders, so there is one
// template, not a second one in JS. Which groups the person unfolded or
// folded is kept across the swap.
"use strict";
(function () {
  const input = document.querySelector('[data-testid="index-filter"]');
  const count = document.querySelector('[data-testid="filter-count"]');
  if (!input) return;
  const refreshMs = 1500;
  // Groups the person opened or closed by hand: topic test id -> open.
  const chosen = new Map();
  let refreshes = 0;

  function groups() {
    return document.querySelectorAll("details.topic-group");
  }

  function track() {
    for (const d of groups()) {
      if (d.dataset.tracked) continue;
      d.dataset.tracked = "1";
      d.addEventListener("toggle", () => {
        // A toggle setOpen caused is not the person's choice.
        if (d.dataset.expect === String(d.open)) {
          delete d.dataset.expect;
          return;
        }
        chosen.set(d.dataset.testid, d.open);
      });
    }
  }

  // setOpen folds or unfolds d without taking it for the person's choice.
  function setOpen(d, open) {
    if (d.open === open) return;
    d.dataset.expect = String(open); // the toggle event comes later, as a task
    d.open = open;
  }

  function filter() {
    const q = input.value.trim().toLowerCase();
    let shown = 0, total = 0;
    // The held-back list and the demos: rows, and the table when none is left.
    for (const table of document.querySelectorAll('[data-testid="lag-sorted"], [data-testid="demo-list"]')) {
      let any = false;
      for (const row of table.querySelectorAll("tr.prow")) {
        row.hidden = q !== "" && !row.dataset.name.includes(q);
        any = any || !row.hidden;
      }
      table.hidden = !any;
    }
    for (const d of groups()) {
      let hits = 0;
      const rows = d.querySelectorAll("tr.prow");
      for (const row of rows) {
        const hit = q === "" || row.dataset.name.includes(q);
        row.hidden = !hit;
        if (hit) hits++;
      }
      total += rows.length;
      shown += hits;
      d.hidden = hits === 0;
      if (q !== "") {
        setOpen(d, hits > 0);
      } else {
        // Back to what the person chose, else to the server's default.
        const id = d.dataset.testid;
        setOpen(d, chosen.has(id) ? chosen.get(id) : d.dataset.openDefault === "true");
      }
    }
    const n = window.txnscopeFormat.count;
    count.textContent = q === "" ? "" : n(shown) + " of " + n(total) + (total === 1 ? " partition matches" : " partitions match");
  }

  input.addEventListener("input", filter);

  async function refresh() {
    const live = document.querySelector('[data-testid="index-live"]');
    if (!live || live.dataset.scanning !== "true") return;
    try {
      const res = await fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (res.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const next = doc.querySelector('[data-testid="index-live"]');
        if (next) {
          live.replaceWith(document.adoptNode(next));
          refreshes++;
          track();
          filter();
        }
      }
    } catch (e) {
      // The server went away or is busy: try again at the next tick.
    }
    const now = document.querySelector('[data-testid="index-live"]');
    if (now && now.dataset.scanning === "true") setTimeout(refresh, refreshMs);
  }

  track();
  setTimeout(refresh, refreshMs);
  window.txnscopeIndex = { refreshes: () => refreshes, filter };
})();
