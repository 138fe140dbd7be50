// The kiosk user's name: one small form on every kiosk page, remembered in localStorage.
// Shared by index.html and panel.html; exposes window.KioskName.
"use strict";

window.KioskName = (() => {
  const KEY = "buttonarbiter.name";
  // PROTOCOL.md section 2: names match [A-Za-z0-9_.-]{1,32}. Checked here too, so a
  // bad name never reaches ?name= (the server would answer bad-syntax and keep guest-N).
  const PATTERN = /^[A-Za-z0-9_.-]{1,32}$/;

  function get() {
    try {
      const value = localStorage.getItem(KEY) || "";
      return PATTERN.test(value) ? value : "";
    } catch (_) {
      return "";  // storage can be off (private mode, kiosk policies): work without it
    }
  }

  function store(name) {
    try { localStorage.setItem(KEY, name); } catch (_) { /* see get() */ }
  }

  /// Wires a <form> with one <input>: prefilled from storage; on submit a valid name is
  /// stored and handed to onName(name); an invalid one is reported in `note`.
  function bindForm(form, input, note, onName) {
    input.value = get();
    // The pattern attribute is compiled with the "v" flag, where a bare "-" in a class is
    // a syntax error: escaped here.
    input.setAttribute("pattern", "[A-Za-z0-9_.\\-]{1,32}");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!PATTERN.test(name)) {
        note.textContent = "Names use letters, digits, . _ - (at most 32).";
        note.setAttribute("data-bad", "");
        return;
      }
      note.removeAttribute("data-bad");
      store(name);
      note.textContent = "";
      onName(name);
    });
  }

  return { get, store, bindForm, valid: (name) => PATTERN.test(name) };
})();
