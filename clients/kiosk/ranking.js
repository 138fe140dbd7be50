// The full ranking of a buzzer round, on demand (docs/PROTOCOL-NOTES.md, "A full hall:
// announce and RANKING"). Members are told only a group's first `announce` places as
// they happen; a hall of hundreds of players needs the whole table once the round is
// done, so the page asks for it with RANKING and shows the answer (ROUND, one RANK per
// place, OK RANKING) in a dialog: a real table, large enough to read across a room,
// scrolling inside the dialog and never the page.
//
// Like the rest of the kiosk it shows only what the server answered, with the time of
// the answer: it is asked again when the dialog opens, on Refresh, when the page is live
// again, and when the group's round opens, is won, closes or tells a place (the presses
// after `announce` are told to nobody, so the table can be older than the round: the
// time says so).
"use strict";

window.KioskRanking = (() => {
  /**
   * send(command) -> id or null (not connected); labelOf(buttonId) -> the button's shown
   * label; mySession() -> this page's session; clock(Date) -> "HH:MM:SS".
   */
  function create({ panel, send, labelOf, mySession, clock }) {
    const $ = (id) => document.getElementById(id);
    const dialog = $("ranking");
    const rows = $("ranking-rows");
    const status = $("ranking-status");
    const refreshButton = $("ranking-refresh");
    /** The group shown, the button that opened it, the RANKING awaiting its answer. */
    let group = null;
    let opener = null;
    let pending = null;
    let again = false;
    let shown = null;   // { state, count, at } of the table on screen

    function open(g, from) {
      group = g;
      opener = from;
      $("ranking-title").textContent = `Full ranking · ${g}`;
      rows.replaceChildren();
      shown = null;
      pending = null;
      if (!dialog.open) dialog.showModal();
      refresh();
    }

    function close() {
      if (dialog.open) dialog.close();
    }

    // Escape and the Close button both come here: focus goes back where it came from.
    dialog.addEventListener("close", () => {
      group = null;
      pending = null;
      again = false;
      if (opener && opener.isConnected) opener.focus();
    });
    $("ranking-close").addEventListener("click", close);
    refreshButton.addEventListener("click", () => refresh());

    /** Asks for the table now, or once the answer under way is in. */
    function refresh() {
      if (!group) return;
      if (pending) { again = true; return; }
      const id = send({ cmd: "ranking", panel, group });
      if (!id) {
        setStatus(shown ? `Not connected · ${describe(shown)}` : "Not connected: the table comes once the page is live again.");
        return;
      }
      pending = { id, state: null, places: [] };
      if (!shown) setStatus("Asking the server…");
      dialog.dataset.loading = "1";
    }

    function setStatus(text) {
      if (status.textContent !== text) status.textContent = text;
    }

    function describe(t) {
      const round = { armed: "Round open, nobody has buzzed yet", won: "Round on", closed: "Round closed" }[t.state] || "Round";
      const places = t.count === 1 ? "1 place" : `${t.count} places`;
      const what = t.state === "closed" && t.count > 0 ? `the last round's ${places}` : places;
      return `${round} · ${what} · as of ${t.at}`;
    }

    /** A message answering this page's RANKING: taken (true), or not ours (false). */
    function take(m) {
      if (!pending || m.id !== pending.id) return false;
      if (m.type === "round") pending.state = m.state;
      else if (m.type === "rank") pending.places.push(m);
      else if (m.type === "ok") finish(m);
      else if (m.type === "error") failed(m);
      return true;
    }

    function finish(ok) {
      const answer = pending;
      pending = null;
      delete dialog.dataset.loading;
      const fragment = document.createDocumentFragment();
      const me = mySession();
      // The server sends them winner first; sorted anyway, the rank is the table's order.
      answer.places.sort((a, b) => a.rank - b.rank);
      for (const p of answer.places) {
        const tr = document.createElement("tr");
        tr.dataset.rank = String(p.rank);
        const mine = p.session === me;
        if (mine) tr.dataset.mine = "1";
        tr.append(
          cell("th", String(p.rank), "rank"),
          cell("td", mine ? `${p.name} (you)` : p.name, "name"),
          cell("td", labelOf(p.button), "button"),
          cell("td", p.rank === 1 ? "first" : `+${(p.after_us / 1000).toFixed(1)} ms`, "after"));
        tr.firstChild.scope = "row";
        fragment.append(tr);
      }
      rows.replaceChildren(fragment);
      shown = { state: answer.state, count: ok.ranked, at: clock(new Date()) };
      dialog.dataset.state = answer.state || "";
      setStatus(describe(shown));
      if (again) { again = false; refresh(); }
    }

    function failed(m) {
      pending = null;
      again = false;
      delete dialog.dataset.loading;
      const why = m.code === "forbidden" ? "this panel needs a view key"
        : m.code === "unavailable" ? "the panel has no leader right now; try Refresh in a moment"
        : m.message || m.code;
      setStatus(`Not available: ${why}`);
    }

    function cell(tag, text, className) {
      const el = document.createElement(tag);
      el.className = className;
      el.textContent = text;
      return el;
    }

    return {
      open,
      take,
      /** The group's round moved (ARMED, its winner, a BUZZED, CLOSED). */
      roundChanged(g) { if (g === group) refresh(); },
      /** The page is live again after a disconnect: its answer, if any, went with it. */
      live() { pending = null; if (group) refresh(); },
      offline() {
        pending = null;
        delete dialog.dataset.loading;
        if (group) setStatus(shown ? `Not connected · ${describe(shown)}` : "Not connected.");
      },
    };
  }

  return { create };
})();
