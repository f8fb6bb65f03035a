// txnscope theme: light or dark. The page follows prefers-color-scheme
// (app.css) until the header's toggle chooses one, which is remembered in
// localStorage and set as data-theme on <html>. This script runs in <head>,
// before the body is drawn, so that a remembered choice shows no flash of
// the other theme. Scripts that draw with the theme's colours (the timeline's
// canvas) redraw on the "txnscope:theme" event, fired on every change, by
// the toggle or by the system's preference.
"use strict";
(function () {
  const KEY = "txnscope-theme", root = document.documentElement;
  const media = window.matchMedia("(prefers-color-scheme: dark)");
  let chosen = null;
  try { chosen = localStorage.getItem(KEY); } catch (e) { /* storage refused (a sandboxed frame): follow the system */ }
  if (chosen === "light" || chosen === "dark") root.dataset.theme = chosen;

  function current() { return root.dataset.theme || (media.matches ? "dark" : "light"); }

  // The button names the theme it switches to; aria-pressed tells a screen
  // reader whether the dark theme is on.
  function label(button) {
    const dark = current() === "dark";
    button.hidden = false;
    button.textContent = dark ? "Light theme" : "Dark theme";
    button.setAttribute("aria-pressed", String(dark));
    button.title = dark ? "Switch to the light theme (remembered in this browser)" : "Switch to the dark theme (remembered in this browser)";
  }
  function changed() {
    document.querySelectorAll('[data-testid="theme-toggle"]').forEach(label);
    document.dispatchEvent(new CustomEvent("txnscope:theme", { detail: current() }));
  }
  // choose applies theme and remembers it; choosing the system's own
  // theme forgets the choice instead, so that the page follows the system
  // again (there is no third state to find on the button).
  function choose(theme) {
    const system = media.matches ? "dark" : "light";
    try {
      if (theme === system) localStorage.removeItem(KEY); else localStorage.setItem(KEY, theme);
    } catch (e) { /* not remembered, still applied */ }
    if (theme === system) delete root.dataset.theme; else root.dataset.theme = theme;
    changed();
  }
  media.addEventListener("change", () => { if (!root.dataset.theme) changed(); });
  function wire() {
    document.querySelectorAll('[data-testid="theme-toggle"]').forEach((b) => {
      label(b);
      b.addEventListener("click", () => choose(current() === "dark" ? "light" : "dark"));
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire); else wire();
  window.txnscopeTheme = { current, choose };
})();
