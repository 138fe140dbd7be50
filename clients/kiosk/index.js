// The panel list at "/": every panel from /api/panels with its member count, each
// linking to /panel/<id>, and in cluster mode the node leading it. Refreshed every few
// seconds while the page is visible.
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

  /** panel id -> its <li> and the parts that change. */
  const items = new Map();
  let empty = null;

  // The server wrote the list into the HTML (it works without JavaScript): those items
  // are taken over and updated in place, not drawn a second time.
  for (const li of list.querySelectorAll("li[data-panel]")) {
    const a = li.querySelector("a.panel-link");
    const title = li.querySelector(".panel-title");
    const meta = li.querySelector(".panel-meta");
    if (a && title && meta) items.set(li.dataset.panel, { li, a, title, meta });
  }

  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function item(panel) {
    let entry = items.get(panel.id);
    if (!entry) {
      const li = document.createElement("li");
      li.dataset.panel = panel.id;
      const a = document.createElement("a");
      a.className = "panel-link";
      const title = document.createElement("span");
      title.className = "panel-title";
      const meta = document.createElement("span");
      meta.className = "panel-meta";
      a.append(title, meta);
      li.append(a);
      entry = { li, a, title, meta };
      items.set(panel.id, entry);
    }
    const href = `/panel/${encodeURIComponent(panel.id)}`;
    if (entry.a.getAttribute("href") !== href) entry.a.setAttribute("href", href);
    setText(entry.title, panel.title || panel.id);
    const held = panel.buttons.filter((b) => b.state === "pressed").length;
    // A private panel still links to its page, which asks for the key.
    setText(entry.meta, panel.private ? `${panel.id} · needs a view key` :
      `${panel.id} · ${plural(panel.members, "member")} · ` +
      `${plural(panel.buttons.length, "button")}${held ? ` · ${held} held` : ""}` +
      // Cluster mode only: the node deciding the panel (null while a failover is under way).
      `${typeof panel.leader === "string" ? ` · led by ${panel.leader}` : ""}`);
    if (panel.private) {
      entry.meta.removeAttribute("data-members");
    } else if (entry.meta.dataset.members !== String(panel.members)) {
      entry.meta.dataset.members = String(panel.members);
    }
    return entry.li;
  }

  /**
   * Updates the list in place, keyed by panel id: an unchanged refresh touches nothing,
   * so keyboard focus stays on its link and assistive technology hears nothing. Nodes
   * move only when the order really changed (moving a node drops its focus).
   */
  function render(panels) {
    const wanted = panels.map(item);
    const ids = new Set(panels.map((panel) => panel.id));
    for (const [id, entry] of items) {
      if (!ids.has(id)) {
        entry.li.remove();
        items.delete(id);
      }
    }
    if (wanted.length === 0) {
      if (!empty) {
        empty = document.createElement("li");
        empty.textContent = "This server has no panels.";
      }
      wanted.push(empty);
    } else if (empty) {
      empty.remove();
      empty = null;
    }
    wanted.forEach((li, index) => {
      if (list.children[index] !== li) list.insertBefore(li, list.children[index] || null);
    });
    while (list.children.length > wanted.length) list.lastElementChild.remove();
    if (list.getAttribute("aria-busy") !== "false") list.setAttribute("aria-busy", "false");
  }

  let timer = null;
  let refreshes = 0;
  async function refresh() {
    clearTimeout(timer);
    refreshes += 1;
    try {
      const response = await fetch("/api/panels", { cache: "no-store" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body = await response.json();
      render(body.panels || []);
      banner.hidden = true;
    } catch (error) {
      // role=alert: the same words again every 5 s would be announced again.
      setText(banner, `Server unreachable (${error.message}); retrying…`);
      banner.hidden = false;
    }
    if (!document.hidden) timer = setTimeout(refresh, REFRESH_MS);
  }

  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  // For the browser test (Tests/browser): a refresh now, as the timer would make it.
  window.kioskDebug = { refresh, refreshes: () => refreshes };
  refresh();
})();
