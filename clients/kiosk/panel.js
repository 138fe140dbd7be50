// The kiosk page of one panel (/panel/<id>): its buttons, as the server sees them.
//
// One rule shapes this file: the server is the single source of truth. The page sends
// DOWN/UP/CANCEL for what the fingers do and draws only what the server says (the JOIN
// snapshot and the events after it). It never lights a button, fills a ring, starts or
// stops a talk, or decides a fire on its own. The field reports behind this rule: an
// emergency hold whose ring filled but did not fire (ring and firing came from two
// sources), a press-to-talk that stopped itself at 0.35 s (a timer, not the finger, ended
// it), and exclusive buttons that both lit when pressed at once (each lit itself).
"use strict";

(() => {
  // name.js or ranking.js failed to load: the inline guard in panel.html is reloading the page.
  if (!window.KioskName || !window.KioskRanking) return;
  const panelId = decodeURIComponent(location.pathname.split("/")[2] || "");
  const $ = (id) => document.getElementById(id);

  // Reconnect backoff: 0.5 s doubling to 10 s, each wait drawn from [half, full] of its
  // step so that a room of kiosks does not reconnect in lockstep after a restart.
  const BACKOFF_BASE_MS = 500;
  const BACKOFF_MAX_MS = 10000;
  // Browsers hide WebSocket ping frames from pages, so a half-open socket (a wall tablet
  // whose Wi-Fi went away) would look live forever: after this much silence the page
  // sends a PING command, and after twice as much it gives the socket up.
  const QUIET_MS = 15000;
  // How long the FIRED flash stays. A presentation timer only: the fire itself already
  // happened on the server, this just decides how long the word stays on screen.
  const FIRED_FLASH_MS = { hold: 2000, tap: 700 };
  const DENIED_NOTE_MS = 1500;

  // ---------------------------------------------------------------- server state

  /** id -> button: config (label, kind, group) plus the server's current word on it. */
  const buttons = new Map();
  const view = {
    title: panelId,
    members: 0,
    seq: 0,          // last event seq applied, or the seq the snapshot contains
    live: false,     // a snapshot has been applied on the current socket
    resyncing: false,
    session: null,   // from WELCOME
    name: null,      // from WELCOME / OK HELLO
    snapshots: 0,    // snapshots applied (for the browser test and for curiosity)
  };
  let snapshotLines = [];

  // ---------------------------------------------------------------- fair groups

  /**
   * Queue and buzzer groups (docs/PROTOCOL-NOTES.md, "Fair groups"), as the server tells
   * them: group -> policy; group -> the line, [{ button, name, session }] in order;
   * group -> the round, { state: "closed" | "armed" | "won", ranking: [{ button, name,
   * session, rank, after_us }], mine: { rank, after_us } of this page's own RANKED }.
   * Rebuilt from each snapshot, then kept by the events. Members are told only the
   * group's first `announce` places; the rest of the table is asked for (ranking.js).
   */
  const fair = { policies: new Map(), lines: new Map(), rounds: new Map() };
  let snapshotFair = { waiting: [], rounds: [], ranks: [] };
  // The host page (?host) shows ARM and RESET for buzzer groups when this session is admin.
  const hostMode = new URLSearchParams(location.search).has("host");

  // ---------------------------------------------------------------- local presses

  /**
   * buttonId -> { sources: Set of "p<pointerId>" / "key:<code>", status: "pending" |
   * "granted" | "denied", fence, downId }. One press per button however many fingers or
   * keys are on it; it ends when the last of them lifts.
   */
  const presses = new Map();
  /** buttonId -> fence of a grant this session got and has not seen released. */
  const myGrants = new Map();

  // ---------------------------------------------------------------- keys

  // A panel's view/press/admin levels may need a key; a session presents ONE key with
  // HELLO (docs/PROTOCOL-NOTES.md, "Sessions, keys, roles"). A key the server accepted is
  // kept for this panel in sessionStorage, never localStorage: on a shared kiosk it must
  // not outlive the browser session. Reconnects present it again.
  const KEY_STORE = `buttonarbiter.key.${panelId}`;
  const keys = {
    need: null,        // what the prompt is asking for: "view" | "press" | null (hidden)
    hello: null,       // { id, key, typed } of the keyed HELLO awaiting its reply
    presented: false,  // this socket's session presented a key the server accepted
    rejoin: false,     // a JOIN after an accepted key is under way
    focusButton: null, // the button whose press asked for the key: focus goes back to it
    staleNote: "",     // why the prompt shows although a key was kept (it stopped working)
  };

  function storedKey() {
    try { return sessionStorage.getItem(KEY_STORE) || ""; } catch (_) { return ""; }
  }

  function storeKey(key) {
    try { sessionStorage.setItem(KEY_STORE, key); } catch (_) { /* works for this socket only */ }
  }

  function forgetKey() {
    try { sessionStorage.removeItem(KEY_STORE); } catch (_) { /* nothing stored */ }
  }

  // ---------------------------------------------------------------- connection

  let ws = null;
  /** Id of the button that had focus when the connection dropped, until it is live again. */
  let focusWhenLive = null;
  let attempt = 0;
  let reconnectTimer = null;
  let lastHeard = 0;
  let nextId = 1;
  /** command id -> command, until its reply arrives. */
  const inFlight = new Map();

  // ---------------------------------------------------------------- cluster nodes

  // Cluster mode (docs/CLUSTER.md): every node serves every panel, and /api/nodes lists
  // them ({"self":"n1","nodes":[{"node":"n1","address":"10.0.0.11:7070"}, ...]}; a single
  // node answers an empty list). When this page's node goes away (its socket closed and
  // the first reconnect to it failed) the page moves to another node of the list by
  // itself. Another node is another origin, so the move is a navigation to that node's
  // own page of this panel, not a socket opened across origins (the server's Origin check
  // would refuse it, and rightly so).
  const cluster = { self: null, nodes: [] };

  async function fetchNodes() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 3000);
    try {
      const response = await fetch("/api/nodes", { cache: "no-store", signal: abort.signal });
      if (!response.ok) return;  // a server without cluster mode: keep today's behaviour
      const body = await response.json();
      cluster.self = typeof body.self === "string" ? body.self : null;
      cluster.nodes = Array.isArray(body.nodes)
        ? body.nodes.filter((n) => n && typeof n.node === "string" && typeof n.address === "string")
        : [];
    } catch (_) {
      // Unreachable or not JSON: the last list known stays.
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether a node answers at all: an opaque no-cors answer is enough to know it is up. */
  async function reachable(address) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 2000);
    try {
      await fetch(`${location.protocol}//${address}/healthz`, { mode: "no-cors", cache: "no-store", signal: abort.signal });
      return true;
    } catch (_) {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Moves the page to another node that answers; false when there is none. */
  async function moveToAnotherNode() {
    const others = cluster.nodes.filter((n) => n.node !== cluster.self && n.address !== location.host);
    if (others.length === 0) return false;
    // A random first choice, so a room of kiosks spreads over the nodes that are left.
    const start = Math.floor(Math.random() * others.length);
    for (let i = 0; i < others.length; i += 1) {
      const next = others[(start + i) % others.length];
      showBanner(`Node ${cluster.self || location.host} went away: trying node ${next.node}…`);
      if (!(await reachable(next.address))) continue;
      const target = new URL(`${location.protocol}//${next.address}/panel/${encodeURIComponent(panelId)}`);
      if (hostMode) target.searchParams.set("host", "");
      target.searchParams.set("moved_to", next.node);
      if (cluster.self) target.searchParams.set("moved_from", cluster.self);
      // The name lives in this origin's storage; the new origin learns it from the URL.
      const name = KioskName.get();
      if (name) target.searchParams.set("name", name);
      location.replace(target.href);
      return true;
    }
    return false;
  }

  /** After a move: say so, keep the name, and take the move's words out of the address. */
  function arrivedFromAnotherNode() {
    const params = new URLSearchParams(location.search);
    const to = params.get("moved_to");
    if (to === null) return;
    const from = params.get("moved_from");
    const name = params.get("name");
    if (name && KioskName.valid(name) && !KioskName.get()) KioskName.store(name);
    const moved = $("moved");
    moved.textContent = `Moved to node ${to}${from ? `: node ${from} went away` : ""} at ${clock(new Date())}.`;
    moved.hidden = false;
    for (const key of ["moved_to", "moved_from", "name"]) params.delete(key);
    const search = params.toString().replace(/=(&|$)/g, "$1");
    history.replaceState(null, "", `${location.pathname}${search ? `?${search}` : ""}`);
  }

  function setConn(state, text) {
    const conn = $("conn");
    conn.dataset.conn = state;
    conn.textContent = text;
    document.body.dataset.conn = state;
    const banner = $("banner");
    if (state === "live" || state === "key") {
      banner.hidden = true;  // for "key" the key prompt says what is wrong
    } else if (state === "offline") {
      banner.hidden = false;
    }
  }

  function showBanner(text) {
    const banner = $("banner");
    banner.textContent = text;
    banner.hidden = false;
  }

  async function fetchPanel() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 5000);
    try {
      // A kept key comes along, so a private panel is listed with its labels.
      const key = storedKey();
      const headers = key ? { Authorization: `Bearer ${key}` } : {};
      const response = await fetch("/api/panels", { cache: "no-store", signal: abort.signal, headers });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body = await response.json();
      return (body.panels || []).find((p) => p.id === panelId) || null;
    } finally {
      clearTimeout(timer);
    }
  }

  async function connect() {
    reconnectTimer = null;
    setConn("connecting", "connecting…");
    // Labels and kinds come from /api/panels (the snapshot's BUTTON lines carry none);
    // fetched on every connect because a restarted server may have a new config.
    let panel;
    try {
      panel = await fetchPanel();
    } catch (error) {
      // A node that went away, crashed or shut down: another node of the cluster serves the panel.
      if ((offline.why === "lost" || offline.why === "shutdown") && (await moveToAnotherNode())) return;
      return retry(offline.why === "shutdown"
        ? `Disconnected: the server shut down at ${clock(offline.at)} and is not back yet.`
        : "Disconnected: the server is unreachable.");
    }
    if (!panel) return retry(`Disconnected: this server has no panel "${panelId}".`);
    fetchNodes();
    // A private panel is listed without its buttons: they are built from the JOIN
    // snapshot once a key lets this page in, and kept over reconnects.
    if (panel.private) showTitle(panel);
    else build(panel);

    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const name = KioskName.get();
    // With a key for this panel the page connects without ?panel= (that JOIN would come
    // before the key): WELCOME, then HELLO with the key, then JOIN.
    const key = storedKey();
    const query = new URLSearchParams();
    if (!key) query.set("panel", panelId);
    if (name) query.set("name", name);
    const search = query.toString();
    const url = `${scheme}//${location.host}/ws${search ? `?${search}` : ""}`;
    const socket = new WebSocket(url);
    ws = socket;
    lastHeard = Date.now();
    socket.onmessage = (event) => {
      if (ws !== socket) return;
      lastHeard = Date.now();
      let message;
      try { message = JSON.parse(event.data); } catch (_) { return; }
      onMessage(message);
    };
    // Close code 1001 is the server's goodbye at a clean shutdown (SIGTERM/SIGINT); any
    // other end (1006: no close frame) means the connection was lost.
    socket.onclose = (event) => { if (ws === socket) dropped(event.code === 1001 ? "shutdown" : "lost"); };
  }

  /** Why and when the page went offline, for the banner while it tries to reconnect. */
  const offline = { why: null, at: null };

  /** "08:53:14": wall-clock time as kiosks show it. */
  function clock(date) {
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  }

  /**
   * The socket is gone (`why`: "shutdown" for the server's clean goodbye, else "lost"):
   * the server released whatever this session held.
   */
  function dropped(why = "lost") {
    // Buttons are disabled while offline, which drops their focus to <body>: the focused
    // one is remembered and gets it back when the panel is live again.
    const active = document.activeElement;
    if (active && active.classList.contains("btn") && active.dataset.button) {
      focusWhenLive = active.dataset.button;
    }
    if (ws) {
      const old = ws;
      ws = null;
      try { old.close(); } catch (_) { /* already closing */ }
    }
    view.live = false;
    view.resyncing = false;
    if (keys.hello && keys.hello.typed) keyNote("Disconnected before the key was checked: enter it again.", true);
    keys.hello = null;
    keys.presented = false;
    keys.rejoin = false;
    snapshotLines = [];
    presses.clear();
    myGrants.clear();
    inFlight.clear();
    for (const b of buttons.values()) {
      Object.assign(b, { state: "offline", owner: null, ownerSession: null, progress: 0, midway: false });
      b.el.dataset.fired = "0";
    }
    view.name = null;  // the session is gone, and its name with it
    renderWho();
    renderAll();
    ranking.offline();
    offline.why = why;
    offline.at = new Date();
    document.body.dataset.offline = why;
    tick(why === "shutdown" ? "the server shut down" : why === "unavailable" ? "the panel is unavailable" : "connection to the server lost");
    retry(why === "shutdown"
      ? `Disconnected: the server shut down at ${clock(offline.at)} (a clean shutdown; ` +
        "whatever was held was released). Buttons are off until it is back."
      : why === "unavailable"
        ? `The panel is unavailable since ${clock(offline.at)}: no node can decide for it right now ` +
          "(its leader is changing, or the cluster lost its majority). Buttons are off until it is back."
        : `Disconnected: lost the connection at ${clock(offline.at)}; the server is unreachable. ` +
          "Buttons are off until it is back.");
  }

  function retry(text) {
    clearTimeout(reconnectTimer);
    const step = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
    attempt += 1;
    const delay = Math.round(step / 2 + Math.random() * step / 2);
    setConn("offline", "disconnected");
    showBanner(`${text} Reconnecting in ${(delay / 1000).toFixed(1)} s (attempt ${attempt}).`);
    reconnectTimer = setTimeout(connect, delay);
  }

  /** Skip the rest of the wait (network back, page shown again). */
  function reconnectNow() {
    if (reconnectTimer !== null) {
      clearTimeout(reconnectTimer);
      connect();
    }
  }

  function send(command) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return null;
    const id = `k${nextId++}`;
    command.id = id;
    inFlight.set(id, command);
    ws.send(JSON.stringify(command));
    return id;
  }

  setInterval(() => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const quiet = Date.now() - lastHeard;
    if (quiet > 2 * QUIET_MS) {
      dropped("lost");
    } else if (quiet > QUIET_MS) {
      send({ cmd: "ping", token: "hb" });
    }
  }, QUIET_MS / 3);

  // ---------------------------------------------------------------- messages

  function onMessage(m) {
    switch (m.type) {
      case "welcome": {
        view.session = m.session;
        view.name = m.name;
        renderWho();
        const key = storedKey();
        if (key) sendKey(key, false);
        // The host page needs this session's role: HELLO answers with it.
        else if (hostMode) send({ cmd: "hello", name: view.name });
        return;
      }
      case "waiting":
      case "round":
      case "rank":
        if (ranking.take(m)) return;  // the answer to this page's RANKING
        // The snapshot's lines of queue and buzzer groups, applied with OK JOIN.
        if (m.panel === panelId) snapshotFair[`${m.type === "rank" ? "ranks" : m.type === "round" ? "rounds" : "waiting"}`].push(m);
        return;
      case "queued":
        if (typeof m.seq === "number") { if (m.panel === panelId) onEvent(m); } else onQueued(m);
        return;
      case "ranked":
        onRanked(m);
        return;
      case "button":
        // One BUTTON line per button, then OK JOIN: collected, applied all at once.
        if (m.panel === panelId) snapshotLines.push(m);
        return;
      case "ok":
        inFlight.delete(m.id);
        if (m.re === "ranking") ranking.take(m);
        if (m.re === "join" && m.panel === panelId) applySnapshot(m);
        if (m.re === "hello") {
          view.name = m.name;
          view.role = m.role;
          renderWho();
          renderAll();
          if (keys.hello && keys.hello.id === m.id) keyAccepted();
        }
        return;
      case "granted":
        onGranted(m);
        return;
      case "denied":
        onDenied(m);
        return;
      case "error":
        onError(m);
        return;
      case "pong":
        inFlight.delete(m.id);
        return;
      case "record":
        if (m.panel === panelId) onRecord(m);
        return;
      case "dequeued":
        if (typeof m.seq !== "number") {
          // Cluster mode: this page's place in a queue's line went with the old leader's
          // term (reason=failover, outside the seq chain, to the waiter alone). No hand-off
          // will come and there is nothing to release: pressing again joins the new line.
          if (m.panel === panelId) {
            const press = presses.get(m.button);
            if (press && press.status === "queued") press.status = "denied";
            tick(`${labelOf(m.button)}: your place in line ended (${m.reason || "failover"})`);
            announce(`${labelOf(m.button)}: your place in line ended with a failover; press again.`);
          }
          return;
        }
        if (m.panel === panelId) onEvent(m);
        return;
      case "released":
        if (typeof m.seq !== "number") {
          // Cluster mode: a grant of the old leader's term ended (reason=failover),
          // outside the seq chain; the new term's snapshot comes next and redraws.
          if (m.panel === panelId) {
            myGrants.delete(m.button);
            tick(`${labelOf(m.button)} released: ${m.reason || "failover"}`);
          }
          return;
        }
        if (m.panel === panelId) onEvent(m);
        return;
      default:
        if (typeof m.seq === "number" && m.panel === panelId) onEvent(m);
    }
  }

  function applySnapshot(ok) {
    if (snapshotLines.length !== buttons.size || snapshotLines.some((line) => !buttons.has(line.button))) {
      // A private panel: /api/panels names no buttons, so the snapshot's BUTTON lines
      // (id, kind, group; no label) are all this page knows.
      build({ id: panelId, title: view.title,
              buttons: snapshotLines.map((line) => ({ id: line.button, kind: line.kind, group: line.group })) });
    }
    for (const line of snapshotLines) {
      const b = buttons.get(line.button);
      if (!b) continue;  // not in /api/panels: cannot be, within one server run
      b.state = line.state;
      b.owner = line.owner === "-" ? null : line.owner;
      b.ownerSession = null;  // the snapshot names owners, not sessions
      b.progress = b.kind === "hold" && line.state === "pressed" ? line.progress : 0;
      b.midway = b.kind === "hold" && b.progress >= 0.5;
      if (b.kind === "talk") {
        b.talk = line.state === "pressed" ? "held" : (b.talk === "pressed" || b.talk === "talking" ? "idle" : b.talk);
      }
    }
    fair.policies.clear();
    for (const line of snapshotLines) if (line.policy) fair.policies.set(line.group, line.policy);
    fair.lines.clear();
    for (const w of snapshotFair.waiting) {
      const group = buttons.get(w.button)?.group;
      if (!group) continue;
      if (!fair.lines.has(group)) fair.lines.set(group, []);
      fair.lines.get(group).push({ button: w.button, name: w.name, session: w.session });
    }
    fair.rounds.clear();
    for (const r of snapshotFair.rounds) fair.rounds.set(r.group, { state: r.state, ranking: [] });
    for (const r of snapshotFair.ranks) {
      const round = fair.rounds.get(buttons.get(r.button)?.group);
      if (round) round.ranking.push({ button: r.button, name: r.name, session: r.session, rank: r.rank, after_us: r.after_us });
    }
    snapshotFair = { waiting: [], rounds: [], ranks: [] };
    snapshotLines = [];
    view.seq = ok.seq;
    view.members = ok.members;
    view.live = true;
    view.resyncing = false;
    view.snapshots += 1;
    attempt = 0;
    if (offline.why) tick("connected again");
    offline.why = null;
    delete document.body.dataset.offline;
    setConn("live", "live");
    askHistory();
    renderAll();
    if (keys.rejoin || keys.need === "view") hideKeyPrompt();
    keys.rejoin = false;
    restoreFocus();
    ranking.live();
  }

  /** Focus back on the button that had it before a disconnect, unless the user has
   *  moved on to something else meanwhile. */
  function restoreFocus() {
    const id = focusWhenLive;
    focusWhenLive = null;
    if (id === null) return;
    const el = document.getElementById(`button-${id}`);
    const active = document.activeElement;
    if (el && !el.disabled && (!active || active === document.body || active === el)) {
      el.focus({ preventScroll: true });
    }
  }

  /** Events are applied strictly in seq order; a gap means something was missed. */
  function onEvent(m) {
    if (!view.live || view.resyncing) return;  // the coming snapshot contains it
    if (m.seq <= view.seq) return;             // the snapshot already contains it
    if (m.seq !== view.seq + 1) {
      // PROTOCOL.md section 5: a member that sees a gap JOINs again for a fresh snapshot
      // (no new JOINED; the snapshot's seq is the last event it contains).
      view.resyncing = true;
      snapshotLines = [];
      snapshotFair = { waiting: [], rounds: [], ranks: [] };
      send({ cmd: "join", panel: panelId });
      return;
    }
    view.seq = m.seq;
    applyEvent(m);
    renderAll();
  }

  function applyEvent(m) {
    if (m.type === "armed" || m.type === "closed") {
      fair.rounds.set(m.group, { state: m.type === "armed" ? "armed" : "closed", ranking: [] });
      ranking.roundChanged(m.group);
      return;
    }
    applyFairEvent(m);
    const b = buttons.get(m.button);
    switch (m.type) {
      case "joined":
        // Our own JOINED follows a snapshot that already counted us.
        if (m.session !== view.session) view.members += 1;
        return;
      case "left":
        view.members = Math.max(0, view.members - 1);
        return;
      case "presence":
        // A large panel tells joins and leaves as counts, with the count after them.
        view.members = m.members;
        return;
    }
    if (!b) return;
    switch (m.type) {
      case "pressed":
        b.state = "pressed";
        b.owner = m.owner;
        b.ownerSession = m.session;
        b.progress = 0;
        b.midway = false;
        clearFlash(b);
        if (b.kind === "talk") { b.talk = "pressed"; b.talkText = ""; }
        tick(`${m.owner} pressed ${b.shown}`);
        for (const other of groupOf(b)) {
          if (other !== b) { other.state = "locked"; other.owner = m.owner; }
        }
        return;
      case "progress":
        // The ring's only input. value=1.000 arrives only as the first completion event.
        b.progress = m.value;
        return;
      case "midway":
        b.midway = true;
        if (isMine(b)) vibrate(40);
        return;
      case "fired":
        if (b.kind === "hold") b.progress = 1;
        if (b.kind === "hold" && m.session === view.session) announce(`${b.label}: fired.`);
        b.firedBy = m.owner;
        // Remembered now: RELEASED reason=fired follows at once and clears the owner.
        b.firedMine = isMine(b);
        if (b.kind === "hold") {
          // Kept until the next fire (a tap fires at every press: no news).
          b.lastFired = { owner: m.owner, at: new Date(), mine: b.firedMine };
          tick(`${b.shown} fired by ${m.owner}`);
        }
        flash(b);
        if (isMine(b)) vibrate([60, 40, 60]);
        return;
      case "tapped":
        b.talk = "tapped";
        b.talkText = `${m.owner}: quick tap`;
        return;
      case "started":
        b.talk = "talking";
        tick(`${m.owner} talking on ${b.shown}`);
        if (m.session === view.session) announce(`${b.label}: talking.`);
        return;
      case "stopped": {
        b.talk = "stopped";
        const seconds = (m.held_ms / 1000).toFixed(2);
        const why = m.reason === "timeout" ? " (time limit)" : "";
        b.talkText = m.discarded
          ? `${m.owner} stopped · ${seconds} s · discarded (too short)`
          : `${m.owner} stopped · ${seconds} s${why}`;
        b.heldMs = m.held_ms;
        b.discarded = m.discarded;
        if (m.session === view.session) {
          announce(`${b.label}: talk stopped after ${seconds} seconds${m.discarded ? ", too short, discarded" : ""}.`);
        }
        return;
      }
      case "cancelled":
        b.talk = "cancelled";
        b.talkText = `${m.owner}: talk cancelled`;
        if (m.session === view.session) announce(`${b.label}: talk cancelled.`);
        return;
      case "released":
        // The ordinary ends (the finger lifted, the hold fired) are not news of their own.
        if (m.reason !== "up" && m.reason !== "fired") tick(`${b.shown} released (${m.reason})`);
        b.state = "idle";
        b.owner = null;
        b.ownerSession = null;
        for (const other of groupOf(b)) {
          if (other !== b && other.state === "locked") { other.state = "idle"; other.owner = null; }
        }
        if (myGrants.get(b.id) === m.fence) myGrants.delete(b.id);
        if (b.kind === "hold" && m.reason !== "fired") {
          // An early release: the ring empties at once (the server sends no PROGRESS 0).
          b.progress = 0;
          b.midway = false;
        }
        if (b.kind === "talk" && (b.talk === "pressed" || b.talk === "held")) {
          // Released before STARTED with no TAPPED: a cancel, disconnect, reset or shutdown.
          b.talk = "cancelled";
          b.talkText = `released (${m.reason})`;
        }
        return;
    }
  }

  function onGranted(m) {
    inFlight.delete(m.id);
    myGrants.set(m.button, m.fence);
    const press = presses.get(m.button);
    // A GRANTED without an id is a queue's hand-off to this page's waiting press.
    if (press && (press.downId === m.id || (m.id === undefined && press.status === "queued"))) {
      press.status = "granted";
      press.fence = m.fence;
    }
    announce(`${labelOf(m.button)}: pressed, you hold it.`);
    // Nothing lights here: the PRESSED event that follows does that, on every page alike.
  }

  function onDenied(m) {
    inFlight.delete(m.id);
    const press = presses.get(m.button);
    if (press && press.downId === m.id) press.status = "denied";
    const b = buttons.get(m.button);
    if (!b) return;
    const holder = m.owner === view.name && myGrants.has(m.active) ? "you hold" : `${m.owner} holds`;
    if (m.reason === "busy") {
      b.deniedText = `busy · ${m.owner} holds ${shownOf(m.active)}`;
      announce(`${b.label}: not pressed, ${holder} ${labelOf(m.active)}.`);
    } else if (m.reason === "early" || m.reason === "locked-out" || m.reason === "queue-full") {
      const why = { early: "too early: the round is not open", "locked-out": "locked out for pressing early",
                    "queue-full": "the line is full" }[m.reason];
      b.deniedText = why;
      announce(`${b.label}: not pressed, ${why}.`);
    } else if (m.reason === "forbidden") {
      b.deniedText = "needs a key";
      announce(`${b.label}: not pressed, this panel needs a key to press.`);
      askForKey("press", keys.presented ? "The key given does not allow pressing here." : "", b.id);
    } else {
      b.deniedText = `not allowed (${m.reason})`;
      announce(`${b.label}: not pressed (${m.reason}).`);
    }
    b.el.dataset.denied = "1";
    clearTimeout(b.deniedTimer);
    b.deniedTimer = setTimeout(() => {
      b.deniedText = "";
      b.el.dataset.denied = "0";
      render(b);
    }, DENIED_NOTE_MS);
    render(b);
  }

  function onQueued(m) {
    inFlight.delete(m.id);
    const press = presses.get(m.button);
    if (press && press.downId === m.id) press.status = "queued";
    announce(`${labelOf(m.button)}: ${m.owner} holds it; you are ${ordinal(m.position)} in line.`);
  }

  function onRanked(m) {
    inFlight.delete(m.id);
    const press = presses.get(m.button);
    if (press && press.downId === m.id) press.status = "ranked";
    // A place after the group's `announce` is told to this page alone: shown beside the
    // announced ones until the round ends.
    const round = fair.rounds.get(buttons.get(m.button)?.group);
    if (round) round.mine = { rank: m.rank, after_us: m.after_us };
    renderFair();
    announce(`${labelOf(m.button)}: ${ordinal(m.rank)}, ${afterText(m.after_us)} after the first.`);
  }

  function applyFairEvent(m) {
    const group = buttons.get(m.button)?.group;
    if (!group) return;
    const line = fair.lines.get(group) || [];
    fair.lines.set(group, line);
    const round = fair.rounds.get(group);
    switch (m.type) {
      case "queued":
        line.push({ button: m.button, name: m.name, session: m.session });
        return;
      case "dequeued":
        if (line[m.position - 1]?.session === m.session) line.splice(m.position - 1, 1);
        return;
      case "pressed":
        // The head of a line granted at the hand-off leaves it.
        if (line.length && line[0].session === m.session) line.shift();
        if (round && round.state === "armed") {
          round.state = "won";
          round.ranking = [{ button: m.button, name: m.owner, session: m.session, rank: 1, after_us: 0 }];
          ranking.roundChanged(group);
        }
        return;
      case "buzzed":
        if (round) round.ranking.push({ button: m.button, name: m.name, session: m.session, rank: m.rank, after_us: m.after_us });
        ranking.roundChanged(group);
        return;
    }
  }

  function ordinal(n) {
    const tens = n % 100;
    const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
    return `${n}${suffix}`;
  }

  function afterText(us) {
    return us < 1000 ? "+<1 ms" : `+${Math.round(us / 1000)} ms`;
  }

  /** This page's place in the line of b's group, waiting for b: 1, 2, ... or 0. */
  function myPlace(b) {
    const line = fair.lines.get(b.group) || [];
    const i = line.findIndex((w) => w.session === view.session && w.button === b.id);
    return i + 1;
  }

  /** The line under a queue group's heading, the ranking under a buzzer group's. */
  function fairText(group) {
    const policy = fair.policies.get(group);
    if (policy === "queue") {
      const line = fair.lines.get(group) || [];
      return line.length ? `next: ${line.map((w) => w.session === view.session ? "you" : w.name).join(", ")}` : "";
    }
    if (policy !== "buzzer") return "";
    const round = fair.rounds.get(group) || { state: "closed", ranking: [] };
    if (round.state === "armed") return "round open: buzz!";
    if (round.state === "closed") return "round closed";
    const places = round.ranking.map((r) => `${r.rank}. ${shownOf(r.button)}${r.rank > 1 ? ` ${afterText(r.after_us)}` : ""}`);
    const mine = round.mine;
    if (mine && !round.ranking.some((r) => r.rank === mine.rank)) places.push(`you: ${ordinal(mine.rank)} ${afterText(mine.after_us)}`);
    return places.join(" · ");
  }

  function renderFair() {
    for (const box of groupBoxes) {
      const group = box.section.dataset.group;
      const info = box.info;
      const text = view.live ? fairText(group) : "";
      if (info.textContent !== text) info.textContent = text;
      info.hidden = !text;
      if (box.full) box.full.hidden = !(fair.policies.get(group) === "buzzer" && view.live);
      if (box.host) {
        const buzzer = fair.policies.get(group) === "buzzer";
        box.host.hidden = !(hostMode && buzzer && view.live);
        const admin = view.role === "admin";
        for (const control of box.host.querySelectorAll("button")) control.disabled = !admin;
        box.host.querySelector(".host-note").hidden = admin;
      }
    }
  }

  function onError(m) {
    const command = inFlight.get(m.id);
    inFlight.delete(m.id);
    if (command && command.cmd === "ranking") {
      ranking.take(m);
      return;
    }
    if (command && (command.cmd === "up" || command.cmd === "cancel") && m.code === "not-owner") {
      return;  // the DOWN it ends was denied after the finger had already lifted: nothing held
    }
    if ((!command || command.cmd === "join") && m.code === "no-such-panel") {
      dropped("lost");  // the JOIN failed: the server's config changed under us
      return;
    }
    if (command && command.cmd === "hello" && keys.hello && keys.hello.id === m.id) {
      keyRefused(keys.hello);
      return;
    }
    if ((!command || command.cmd === "join") && m.code === "unavailable") {
      // Cluster mode: the panel has no leader that can answer right now (a failover
      // under way, etcd without a majority). This node is fine: join again shortly.
      dropped("unavailable");
      return;
    }
    if (command && command.cmd === "join") view.resyncing = false;
    if ((!command || command.cmd === "join") && m.code === "forbidden") {
      // JOIN refused (the ?panel= one has no id): this panel needs a view key.
      joinRefused();
      return;
    }
    notice(`${m.code}: ${m.message}`);
  }

  // ---------------------------------------------------------------- history and ticker

  const TICKER_LINES = 4;
  const HISTORY_RECORDS = 50;
  /** The ticker shows only events seen live, or the history once if it had none. */
  let tickerFromHistory = true;

  /** The panel's recent records: who fired each hold button last, even before this
   *  page was opened, and the ticker's first lines. */
  function askHistory() {
    send({ cmd: "history", panel: panelId, n: HISTORY_RECORDS });
  }

  function onRecord(r) {
    const b = buttons.get(r.button);
    if (!b) return;
    const at = new Date(r.at);
    if (r.event === "fired" && b.kind === "hold" && (!b.lastFired || b.lastFired.at < at)) {
      b.lastFired = { owner: r.owner, at, mine: false };
      render(b);
    }
    if (!tickerFromHistory) return;
    if (r.event === "pressed") tick(`${r.owner} pressed ${b.shown}`, at, true);
    else if (r.event === "fired") tick(`${b.shown} fired by ${r.owner}`, at, true);
  }

  /** A line at the top of the ticker: `text` at `when`. */
  function tick(text, when = new Date(), fromHistory = false) {
    if (!fromHistory) tickerFromHistory = false;
    const list = $("ticker");
    const hint = list.querySelector(".ticker-hint");
    if (hint) hint.remove();
    const li = document.createElement("li");
    const time = document.createElement("time");
    time.dateTime = when.toISOString();
    time.textContent = clock(when);
    li.append(time, text);
    list.prepend(li);
    while (list.childElementCount > TICKER_LINES) list.lastElementChild.remove();
  }

  // ---------------------------------------------------------------- the key prompt

  /** Presents `key` with HELLO (keeping the current name); false when offline. */
  function sendKey(key, typed) {
    const id = send({ cmd: "hello", name: view.name || KioskName.get() || "guest", key });
    if (!id) return false;
    keys.hello = { id, key, typed };
    return true;
  }

  /** OK HELLO for the key: keep it for this panel, JOIN with it (a fresh snapshot). */
  function keyAccepted() {
    const { key, typed } = keys.hello;
    keys.hello = null;
    keys.presented = true;
    storeKey(key);
    if (typed) {
      $("key-input").value = "";
      keyNote("Key accepted…", false);
    }
    keys.rejoin = true;
    view.resyncing = true;
    snapshotLines = [];
    // The key may open the panel's labels too (/api/panels with the key): build from
    // them before the JOIN, whose snapshot then only brings the state.
    fetchPanel()
      .then((panel) => { if (panel && !panel.private && panel.buttons.length) build(panel); })
      .catch(() => { /* the snapshot's ids will do */ })
      .finally(() => send({ cmd: "join", panel: panelId }));
  }

  /** ERROR to the keyed HELLO: the key matches no panel. */
  function keyRefused(hello) {
    keys.hello = null;
    if (hello.typed) {
      keyNote("That key is not right.", true);
      const input = $("key-input");
      if (document.activeElement === input || document.activeElement === document.body) input.select();
      return;
    }
    // The key kept from before is no longer good (the server's config changed): drop it
    // and JOIN without one; the prompt appears if the panel does need a key.
    forgetKey();
    keys.staleNote = "The key kept for this panel is no longer accepted.";
    send({ cmd: "join", panel: panelId });
  }

  function joinRefused() {
    keys.rejoin = false;
    let why = keys.staleNote || "";
    if (keys.presented) {
      forgetKey();  // accepted somewhere, but it does not open this panel
      why = "That key does not open this panel.";
    }
    keys.staleNote = "";
    build({ id: panelId, title: view.title, buttons: [] });
    setConn("key", "needs a key");
    askForKey("view", why, null);
  }

  /**
   * Shows the key prompt (a lasting message, not a notice): `need` "view" to see the
   * panel, "press" to press its buttons; `why` a note under it.
   */
  function askForKey(need, why, buttonId) {
    const prompt = $("key-prompt");
    const wasHidden = prompt.hidden;
    keys.need = need;
    if (buttonId !== null) keys.focusButton = buttonId;
    $("key-why").textContent = need === "view"
      ? "Enter the panel's key to see and press its buttons."
      : "Anyone may watch this panel; pressing its buttons takes a key.";
    keyNote(why, Boolean(why));
    prompt.hidden = false;
    if (wasHidden) $("key-input").focus();
  }

  function hideKeyPrompt() {
    const prompt = $("key-prompt");
    if (prompt.hidden) return;
    const hadFocus = prompt.contains(document.activeElement);
    prompt.hidden = true;
    keys.need = null;
    keyNote("", false);
    if (hadFocus) {
      const back = keys.focusButton && document.getElementById(`button-${keys.focusButton}`);
      const target = back || document.querySelector(".btn:not(:disabled)");
      if (target) target.focus({ preventScroll: true });
    }
    keys.focusButton = null;
  }

  function keyNote(text, bad) {
    const note = $("key-note");
    note.textContent = text;
    if (bad) note.setAttribute("data-bad", "");
    else note.removeAttribute("data-bad");
  }

  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key-input").value;
    if (!key.trim()) {
      keyNote("Enter the key first.", true);
      return;
    }
    if (keys.hello) return;  // one key at a time: wait for its answer
    if (sendKey(key, true)) {
      keyNote("Checking the key…", false);
    } else {
      // Offline: the next connect presents it; a wrong one is then dropped and asked again.
      storeKey(key);
      $("key-input").value = "";
      keyNote("Not connected: the key will be tried once the page is back online.", false);
      reconnectNow();
    }
  });

  // ---------------------------------------------------------------- pressing

  function startPress(id, source) {
    if (!view.live) return;
    const existing = presses.get(id);
    if (existing) {
      existing.sources.add(source);  // a second finger on the same button: still one press
      return;
    }
    const downId = send({ cmd: "down", panel: panelId, button: id });
    if (!downId) return;
    presses.set(id, { sources: new Set([source]), status: "pending", fence: null, downId });
  }

  /**
   * The finger (or key) lifted: how = "up"; or the system took it away: how = "cancel".
   * The real release sends UP, never a timer: the seed report's press-to-talk stopped
   * itself at 0.35 s because its gesture ended at the long-press minimum, finger still down.
   */
  function endPress(id, source, how) {
    const press = presses.get(id);
    if (!press || !press.sources.delete(source)) return;
    if (press.sources.size > 0) return;
    presses.delete(id);
    if (press.status === "denied") return;  // the server gave us nothing to release
    const command = { cmd: how, panel: panelId, button: id };
    // With the grant's fence a late UP can never end a newer press of this button.
    if (press.fence !== null) command.fence = press.fence;
    send(command);
  }

  function cancelAll() {
    for (const [id, press] of [...presses]) {
      for (const source of [...press.sources]) endPress(id, source, "cancel");
    }
  }

  function attachInput(el, id) {
    el.addEventListener("pointerdown", (event) => {
      if (event.pointerType === "mouse" && event.button !== 0) return;
      if (!view.live) return;
      event.preventDefault();
      // Capture keeps pointerup/pointercancel coming to this button wherever the finger
      // drifts. Leaving the button does not end a hold: the seed report's emergency
      // button failed when a finger moved 10 pt during its 3 s (a default max distance).
      try { el.setPointerCapture(event.pointerId); } catch (_) { /* pointer already gone */ }
      startPress(id, `p${event.pointerId}`);
    });
    el.addEventListener("pointerup", (event) => endPress(id, `p${event.pointerId}`, "up"));
    el.addEventListener("pointercancel", (event) => endPress(id, `p${event.pointerId}`, "cancel"));
    // After a pointerup this finds no press; otherwise the capture was taken from us.
    el.addEventListener("lostpointercapture", (event) => endPress(id, `p${event.pointerId}`, "cancel"));
    // No context menu, callout or selection from a long press on touch screens.
    el.addEventListener("contextmenu", (event) => event.preventDefault());
    el.addEventListener("selectstart", (event) => event.preventDefault());

    el.addEventListener("keydown", (event) => {
      if (!isActivationKey(event)) return;
      event.preventDefault();     // no page scroll on Space, no synthetic click
      if (event.repeat) return;   // a held key auto-repeats keydown: still one press
      startPress(id, `key:${event.code || event.key}`);
    });
    el.addEventListener("keyup", (event) => {
      if (!isActivationKey(event)) return;
      event.preventDefault();
      endPress(id, `key:${event.code || event.key}`, "up");
    });
    // A key held while focus leaves would never see its keyup, and a hold has no
    // timeout: it would fire. Losing focus cancels key presses.
    el.addEventListener("blur", () => {
      const press = presses.get(id);
      if (!press) return;
      for (const source of [...press.sources]) {
        if (source.startsWith("key:")) endPress(id, source, "cancel");
      }
    });
  }

  function isActivationKey(event) {
    return event.key === " " || event.key === "Enter" || event.code === "Space";
  }

  // The page going away mid-press (app switch, screen off, tab change) may never deliver
  // the pointerup; the press-to-talk report backs its gesture with a scene-phase observer
  // for the same reason. Hidden while pressing = CANCEL, which never fires a hold.
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) cancelAll();
    else if (!view.live) reconnectNow();
  });
  window.addEventListener("pagehide", cancelAll);
  window.addEventListener("online", reconnectNow);

  // ---------------------------------------------------------------- view

  function groupOf(b) {
    return [...buttons.values()].filter((other) => other.group === b.group);
  }

  /** The label as this page can draw it (see showLabel). */
  function shownOf(id) {
    const b = buttons.get(id);
    return b ? b.shown : id;
  }

  function labelOf(id) {
    const b = buttons.get(id);
    return b ? b.label : id;
  }

  function isMine(b) {
    if (b.ownerSession) return b.ownerSession === view.session;
    return b.owner !== null && b.owner === view.name && myGrants.has(b.id);
  }

  function vibrate(pattern) {
    // Browsers refuse (and log) vibration before the user has touched the page.
    const active = !navigator.userActivation || navigator.userActivation.hasBeenActive;
    if (active && typeof navigator.vibrate === "function") {
      try { navigator.vibrate(pattern); } catch (_) { /* not allowed without a gesture */ }
    }
  }

  function flash(b) {
    clearTimeout(b.firedTimer);
    b.el.dataset.fired = "1";
    b.firedTimer = setTimeout(() => {
      b.el.dataset.fired = "0";
      if (b.kind === "hold" && b.state !== "pressed") { b.progress = 0; b.midway = false; }
      render(b);
    }, FIRED_FLASH_MS[b.kind] || 1000);
  }

  function clearFlash(b) {
    clearTimeout(b.firedTimer);
    b.el.dataset.fired = "0";
  }

  /**
   * Says `text` through the page's one polite live region (#announce). Each message is a
   * new node, so the same words twice are read twice; older ones are dropped.
   */
  function announce(text) {
    const region = $("announce");
    const line = document.createElement("span");
    line.textContent = `${text} `;
    region.append(line);
    while (region.childElementCount > 3) region.firstElementChild.remove();
  }

  let noticeTimer = null;
  function notice(text) {
    const note = $("name-note");
    note.textContent = text;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => { note.textContent = ""; }, 5000);
  }

  function renderWho() {
    // Only while connected: after a disconnect the old session's name is stale.
    $("whoami").textContent = view.name && ws ? `You are ${view.name}.` : "";
  }

  /** The button's state in words: its accessible description (.status). */
  function statusText(b) {
    if (!view.live) return "offline";
    if (b.deniedText) return b.deniedText;
    const mine = isMine(b) ? " (you)" : "";
    if (b.el.dataset.fired === "1") {
      const you = b.firedMine ? " (you)" : "";
      return b.kind === "hold" ? `FIRED by ${b.firedBy}${you}` : `FIRED · held by ${b.owner || b.firedBy}${you}`;
    }
    switch (b.state) {
      case "pressed":
        if (b.kind === "hold") return `${b.owner}${mine} holding · ${Math.round(b.progress * 100)}%`;
        if (b.kind === "talk") {
          return b.talk === "talking" ? `${b.owner}${mine} talking…` : `held by ${b.owner}${mine}`;
        }
        return `held by ${b.owner}${mine}`;
      case "locked":
        return `locked · ${lockText(b)}`;
      default:
        return idleText(b);
    }
  }

  function lockText(b) {
    const active = groupOf(b).find((other) => other.state === "pressed");
    const who = active && isMine(active) ? "you hold" : `${b.owner} holds`;
    return `${who} ${active ? active.shown : "this group"}`;
  }

  function idleText(b) {
    if (b.kind === "talk") return b.talkText || "tap, or hold to talk";
    if (b.kind === "hold") return b.holdMs ? `hold ${(b.holdMs / 1000).toFixed(1)} s` : "hold to fire";
    return "free";
  }

  /**
   * What the eye sees on the button: { icon, caption, owner, detail }. The owner, when
   * there is one, is the biggest word on it; "YOU" on the presser's own page.
   */
  function faceOf(b) {
    if (!view.live) return { icon: "offline", detail: "offline" };
    if (b.deniedText) return { icon: b.state === "locked" ? "lock" : null, detail: b.deniedText };
    if (b.el.dataset.fired === "1") {
      return { caption: "FIRED", owner: b.firedMine ? "YOU" : b.firedBy || b.owner };
    }
    switch (b.state) {
      case "pressed": {
        const owner = isMine(b) ? "YOU" : b.owner;
        if (b.kind === "hold") return { owner, detail: `holding · ${Math.round(b.progress * 100)}%` };
        if (b.kind === "talk" && b.talk === "talking") return { caption: "talking", owner };
        return { caption: "held by", owner };
      }
      case "locked":
        return { icon: "lock", caption: "locked", detail: lockText(b) };
      default:
        return { detail: idleText(b) };
    }
  }

  function lastFiredText(b) {
    const last = b.lastFired;
    if (!last) return "";
    return `last fired: ${b.id} by ${last.owner}${last.mine ? " (you)" : ""} at ${clock(last.at)}`;
  }

  function setPart(el, text) {
    if (el.textContent !== (text || "")) el.textContent = text || "";
    el.hidden = !text;
  }

  function renderFace(b) {
    const face = faceOf(b);
    const el = b.el;
    el.dataset.face = face.owner ? "owner" : "plain";
    setPart(b.parts.caption, face.caption);
    setPart(b.parts.owner, face.owner);
    if (face.owner) fitText(b.parts.owner, face.owner, 135);
    setPart(b.parts.detail, face.detail);
    // An <svg> has no .hidden property: the attribute it is.
    for (const [name, icon] of Object.entries(b.parts.icons)) icon.toggleAttribute("hidden", face.icon !== name);
    if (b.parts.lastFired) setPart(b.parts.lastFired, lastFiredText(b));
  }

  function render(b) {
    const el = b.el;
    const mine = isMine(b);
    el.disabled = !view.live;
    el.dataset.state = view.live ? b.state : "offline";
    el.dataset.owner = b.owner || "";
    el.dataset.mine = mine ? "1" : "0";
    el.dataset.firedMine = el.dataset.fired === "1" && b.firedMine ? "1" : "0";
    // aria-pressed is this page's own press only; a button someone else holds, or one
    // its group's press locks, cannot be pressed now: aria-disabled, still focusable
    // (disabled would drop focus and hide it from keyboard users).
    el.setAttribute("aria-pressed", view.live && b.state === "pressed" && mine ? "true" : "false");
    const unavailable = view.live && (b.state === "locked" || (b.state === "pressed" && !mine));
    if (unavailable) el.setAttribute("aria-disabled", "true");
    else el.removeAttribute("aria-disabled");
    if (b.kind === "hold") {
      el.dataset.progress = String(b.progress);
      el.dataset.midway = b.midway ? "1" : "0";
      b.ringFill.style.strokeDashoffset = String(100 * (1 - Math.min(1, Math.max(0, b.progress))));
    }
    if (b.kind === "talk") el.dataset.talk = b.talk;
    const place = view.live ? myPlace(b) : 0;
    el.dataset.queued = String(place);
    const status = place && !b.deniedText ? `you are ${ordinal(place)} in line` : statusText(b);
    if (b.statusEl.textContent !== status) b.statusEl.textContent = status;
    renderFace(b);
    if (place && !b.deniedText) setPart(b.parts.detail, status);
  }

  function renderAll() {
    for (const b of buttons.values()) render(b);
    renderFair();
    $("members").textContent = view.live ? ` · ${view.members} member${view.members === 1 ? "" : "s"}` : "";
  }

  // ---------------------------------------------------------------- building

  const SVG = "http://www.w3.org/2000/svg";

  function ring() {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "ring");
    svg.setAttribute("viewBox", "0 0 100 100");
    svg.setAttribute("aria-hidden", "true");
    const track = document.createElementNS(SVG, "circle");
    const fill = document.createElementNS(SVG, "circle");
    for (const [circle, cls] of [[track, "ring-track"], [fill, "ring-fill"]]) {
      circle.setAttribute("class", cls);
      circle.setAttribute("cx", "50");
      circle.setAttribute("cy", "50");
      circle.setAttribute("r", "44");
      circle.setAttribute("pathLength", "100");
      circle.setAttribute("transform", "rotate(-90 50 50)");  // start at the top, clockwise
    }
    fill.setAttribute("stroke-dasharray", "100");
    fill.style.strokeDashoffset = "100";
    // The midway mark sits half way round: at the bottom.
    const mid = document.createElementNS(SVG, "circle");
    mid.setAttribute("class", "ring-mid");
    mid.setAttribute("cx", "50");
    mid.setAttribute("cy", "94");
    mid.setAttribute("r", "4.5");
    svg.append(track, fill, mid);
    const box = document.createElement("span");
    box.className = "ring-box";
    box.append(svg);
    return { box, fill };
  }

  // Icons are drawn, not typed: an emoji or symbol font may be missing on a kiosk.
  const ICONS = {
    // A padlock: the group is held by someone.
    lock: '<rect x="5" y="11" width="14" height="10" rx="2"/><path d="M8 11V8a4 4 0 0 1 8 0v3" fill="none"/>',
    // A plug with its cable cut: the server is away.
    offline: '<path d="M3 3l18 18" /><path d="M9 3v4M15 3v4M7 7h10v4a5 5 0 0 1-7.5 4.3M12 16v5" fill="none"/>',
  };

  function icon(name) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", `icon icon-${name}`);
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("fill", name === "lock" ? "currentColor" : "none");
    svg.setAttribute("stroke", "currentColor");
    svg.setAttribute("stroke-width", "2.2");
    svg.setAttribute("stroke-linecap", "round");
    svg.innerHTML = ICONS[name];
    svg.setAttribute("hidden", "");
    return svg;
  }

  /**
   * Sizes `el`'s font (see --fit in kiosk.css) so a short text stays on one line and a
   * long one breaks between words, not inside them. CJK characters count double.
   */
  function fitText(el, text, scale) {
    const width = (part) => [...part].reduce((n, ch) => n + (ch.codePointAt(0) > 0x2e80 ? 1.9 : 1), 0);
    const whole = width(text);
    const units = Math.max(3, whole <= 12 ? whole : Math.max(...text.split(/\s+/).map(width)));
    const fit = `${(scale / units).toFixed(2)}cqw`;
    if (el.style.getPropertyValue("--fit") !== fit) el.style.setProperty("--fit", fit);
  }

  function span(className) {
    const el = document.createElement("span");
    el.className = className;
    return el;
  }

  function showTitle(panel) {
    view.title = panel.title || panel.id;
    $("title").textContent = view.title;
    document.title = `${view.title} — ButtonArbiter`;
  }

  /** The groups as layout.js sizes them: [{ section, grid, buttons }]. */
  let groupBoxes = [];
  let layoutFrame = 0;

  function relayout() {
    cancelAnimationFrame(layoutFrame);
    layoutFrame = requestAnimationFrame(() => KioskLayout.arrange($("groups"), groupBoxes));
  }

  /** (Re)builds the buttons when the panel's configuration differs from what is shown. */
  function build(panel) {
    showTitle(panel);
    const signature = JSON.stringify(panel.buttons.map((b) => [b.id, b.label, b.kind, b.group, b.hold_ms]));
    if (signature === build.signature) return;
    build.signature = signature;

    const lastFired = new Map([...buttons.values()].map((b) => [b.id, b.lastFired]));
    buttons.clear();
    const groups = new Map();
    for (const config of panel.buttons) {
      if (!groups.has(config.group)) groups.set(config.group, []);
      groups.get(config.group).push(config);
    }
    groupBoxes = [];
    for (const [group, configs] of groups) {
      const section = document.createElement("section");
      section.className = "group";
      section.dataset.group = group;
      const heading = document.createElement("h2");
      heading.textContent = group;
      // A queue's line or a buzzer round's ranking (renderFair), in the heading's line:
      // the layout gives a group its heading's height and the rest to the buttons.
      const info = document.createElement("span");
      info.className = "group-info";
      info.id = `group-info-${group}`;
      info.hidden = true;
      heading.append(" ", info);
      const grid = document.createElement("div");
      grid.className = "grid";
      const elements = configs.map((config) => buttonElement(config, lastFired.get(config.id)));
      grid.append(...elements);
      const full = rankingControl(group);
      heading.append(" ", full);
      const host = hostControls(group);
      if (host) heading.append(" ", host);
      section.append(heading, grid);
      groupBoxes.push({ section, grid, buttons: elements, info, host, full });
    }
    $("groups").replaceChildren(...groupBoxes.map((g) => g.section));
    KioskLayout.arrange($("groups"), groupBoxes);
  }

  /** The "Full ranking" button of a buzzer group, on every page (shown by renderFair):
   *  RANKING needs only the view level. */
  function rankingControl(group) {
    const box = document.createElement("span");
    box.className = "ranking-control";
    box.hidden = true;
    const open = document.createElement("button");
    open.type = "button";
    open.className = "plain-button";
    open.id = `ranking-open-${group}`;
    open.textContent = "Full ranking";
    open.setAttribute("aria-haspopup", "dialog");
    open.addEventListener("click", () => ranking.open(group, open));
    box.append(open);
    return box;
  }

  /** ARM and RESET for a buzzer group on the host page (shown by renderFair). */
  function hostControls(group) {
    if (!hostMode) return null;
    const box = document.createElement("span");
    box.className = "host-controls";
    box.hidden = true;
    const arm = document.createElement("button");
    arm.type = "button";
    arm.className = "plain-button";
    arm.id = `host-arm-${group}`;
    arm.textContent = "ARM";
    arm.addEventListener("click", () => send({ cmd: "arm", panel: panelId, group }));
    const reset = document.createElement("button");
    reset.type = "button";
    reset.className = "plain-button";
    reset.id = `host-reset-${group}`;
    reset.textContent = "RESET";
    reset.addEventListener("click", () => send({ cmd: "reset", panel: panelId }));
    const note = document.createElement("span");
    note.className = "host-note";
    note.textContent = "ARM and RESET need the admin key";
    box.append(arm, reset, note);
    return box;
  }

  /** The label as drawn: without characters this browser has no font for. */
  function showLabel(b, labelEl) {
    const font = `700 40px ${getComputedStyle(document.body).fontFamily}`;
    const drawable = KioskGlyphs.visible(b.label, font);
    b.shown = drawable === b.label ? b.label : drawable || b.id;
    if (b.shown === b.label) return labelEl;
    // The full label stays the accessible name (a screen reader needs no font).
    labelEl.classList.add("sr-only");
    const shown = span("label label-shown");
    shown.setAttribute("aria-hidden", "true");
    shown.textContent = b.shown;
    shown.title = b.label;
    return shown;
  }

  function buttonElement(config, lastFired) {
    const el = document.createElement("button");
    el.type = "button";
    el.className = "btn";
    el.id = `button-${config.id}`;
    el.dataset.button = config.id;
    el.dataset.kind = config.kind;
    el.dataset.group = config.group;
    const b = {
      id: config.id, label: config.label || config.id, shown: "", kind: config.kind, group: config.group,
      holdMs: config.hold_ms || 0, state: "offline", owner: null, ownerSession: null,
      progress: 0, midway: false, talk: "idle", talkText: "", firedBy: "", firedMine: false, deniedText: "",
      lastFired: lastFired || null,
      el, statusEl: null, ringFill: null, firedTimer: null, deniedTimer: null, parts: null,
    };
    const label = span("label");
    label.id = `label-${config.id}`;
    label.textContent = b.label;
    const face = span("face");
    const icons = { lock: icon("lock"), offline: icon("offline") };
    const visibleLabel = showLabel(b, label);
    fitText(visibleLabel, b.shown, 125);
    face.append(icons.lock, icons.offline, label);
    if (visibleLabel !== label) face.append(visibleLabel);
    // A button's children are presentational: assistive technology reads the label (its
    // name) and .status (its description), the eye reads the face.
    b.parts = { caption: span("caption"), owner: span("owner"), detail: span("detail"), icons, lastFired: null };
    if (config.kind === "hold") {
      const { box, fill } = ring();
      b.ringFill = fill;
      face.append(box);
    }
    face.append(b.parts.caption, b.parts.owner, b.parts.detail);
    if (config.kind === "hold") {
      b.parts.lastFired = span("last-fired");
      face.append(b.parts.lastFired);
    }
    const status = span("status sr-only");
    status.id = `status-${config.id}`;
    // The accessible name is the label alone (a name that changed with every progress
    // tick would be re-read); the status is the description.
    el.setAttribute("aria-labelledby", label.id);
    el.setAttribute("aria-describedby", status.id);
    el.append(face, status);
    b.statusEl = status;
    buttons.set(config.id, b);
    attachInput(el, config.id);
    render(b);
    return el;
  }

  // ---------------------------------------------------------------- start

  KioskName.bindForm($("name-form"), $("name-input"), $("name-note"), (name) => {
    // On a live socket HELLO renames this session; otherwise the next connect uses it.
    if (!send({ cmd: "hello", name })) notice(`Saved; you will be ${name} once connected.`);
  });

  const ranking = KioskRanking.create({
    panel: panelId, send, labelOf: shownOf, mySession: () => view.session, clock,
  });

  // Read-only view for the browser test (Tests/browser), plus one way to provoke a seq gap.
  window.kioskDebug = {
    state: () => ({ ...view, presses: presses.size, conn: document.body.dataset.conn, needKey: keys.need }),
    forgetLastEvent: () => { view.seq -= 1; },
  };

  new ResizeObserver(relayout).observe($("groups"));
  arrivedFromAnotherNode();
  connect();
})();
