// txnscope drop zone (index page): a file picked in the zone's input, or
// dropped on the zone or anywhere on the page, is POSTed as it is to
// /api/v1/uploads?name=FILE (the server reads it into memory, never to
// disk) and the page moves to the first partition's timeline, which lists
// any damage the loader met. Errors are the server's own text (the 413
// names the limit). fetch cannot report upload progress without streaming
// bodies (HTTP/2 only), so the status shows the size and the time so far.
"use strict";
(function () {
  const zone = document.querySelector('[data-testid="drop-zone"]');
  if (!zone) return; // uploads disabled on this server
  const input = zone.querySelector('[data-testid="upload-input"]');
  const status = zone.querySelector('[data-testid="upload-status"]');
  const maxBytes = Number(zone.dataset.maxBytes);
  let busy = false;

  function size(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let u = 0;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return (Number.isInteger(n) ? n : n.toFixed(1)) + " " + units[u];
  }

  // show replaces the status with a line and, optionally, a list.
  function show(kind, line, items) {
    status.className = "upload-status " + kind;
    status.replaceChildren();
    const p = document.createElement("p");
    p.textContent = line;
    status.append(p);
    if (items && items.length) {
      const ul = document.createElement("ul");
      for (const t of items) {
        const li = document.createElement("li");
        li.textContent = t;
        ul.append(li);
      }
      status.append(ul);
    }
  }

  async function send(file) {
    if (busy) return;
    busy = true;
    zone.classList.add("busy");
    const t0 = Date.now();
    const progress = () => show("progress", `Uploading ${file.name} (${size(file.size)})… ${Math.round((Date.now() - t0) / 1000)} s`);
    progress();
    const tick = setInterval(progress, 1000);
    try {
      let res;
      try {
        res = await fetch("/api/v1/uploads?name=" + encodeURIComponent(file.name), {
          method: "POST", body: file, credentials: "same-origin",
        });
      } catch (e) {
        status.dataset.answer = "none"; // for tests: no HTTP answer was read
        // A server refusing a large body early may close the connection
        // before the browser reads the 413; the limit is known here.
        if (file.size > maxBytes) {
          show("error", `${file.name} is larger than this server's upload limit of ${zone.dataset.limit} (${maxBytes} bytes, serve --max-upload-bytes)`);
        } else {
          show("error", `Upload of ${file.name} failed: ${e.message}`);
        }
        return;
      }
      status.dataset.answer = String(res.status);
      const text = await res.text();
      let body = null;
      try { body = JSON.parse(text); } catch (e) { body = null; }
      if (!res.ok || !body || !body.partitions || !body.partitions.length) {
        // The token middleware answers in plain text; the API in JSON.
        const msg = (body && body.error) || text.trim() || `${res.status} ${res.statusText}`;
        show("error", msg, body && body.problems);
        return;
      }
      const go = () => { window.location.assign(body.partitions[0].url); };
      const notes = [];
      for (const e of body.evicted || []) notes.push(`made room by removing the oldest upload, ${e.id}: ${e.title}`);
      for (const p of body.problems || []) notes.push(p);
      if (!notes.length) {
        show("done", `Loaded ${body.title}: opening the timeline…`);
        go();
        return;
      }
      // A pause to read the notes; the timeline lists the problems again,
      // but an eviction is said only here.
      show("done", `Loaded ${body.title}, opening the timeline in a moment:`, notes);
      setTimeout(go, 2500);
    } finally {
      clearInterval(tick);
      busy = false;
      zone.classList.remove("busy");
    }
  }

  input.addEventListener("change", () => {
    if (input.files.length) send(input.files[0]);
    input.value = ""; // picking the same file again is a new upload
  });

  // Dropping anywhere on the page works; without preventDefault the
  // browser would open the file instead.
  let depth = 0;
  document.addEventListener("dragenter", (e) => { e.preventDefault(); depth++; zone.classList.add("dragging"); });
  document.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; zone.classList.remove("dragging"); } });
  document.addEventListener("dragover", (e) => { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; });
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    zone.classList.remove("dragging");
    const items = e.dataTransfer.items ? Array.from(e.dataTransfer.items).filter((i) => i.kind === "file") : [];
    const entry = items.length && items[0].webkitGetAsEntry ? items[0].webkitGetAsEntry() : null;
    if (entry && entry.isDirectory) {
      show("error", `${entry.name} is a directory, which cannot be uploaded: drop one of its .log segments, or start the server with --load ${entry.name}`);
      return;
    }
    const files = e.dataTransfer.files;
    if (files.length > 1) {
      show("error", `${files.length} files were dropped: drop one file at a time (each becomes its own source).`);
      return;
    }
    if (files.length) send(files[0]);
  });
})();
