// The panel list at "/": every panel from /api/panels with its member count, each
// linking to /panel/<id>. Refreshed every few seconds while the page is visible.
"use strict";

(() => {
  if (!window.KioskName) return;  // name.js failed to load: index.html's guard reloads
  const list = document.getElementById("panels");
  const banner = document.getElementById("banner");
  const REFRESH_MS = 5000;

  KioskName.bindForm(
    document.getElementById("name-form"),
    document.getElementById("name-input"),
    document.getElementById("name-note"),
    (name) => { document.getElementById("name-note").textContent = `Saved: panels open as ${name}.`; });

  function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

  function render(panels) {
    const items = panels.map((panel) => {
      const li = document.createElement("li");
      li.dataset.panel = panel.id;
      const a = document.createElement("a");
      a.className = "panel-link";
      a.href = `/panel/${encodeURIComponent(panel.id)}`;
      const title = document.createElement("span");
      title.className = "panel-title";
      title.textContent = panel.title || panel.id;
      const meta = document.createElement("span");
      meta.className = "panel-meta";
      const held = panel.buttons.filter((b) => b.state === "pressed").length;
      meta.textContent = panel.private ? `${panel.id} · needs a view key` :
        `${panel.id} · ${plural(panel.members, "member")} · ` +
        `${plural(panel.buttons.length, "button")}${held ? ` · ${held} held` : ""}`;
      if (!panel.private) meta.dataset.members = String(panel.members);
      a.append(title, meta);
      li.append(a);
      return li;
    });
    if (items.length === 0) {
      const li = document.createElement("li");
      li.textContent = "This server has no panels.";
      items.push(li);
    }
    list.replaceChildren(...items);
    list.setAttribute("aria-busy", "false");
  }

  let timer = null;
  async function refresh() {
    clearTimeout(timer);
    try {
      const response = await fetch("/api/panels", { cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body = await response.json();
      render(body.panels || []);
      banner.hidden = true;
    } catch (error) {
      banner.textContent = `Server unreachable (${error.message}); retrying…`;
      banner.hidden = false;
    }
    if (!document.hidden) timer = setTimeout(refresh, REFRESH_MS);
  }

  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  refresh();
})();
