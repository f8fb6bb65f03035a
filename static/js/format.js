// txnscope formats: the one way the pages write a count, a count with its
// noun, and a duration, as txnindex.Count, txnindex.Plural and
// txnindex.Duration write them on the server and in the CLI. Counts take
// thousands separators (1,234,567); offsets, producer ids and epochs are
// identifiers a reader copies into a command and stay plain digits, so
// they are never passed through count. TestUIFormatMatchesGo runs these
// and the Go functions over the same inputs. Loaded in <head> on every page.
"use strict";
(function () {
  // count writes n with comma thousands separators, whatever the reader's
  // locale: 32,767.
  function count(n) {
    const s = String(Math.trunc(Math.abs(Number(n))));
    let out = "";
    for (let i = 0; i < s.length; i++) {
      if (i > 0 && (s.length - i) % 3 === 0) out += ",";
      out += s[i];
    }
    return (Number(n) < 0 ? "-" : "") + out;
  }
  // plural writes n and the noun that agrees with it: "1 batch", "0 batches".
  function plural(n, one, many) { return count(n) + " " + (n === 1 || n === -1 ? one : many); }
  // duration writes ms milliseconds in at most two units, the smaller left
  // out when zero, rounded to the second and then each unit truncated:
  // 850ms, 42s, 20m, 20m 5s, 27h 46m, 339d 1h. Hours run to 48.
  function duration(ms) {
    ms = Math.trunc(Number(ms));
    if (!(ms > 0)) return "0s";
    if (ms < 1000) return ms + "ms";
    const s = Math.floor((ms + 500) / 1000);
    const two = (big, bu, small, su) => count(big) + bu + (small ? " " + small + su : "");
    if (s < 60) return s + "s";
    if (s < 3600) return two(Math.floor(s / 60), "m", s % 60, "s");
    if (s < 48 * 3600) return two(Math.floor(s / 3600), "h", Math.floor(s % 3600 / 60), "m");
    return two(Math.floor(s / 86400), "d", Math.floor(s % 86400 / 3600), "h");
  }
  // verdict is a verdict's name ("before_position") in the words the pages
  // use ("before the position"), from the contract (contract.js, on the
  // pages that have a timeline); reason is the engine's reason with its
  // leading verdict name so put ("before_position: below the fetch
  // position 7" reads "before the position: below …").
  function verdict(name) {
    const C = window.txnscopeContract, i = C ? C.VERDICTS.indexOf(name) : -1;
    return i >= 0 ? C.VERDICT_WORDS[i] : name;
  }
  function reason(text) {
    const m = /^([a-z]+(?:_[a-z]+)+): /.exec(text || "");
    return m && verdict(m[1]) !== m[1] ? verdict(m[1]) + text.slice(m[1].length) : text;
  }
  window.txnscopeFormat = Object.freeze({ count, plural, duration, verdict, reason });
})();
