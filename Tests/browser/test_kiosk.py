#!/usr/bin/env python3
"""Browser test of the ButtonArbiter kiosk page, in headless Chromium from Debian.

    python3 Tests/browser/test_kiosk.py [path/to/arbiter]      (default .build/debug/arbiter)

Starts the real arbiter binary on 127.0.0.1 (--port 0, a config with a 1.2 s hold, keyed
panels and long names, written to a temp dir), opens two browser pages (two WebDriver sessions: a 1280x800 wall tablet
with a mouse, a 390x844 phone with touch) and one netcat-style line peer on the panel,
and checks what PROTOCOL.md and the kiosk issues promise: among them that the page can be
read across a room (issue 12: the buttons fill the screen with 1, 5 and 12 buttons, the
owner's name is the biggest word, locked and offline buttons are dimmer and carry an icon,
my press looks unlike another's, the last fire stays, a clean shutdown is told from a lost
server, GET / lists the panels without JavaScript). Screenshots of each state, at both
sizes, go to artifacts/.
Exit status 0 when every check passed, 1 on the first failure (with what was seen), 2
when the environment is missing something.

Needs: apt-get install chromium chromium-driver; pip install selenium. Only 127.0.0.1 is
ever contacted: Chromium gets a dead proxy for everything that is not loopback.

Why every gesture is ONE perform (down, pause, up), run in a thread: ChromeDriver does not
keep a pointer pressed between two Perform Actions calls (a touch pointer's later
actions are dropped; a mouse's next move arrives with no button down, which releases
pointer capture). So a press is one action sequence whose pause is the time the finger
stays down; meanwhile the other page and the socket peer are watched with bounded waits,
and the pressing page's own view is read back from a recorder of its DOM changes.
"""

import html.parser
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402  (the line client, shared with the cluster tests)
ARTIFACTS = ROOT / "artifacts"
PANEL = "demo"
HOLD_MS = 1200
VIEW_KEY = "open-sesame"
PRESS_KEY = "press-me"
LONG_TITLE = "Supercalifragilisticexpialidocious" * 5       # 170 characters, no break
LONG_GROUP = "W" * 64                                      # the longest group name, shown uppercase
SOS_LABEL = "SOS 緊急"                                     # as in the embedded demo panel
ODD_TITLE = 'One <button> & "quotes"'                      # must reach the index as text, not markup
PHONE = (390, 844)
DESKTOP = (1280, 800)

CONFIG = {
    "panels": [
        {
            "id": PANEL,
            "title": "Browser test",
            "buttons": [
                {"id": "b1", "label": "Button 1", "kind": "tap"},
                {"id": "b2", "label": "Button 2", "kind": "tap"},
                {"id": "b3", "label": "Button 3", "kind": "tap"},
                {"id": "sos", "label": SOS_LABEL, "kind": "hold", "hold_ms": HOLD_MS,
                 "progress_ms": 100, "group": "emergency"},
                {"id": "talk", "label": "Talk", "kind": "talk", "long_ms": 350,
                 "min_talk_ms": 300, "group": "talk"},
            ],
        },
        {"id": "lobby", "title": "Second panel", "buttons": [{"id": "x", "label": "X"}]},
        # Fair groups: a queue of two taps, a buzzer of two teams whose members are told the
        # first two places of a round (announce); the rest are asked for (Full ranking).
        {"id": "fair", "title": "Quiz night",
         "buttons": [{"id": "qa", "label": "Queue A", "group": "line"},
                     {"id": "qb", "label": "Queue B", "group": "line"},
                     {"id": "red", "label": "Red team", "group": "quiz"},
                     {"id": "blue", "label": "Blue team", "group": "quiz"}],
         "groups": {"line": {"policy": "queue", "max_queue": 8},
                    "quiz": {"policy": "buzzer", "early_lockout_ms": 100, "announce": 2}}},
        # Layouts with 1 and 12 buttons. The single label needs a CJK font, nothing else.
        {"id": "one", "title": ODD_TITLE, "buttons": [{"id": "alarm", "label": "緊急"}]},
        {"id": "twelve", "title": "Twelve buttons", "buttons":
            [{"id": f"t{i}", "label": f"Team {i}", "kind": "tap"} for i in range(1, 10)]
            + [{"id": "fire", "label": "Fire", "kind": "hold", "hold_ms": 4000, "group": "emergency"},
               {"id": "flood", "label": "Flood", "kind": "hold", "hold_ms": 4000, "group": "emergency"},
               {"id": "mic", "label": "Mic", "kind": "talk", "group": "talk"}]},
        # Keyed panels: one private to a view key, one anyone may watch but only the
        # press key may press.
        {"id": "vault", "title": "Vault", "keys": {"view": VIEW_KEY},
         "buttons": [{"id": "v1", "label": "Vault door", "kind": "tap"},
                     {"id": "v2", "label": "Vault alarm", "kind": "hold", "hold_ms": 800, "group": "alarm"}]},
        {"id": "guarded", "title": "Guarded", "keys": {"press": PRESS_KEY},
         "buttons": [{"id": "g1", "label": "Gate", "kind": "tap"}]},
        # Long unbroken words: they must wrap, never scroll the page sideways.
        {"id": "long", "title": LONG_TITLE,
         "buttons": [{"id": "l1", "label": "Long 1", "group": LONG_GROUP},
                     {"id": "l2", "label": "Long 2", "group": LONG_GROUP}]},
    ]
}


# Players who press into one buzzer round beyond its announced places, for the full
# ranking's table: enough rows that it must scroll.
CROWD = 150

# The full ranking dialog as the page shows it (ranking.js).
RANKING_JS = """
const dialog = document.getElementById('ranking');
const scroll = document.getElementById('ranking-scroll');
const rows = [...document.querySelectorAll('#ranking-rows tr')].map((tr) => [...tr.cells].map((c) => c.textContent));
const r = dialog.getBoundingClientRect();
const row = document.querySelector('#ranking-rows tr');
return {open: dialog.open, modal: dialog.matches(':modal'), rows,
        status: document.getElementById('ranking-status').textContent,
        focusInside: dialog.contains(document.activeElement),
        rowFont: row ? parseFloat(getComputedStyle(row).fontSize) : 0,
        mine: [...document.querySelectorAll('#ranking-rows tr[data-mine="1"]')].map((tr) => tr.dataset.rank),
        scrolls: scroll.scrollHeight > scroll.clientHeight + 1,
        inViewport: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 0.5 && r.right <= document.documentElement.clientWidth + 0.5,
        pageScroll: Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)};
"""

# One failure type for both harnesses: the kiosk failover test runs this file's pages
# with clusterlib's nodes, and each reports the other's failures as its own.
Failure = cl.Failure


def check(condition, message):
    if not condition:
        raise Failure(message)


def ok(message):
    print(f"ok    {message}", flush=True)


NOTES = []

# A known server issue, reported, not the kiosk's: Chromium opens some sockets before it has
# a request for them; one that stays silent for 200 ms is taken for a line peer and gets
# WELCOME, and the request later sent on it fails (net::ERR_INVALID_HTTP_RESPONSE). The
# pages reload themselves when a file fails to load; the test notes it and goes on.
SERVER_ISSUE = "server issue: WELCOME sent on a browser's early-opened HTTP socket"


def note(message):
    NOTES.append(message)
    print(f"NOTE  {message}", flush=True)


def section(title):
    print(f"\n## {title}", flush=True)


# ------------------------------------------------------------------ the server

class Arbiter:
    """The real binary, restartable on the port it first picked."""

    def __init__(self, binary, config_path, workdir):
        self.binary = str(binary)
        self.config_path = str(config_path)
        self.workdir = Path(workdir)
        self.proc = None
        self.port = 0
        self.runs = 0
        self.log_path = None

    def start(self, port=0, timeout=20.0):
        deadline = time.monotonic() + timeout
        while True:
            self.runs += 1
            self.log_path = self.workdir / f"arbiter-{self.runs}.log"
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(
                    [self.binary, "--host", "127.0.0.1", "--port", str(port), "--config", self.config_path],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            while True:
                text = self.log_path.read_text(errors="replace")
                match = re.search(r"msg=listening\b.*\bport=(\d+)", text)
                if match:
                    self.port = int(match.group(1))
                    return self.port
                if self.proc.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    raise Failure(f"arbiter printed no listening line within {timeout} s:\n{text}")
                time.sleep(0.05)  # polling the log file, bounded by the deadline
            # It exited. A restart on a fixed port may race the old socket; retry that only.
            if "in use" in text and port and time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            raise Failure(f"arbiter exited with status {self.proc.returncode}:\n{text}")

    def kill(self):
        """SIGKILL: the server gets no chance to say goodbye to anyone."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def log_tail(self, lines=25):
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


# ------------------------------------------------------------------ the socket peer

class LinePeer(cl.LineClient):
    """clusterlib's netcat-style session, which also checks that the server kept its name."""

    def __init__(self, port, name):
        super().__init__(port, name)
        self.wait(rf"^OK HELLO name={re.escape(name)} ", what=f"{name}'s HELLO answered with its own name")

    def since(self, start, pattern=None):
        return self.texts(start, pattern)


# ------------------------------------------------------------------ the browser pages

BUTTON_JS = """
const el = document.getElementById('button-' + arguments[0]);
if (!el) return null;
const ring = el.querySelector('.ring-fill');
return {state: el.dataset.state, owner: el.dataset.owner, mine: el.dataset.mine,
        progress: el.dataset.progress, midway: el.dataset.midway, fired: el.dataset.fired,
        talk: el.dataset.talk, denied: el.dataset.denied, disabled: el.disabled,
        ring: ring ? ring.style.strokeDashoffset : null,
        pressed: el.getAttribute('aria-pressed'), unavailable: el.getAttribute('aria-disabled'),
        label: el.querySelector('.label').textContent,
        status: el.querySelector('.status').textContent};
"""

# Keeps every state the page showed: one entry per DOM change batch (a MutationObserver
# callback runs after each WebSocket message has been rendered).
RECORDER_JS = """
if (!window.__rec) {
  window.__rec = [];
  window.__snap = () => {
    const b = {};
    for (const el of document.querySelectorAll('.btn')) {
      const ring = el.querySelector('.ring-fill');
      b[el.dataset.button] = {state: el.dataset.state, owner: el.dataset.owner, mine: el.dataset.mine,
        progress: el.dataset.progress, midway: el.dataset.midway, fired: el.dataset.fired,
        talk: el.dataset.talk, denied: el.dataset.denied, disabled: el.disabled,
        ring: ring ? ring.style.strokeDashoffset : null,
        pressed: el.getAttribute('aria-pressed'), unavailable: el.getAttribute('aria-disabled'),
        status: el.querySelector('.status').textContent};
    }
    window.__rec.push({t: performance.now(), conn: document.body.dataset.conn,
                       notice: (document.getElementById('name-note') || {}).textContent || '',
                       announce: (document.getElementById('announce') || {}).textContent || '', b});
  };
  new MutationObserver(window.__snap).observe(document.body,
    {subtree: true, attributes: true, childList: true, characterData: true});
}
window.__rec.length = 0;
window.__snap();
// And every command the page sends, by wrapping WebSocket.prototype.send (the page's
// socket looks the method up on the prototype at each call).
if (!WebSocket.prototype.__recorded) {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { window.__sent.push(String(data)); return send.call(this, data); };
  WebSocket.prototype.__recorded = true;
}
window.__sent = [];
"""

CONTRAST_JS = """
function rgba(text) {
  const parts = text.match(/[\\d.]+/g).map(Number);
  return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
}
function luminance(c) {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
}
function background(el) {
  for (let e = el; e; e = e.parentElement) {
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c[3] >= 1) return c;
    if (c[3] > 0) return null;  // translucent: cannot judge, reported
  }
  return rgba(getComputedStyle(document.documentElement).backgroundColor);
}
const bad = [];
let checked = 0;
for (const el of document.querySelectorAll('body *')) {
  const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!own || !el.getClientRects().length) continue;
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || style.display === 'none') continue;
  const fg = rgba(style.color);
  const bg = background(el);
  const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
  const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
  checked += 1;
  if (!bg || fg[3] < 1) { bad.push(`${el.className || el.tagName}: translucent colours`); continue; }
  const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
  const ratio = (hi + 0.05) / (lo + 0.05);
  if (ratio < need) bad.push(`${el.tagName}.${el.className} "${el.textContent.trim().slice(0, 30)}": ${ratio.toFixed(2)} < ${need}`);
}
return {checked, bad};
"""

LAYOUT_JS = """
const vw = document.documentElement.clientWidth, vh = window.innerHeight;
const buttons = [...document.querySelectorAll('.btn')].map((el) => {
  const r = el.getBoundingClientRect();
  return {id: el.dataset.button, w: r.width, h: r.height, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
});
return {vw, vh, scrollWidth: document.documentElement.scrollWidth, buttons};
"""


# How a button looks: computed colours and sizes of its parts, and where they are.
FACE_JS = """
const el = document.getElementById('button-' + arguments[0]);
const part = (selector) => {
  const node = el.querySelector(selector);
  if (!node) return null;
  const style = getComputedStyle(node), r = node.getBoundingClientRect();
  return {text: node.textContent, shown: style.display !== 'none' && style.visibility !== 'hidden' && r.width > 0,
          size: parseFloat(style.fontSize), color: style.color,
          rect: {left: r.left, right: r.right, top: r.top, bottom: r.bottom}};
};
const style = getComputedStyle(el);
return {bg: style.backgroundColor, image: style.backgroundImage, border: style.borderTopStyle,
        label: part('.label-shown') || part('.label'), owner: part('.owner'), caption: part('.caption'),
        detail: part('.detail'), lastFired: part('.last-fired'), ring: part('.ring'),
        lock: part('.icon-lock'), offline: part('.icon-offline')};
"""


def rgb(text):
    return [float(v) for v in re.findall(r"[\d.]+", text)[:3]]


def contrast(a, b):
    """WCAG contrast ratio of two computed CSS colours."""
    def luminance(c):
        f = [v / 255 for v in c]
        f = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in f]
        return 0.2126 * f[0] + 0.7152 * f[1] + 0.0722 * f[2]
    hi, lo = sorted([luminance(rgb(a)), luminance(rgb(b))], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


class Page:
    """One browser (its own WebDriver session and profile) showing one kiosk page."""

    def __init__(self, label, width, height, mobile, base_url):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.label = label
        self.base = base_url
        self.size = f"{'phone' if mobile else 'desktop'}-{width}x{height}"
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
            f"--window-size={width},{height}", "--lang=en-US", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update",
            "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
            "--disable-client-side-phishing-detection",
            # Loopback bypasses proxies; everything else goes to a closed local port.
            "--proxy-server=http://127.0.0.1:9",
        ]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.d.set_page_load_timeout(20)
        self.d.set_script_timeout(10)
        # Exact CSS viewport (a headless window's size includes no-longer-drawn chrome).
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})
        if mobile:
            self.d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        self.console = []
        self.hidden_target = None

    # -- navigation and reading

    def open(self, path):
        """Loads a kiosk page; a load that did not produce it (see SERVER_ISSUE) is retried."""
        for attempt in range(3):
            self.d.get(self.base + path)
            if self.js("return !!(document.getElementById('conn') || document.getElementById('panels'))"):
                return
            note(f"[{self.label}] loading {path} gave {self.js('return document.title')!r}; retrying ({SERVER_ISSUE})")
        raise Failure(f"[{self.label}] {path} did not load in 3 tries")

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def button(self, button_id):
        return self.js(BUTTON_JS, button_id)

    def wait(self, predicate, timeout, what, show=None):
        """Polls predicate(self) every 50 ms up to timeout (WebDriverWait); fails with `what`."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.05).until(lambda _: predicate(self))
        except TimeoutException:
            seen = show(self) if show else ""
            raise Failure(f"[{self.label}] {what}: not seen within {timeout} s. {seen}") from None

    def wait_button(self, button_id, timeout=5.0, what=None, **expected):
        """Waits until every field of the button matches: a string for equality, a
        function for a predicate."""
        def matches(page):
            b = page.button(button_id)
            if b is None:
                return False
            for key, want in expected.items():
                have = b.get(key)
                if callable(want):
                    if not want(have):
                        return False
                elif have != want:
                    return False
            return b
        description = what or ", ".join(f"{k}={v if not callable(v) else '…'}" for k, v in expected.items())
        return self.wait(matches, timeout, f"button {button_id}: {description}",
                         show=lambda p: f"Last seen: {p.button(button_id)}")

    def wait_live(self, timeout=15.0):
        self.wait(lambda p: p.js("return document.body.dataset.conn") == "live", timeout,
                  "page connected (data-conn=live)",
                  show=lambda p: "conn={}, banner={!r}".format(*p.js(
                      "return [document.body.dataset.conn, document.getElementById('banner').textContent]")))

    def record(self):
        """Starts (or restarts) the recorder of every state the page shows."""
        self.js(RECORDER_JS)

    def records(self):
        return self.js("return window.__rec || []")

    def sent(self, button=None):
        """Commands sent since record(), as (cmd, button, fence) tuples; pings left out."""
        commands = [json.loads(text) for text in self.js("return window.__sent || []")]
        return [(c["cmd"], c.get("button"), c.get("fence")) for c in commands
                if c["cmd"] != "ping" and (button is None or c.get("button") == button)]

    def state(self):
        return self.js("return window.kioskDebug.state()")

    def notice(self):
        return self.js("return document.getElementById('name-note').textContent")

    def screenshot(self, name):
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        self.d.save_screenshot(str(path))
        return path

    def shot(self, state):
        """A screenshot of `state`, named for this page's size."""
        return self.screenshot(f"kiosk-{state}-{self.size}.png")

    def face(self, button_id):
        return self.js(FACE_JS, button_id)

    def collect_console(self):
        try:
            self.console += self.d.get_log("browser")
        except Exception:  # noqa: BLE001 - logs are a diagnostic; never the failure itself
            pass
        return self.console

    # -- gestures

    def gesture(self, build):
        """Runs one W3C action sequence in a thread; build(ActionBuilder) adds the actions."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder

        page = self

        class Gesture(threading.Thread):
            error = None

            def run(self):
                try:
                    builder = ActionBuilder(page.d)
                    build(builder)
                    builder.perform()
                except Exception as error:  # noqa: BLE001 - reported by finish()
                    self.error = error

            def finish(self, timeout=15.0):
                self.join(timeout)
                check(not self.is_alive(), f"[{page.label}] the pointer actions did not finish in {timeout} s")
                if self.error:
                    raise Failure(f"[{page.label}] pointer actions failed: {self.error}")

        thread = Gesture(daemon=True)
        thread.start()
        return thread

    def press(self, button_id, hold_s, kind="mouse", name=None, drift_to=None):
        """pointer down on the button, pause hold_s, pointer up, as one sequence. With
        drift_to=(x, y) the pointer moves there (outside the button) after 0.25 s."""
        from selenium.webdriver.common.actions import interaction
        from selenium.webdriver.common.actions.pointer_actions import PointerActions

        element = self.d.find_element("id", f"button-{button_id}")
        pointer_kind = interaction.POINTER_TOUCH if kind == "touch" else interaction.POINTER_MOUSE

        def build(builder):
            actions = PointerActions(builder.add_pointer_input(pointer_kind, name or f"{kind}-{button_id}"))
            actions.move_to(element).pointer_down()
            if drift_to:
                actions.pause(0.25).move_to_location(*drift_to).pause(max(0.0, hold_s - 0.25))
            else:
                actions.pause(hold_s)
            actions.pointer_up()

        return self.gesture(build)

    # -- visibility, through the browser's own DevTools endpoint on localhost

    def _devtools(self, method, params):
        import websocket  # websocket-client, installed with selenium

        address = self.d.capabilities["goog:chromeOptions"]["debuggerAddress"]
        version = json.load(urllib.request.urlopen(f"http://{address}/json/version", timeout=5))
        connection = websocket.create_connection(version["webSocketDebuggerUrl"], timeout=5, suppress_origin=True)
        try:
            connection.send(json.dumps({"id": 1, "method": method, "params": params}))
            while True:
                reply = json.loads(connection.recv())
                if reply.get("id") == 1:
                    return reply
        finally:
            connection.close()

    def hide(self):
        """Opens another tab in front of the page, as a phone switching apps would: the
        page gets visibilitychange -> hidden. Works while this session is busy."""
        reply = self._devtools("Target.createTarget", {"url": "about:blank"})
        self.hidden_target = reply["result"]["targetId"]

    def unhide(self):
        if self.hidden_target:
            self._devtools("Target.closeTarget", {"targetId": self.hidden_target})
            self.hidden_target = None

    def quit(self):
        try:
            self.d.quit()
        except Exception:  # noqa: BLE001 - best effort at teardown
            pass


# ------------------------------------------------------------------ checks used more than once

def check_layout(page, require_no_scroll=True):
    layout = page.js(LAYOUT_JS)
    check(layout["scrollWidth"] <= layout["vw"],
          f"[{page.label}] page scrolls sideways: scrollWidth {layout['scrollWidth']} > {layout['vw']}")
    for b in layout["buttons"]:
        check(b["w"] >= 44 and b["h"] >= 44, f"[{page.label}] button {b['id']} is {b['w']:.0f}x{b['h']:.0f}, under 44x44")
        check(b["left"] >= 0 and b["right"] <= layout["vw"] + 0.5, f"[{page.label}] button {b['id']} sticks out sideways: {b}")
        if require_no_scroll:
            check(b["bottom"] <= layout["vh"] + 0.5,
                  f"[{page.label}] button {b['id']} is below the fold ({b['bottom']:.0f} > {layout['vh']})")
    ok(f"[{page.label}] layout at {layout['vw']}x{layout['vh']}: every button at least 44x44 and on screen, no sideways scroll")


def check_contrast(page, when):
    result = page.js(CONTRAST_JS)
    check(result["checked"] > 5, f"[{page.label}] contrast: only {result['checked']} text elements found")
    check(not result["bad"], f"[{page.label}] text below WCAG AA contrast ({when}): {result['bad']}")
    ok(f"[{page.label}] {result['checked']} text elements meet WCAG AA contrast ({when})")


def check_fills(page, panel, count):
    """The buttons fill the screen: together they cover most of the viewport, reach from
    edge to edge and down to the ticker, and none is off screen or under 44x44."""
    page.open(f"/panel/{panel}")
    page.wait_live()
    # layout.js sizes the groups at the build and again, one frame later, whenever the
    # space changes (the name line and the ticker fill in as the server answers).
    def settled(p):
        layout = p.js(LAYOUT_JS)
        return layout["buttons"] and all(b["bottom"] <= layout["vh"] + 0.5 for b in layout["buttons"])
    page.wait(settled, 5, f"the layout of {panel} settled on screen", show=lambda p: p.js(LAYOUT_JS))
    check_layout(page)
    layout = page.js(LAYOUT_JS)
    buttons = layout["buttons"]
    check(len(buttons) == count, f"[{page.label}] {panel}: {len(buttons)} buttons, want {count}")
    area = sum(b["w"] * b["h"] for b in buttons) / (layout["vw"] * layout["vh"])
    span_x = (max(b["right"] for b in buttons) - min(b["left"] for b in buttons)) / layout["vw"]
    bottom = max(b["bottom"] for b in buttons) / layout["vh"]
    check(area >= 0.55 and span_x >= 0.9 and bottom >= 0.8,
          f"[{page.label}] {count} buttons do not fill {layout['vw']}x{layout['vh']}: they cover {area:.0%} "
          f"of it, span {span_x:.0%} of its width and end at {bottom:.0%} of its height")
    ok(f"[{page.label}] {count} button(s) at {layout['vw']}x{layout['vh']}: {area:.0%} of the screen, "
       f"{span_x:.0%} of its width, down to {bottom:.0%} of its height")
    return area


class IndexLinks(html.parser.HTMLParser):
    """The panel links of the raw GET / HTML: (href, title text) inside <ul id="panels">."""

    def __init__(self):
        super().__init__()
        self.links, self.depth, self.href, self.title = [], 0, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "ul" and attrs.get("id") == "panels":
            self.depth = 1
        elif self.depth and tag == "a":
            self.href = attrs.get("href")
        elif self.depth and tag == "span" and attrs.get("class") == "panel-title":
            self.title = ""

    def handle_endtag(self, tag):
        if tag == "ul":
            self.depth = 0
        elif tag == "span" and self.title is not None and self.href:
            self.links.append((self.href, self.title))
            self.title = None

    def handle_data(self, data):
        if self.title is not None:
            self.title += data


def check_dim(page, button_id, state, icon, free):
    """`button_id` (locked or offline) is clearly dimmer than the free button `free` was,
    with stripes, a dashed or dotted edge and its icon: not colour alone."""
    face = page.face(button_id)
    ratio = contrast(face["label"]["color"], face["bg"])
    check(ratio <= 0.6 * free, f"[{page.label}] {state} {button_id}: label contrast {ratio:.1f}:1, "
          f"not clearly below a free button's {free:.1f}:1")
    check(face[icon] and face[icon]["shown"], f"[{page.label}] {state} {button_id}: no {icon} icon shown: {face[icon]}")
    check("repeating-linear-gradient" in face["image"] and face["border"] in ("dashed", "dotted"),
          f"[{page.label}] {state} {button_id}: no stripes or broken edge ({face['image']}, {face['border']})")
    return ratio


def check_hold_words(page, button_id):
    """While a hold is held, no word crosses its ring: the label above, the rest below."""
    face = page.face(button_id)
    ring = face["ring"]["rect"]
    texts = {part: face[part]["rect"] for part in ("owner", "caption", "detail", "lastFired")
             if face[part] and face[part]["shown"]}
    crossing = {part: r for part, r in texts.items() if r["top"] < ring["bottom"] - 0.5}
    check(texts and not crossing and face["label"]["rect"]["bottom"] <= ring["top"] + 0.5,
          f"[{page.label}] text crosses the hold ring {ring}: {crossing or texts}, label {face['label']['rect']}")
    ok(f"[{page.label}] while {button_id} is held, its words ({', '.join(texts)}) sit below the "
       f"{ring['bottom'] - ring['top']:.0f}px ring, its label above")


OVERFLOW_JS = """
const vw = document.documentElement.clientWidth;
const over = [...document.querySelectorAll(arguments[0])].filter((el) => {
  const r = el.getBoundingClientRect();
  return r.right > vw + 0.5 || r.left < -0.5 || el.scrollWidth > el.clientWidth + 1;
}).map((el) => el.tagName + ' ' + el.textContent.slice(0, 24));
return {vw, scrollWidth: document.documentElement.scrollWidth, over,
        found: document.querySelectorAll(arguments[0]).length};
"""


OFFLINE_WHY = "return document.body.dataset.offline || null"
WHOAMI = "return document.getElementById('whoami').textContent"


def offline_banner(page):
    return page.js("const b = document.getElementById('banner'); return b.hidden ? '' : b.textContent")


KEY_JS = """
const el = document.getElementById('button-' + arguments[0]);
el.focus();
el.dispatchEvent(new KeyboardEvent(arguments[1], {key: ' ', code: 'Space', bubbles: true, cancelable: true}));
"""

RING_VISIBILITY = "return getComputedStyle(document.querySelector('#button-sos .ring-fill')).visibility"


def check_wraps(page, selector, what):
    """No sideways scroll, and every element matching `selector` inside the viewport."""
    seen = page.js(OVERFLOW_JS, selector)
    check(seen["found"] > 0, f"[{page.label}] {what}: nothing matches {selector}")
    check(seen["scrollWidth"] <= seen["vw"] and not seen["over"],
          f"[{page.label}] {what} overflows at {seen['vw']} px: scrollWidth {seen['scrollWidth']}, {seen['over']}")
    ok(f"[{page.label}] {what}: wraps at {seen['vw']} px, no sideways scroll")


PROMPT_JS = """
const prompt = document.getElementById('key-prompt');
return {shown: !!prompt && !prompt.hidden, title: document.getElementById('key-title').textContent,
        why: document.getElementById('key-why').textContent, note: document.getElementById('key-note').textContent,
        focus: document.activeElement ? document.activeElement.id : null, conn: document.body.dataset.conn,
        buttons: [...document.querySelectorAll('.btn')].map((el) => el.dataset.button),
        stored: sessionStorage.getItem('buttonarbiter.key.' + arguments[0]),
        local: Object.keys(localStorage).filter((k) => k.includes('key'))};
"""


def prompt_state(page, panel):
    return page.js(PROMPT_JS, panel)


def float_eq(a, b):
    return abs(float(a) - float(b)) < 1e-6


# ------------------------------------------------------------------ the test

def run(binary, workdir):
    shots = []
    # This run's pictures only: none left over from an earlier run (or a failure).
    for old in list(ARTIFACTS.glob("kiosk-*.png")) + list(ARTIFACTS.glob("failure-*.png")):
        old.unlink()
    config_path = Path(workdir) / "kiosk-test.json"
    config_path.write_text(json.dumps(CONFIG, ensure_ascii=False, indent=2))
    server = Arbiter(binary, config_path, workdir)
    pages = []
    peers = []
    try:
        port = server.start(0)
        base = f"http://127.0.0.1:{port}"
        print(f"arbiter {binary} on 127.0.0.1:{port}, config {config_path}")

        carol = LinePeer(port, "carol")
        peers.append(carol)
        carol.send(f"JOIN {PANEL}")
        carol.wait(rf"^OK JOIN {PANEL} ", what="JOIN answered")

        section("panel list and names")
        tablet = Page("tablet", *DESKTOP, False, base)
        pages.append(tablet)
        tablet.open("/")
        tablet.wait(lambda p: p.js("return document.querySelectorAll('#panels li[data-panel]').length")
                    == len(CONFIG["panels"]), 10, "the panel list shows every panel")
        listed = tablet.js("""return [...document.querySelectorAll('#panels li[data-panel]')].map((li) => ({
            id: li.dataset.panel, href: li.querySelector('a').getAttribute('href'),
            title: li.querySelector('.panel-title').textContent,
            members: li.querySelector('.panel-meta').dataset.members,
            meta: li.querySelector('.panel-meta').textContent}))""")
        demo = next(item for item in listed if item["id"] == PANEL)
        check(demo["href"] == f"/panel/{PANEL}" and demo["title"] == "Browser test",
              f"panel list entry for {PANEL}: {demo}")
        check(demo["members"] == "1" and "1 member" in demo["meta"], f"panel list member count (carol joined): {demo}")
        ok(f"/ lists {[item['id'] for item in listed]} with member counts and links ({demo['meta']!r})")
        vault = next(item for item in listed if item["id"] == "vault")
        check(vault["href"] == "/panel/vault" and "needs a view key" in vault["meta"] and vault["title"] == "Vault",
              f"the private panel's entry: {vault}")
        ok(f"the private panel is listed with a link to its page ({vault['meta']!r})")
        odd = next(item for item in listed if item["id"] == "one")
        check(odd["title"] == ODD_TITLE and not tablet.js("return document.querySelector('#panels button')"),
              f"the title {ODD_TITLE!r} is not shown as text: {odd}")

        section("GET / lists the panels in its own HTML, for a browser without JavaScript")
        raw = urllib.request.urlopen(base + "/", timeout=5).read().decode()
        links = IndexLinks()
        links.feed(raw)
        want = [(f"/panel/{panel['id']}", panel.get("title", panel["id"])) for panel in CONFIG["panels"]]
        check(links.links == want, f"the raw HTML of / links {links.links}, want {want}")
        check("&lt;button&gt; &amp; &quot;quotes&quot;" in raw and "<button> &" not in raw,
              "the title with markup characters is not escaped in the HTML of /")
        ok(f"the HTML of / itself links all {len(want)} panels (titles escaped: {ODD_TITLE!r} stays text); "
           "the script then updates those same items (no duplicates)")
        check_wraps(tablet, "#panels .panel-title, #panels .panel-meta", "a long panel title on the index")

        section("the index refreshes in place: focus and nodes kept")
        check(tablet.js("return document.getElementById('panels').hasAttribute('aria-live')") is False,
              "the whole panel list is aria-live (every refresh would be announced)")
        tablet.js("""for (const li of document.getElementById('panels').children) li.__kept = true;
                     document.querySelector('#panels li[data-panel=demo] a').focus();""")
        before = tablet.js("return window.kioskDebug.refreshes()")
        tablet.js("return window.kioskDebug.refresh()")  # nothing changed
        carol.send("JOIN lobby")
        carol.wait(r"^OK JOIN lobby ", what="carol joined lobby")
        # The next one is the page's own 5 s timer's, with lobby's member count changed.
        tablet.wait(lambda p: "1 member" in p.js(
            "return document.querySelector('#panels li[data-panel=lobby] .panel-meta').textContent"),
            8, "the timer's refresh showing lobby's new member")
        after = tablet.js("""const list = document.getElementById('panels');
            return {active: document.activeElement.getAttribute('href'), refreshes: window.kioskDebug.refreshes(),
                    kept: [...list.children].every((li) => li.__kept),
                    lobby: list.querySelector('li[data-panel=lobby] .panel-meta').textContent};""")
        check(after["refreshes"] >= before + 2, f"two refreshes ran: {before} -> {after['refreshes']}")
        check(after["active"] == f"/panel/{PANEL}", f"focus left the focused link over two refreshes: {after}")
        check(after["kept"], "a refresh replaced list items instead of updating them")
        check("1 member" in after["lobby"], f"lobby's new member count not shown: {after['lobby']!r}")
        carol.send("LEAVE lobby")
        carol.wait(r"^OK LEAVE lobby\b", what="carol left lobby")
        ok(f"two refreshes (the timer's changing lobby to {after['lobby']!r}): same nodes, focus stayed on the demo link")
        tablet.d.find_element("id", "name-input").clear()
        tablet.d.find_element("id", "name-input").send_keys("alice\n")
        tablet.wait(lambda p: p.js("return localStorage.getItem('buttonarbiter.name')") == "alice", 5,
                    "the name alice stored in localStorage")
        shots.append(tablet.shot("index"))

        section("long unbroken names wrap (tablet, 1280 px)")
        tablet.open("/panel/long")
        tablet.wait_live()
        check_wraps(tablet, ".group h2, #title", "a 64-character group name and a long title on the panel page")
        tablet.open("/")
        tablet.wait(lambda p: p.js("return document.querySelectorAll('#panels li[data-panel]').length")
                    == len(CONFIG["panels"]), 10, "the panel list shown again")
        tablet.d.find_element("css selector", f"#panels li[data-panel={PANEL}] a").click()
        tablet.wait(lambda p: p.d.current_url.endswith(f"/panel/{PANEL}"), 10, "the link opened the panel page")
        tablet.wait_live()
        tablet.wait(lambda p: p.js("return document.getElementById('whoami').textContent") == "You are alice.", 5,
                    "the stored name used on the panel page (?name=alice)")
        carol.wait(rf"^JOINED {PANEL} name=alice ", what="alice's page joined")
        labels = {b: tablet.button(b)["label"] for b in ["b1", "b2", "b3", "sos", "talk"]}
        check(labels == {"b1": "Button 1", "b2": "Button 2", "b3": "Button 3", "sos": SOS_LABEL, "talk": "Talk"},
              f"button labels from /api/panels: {labels}")
        ok("the name set on / is remembered (localStorage) and the panel page joins as alice; labels from /api/panels")

        phone = Page("phone", *PHONE, True, base)
        pages.append(phone)
        section("long unbroken names wrap (phone, 360 px)")
        phone.open("/")
        phone.wait(lambda p: p.js("return document.querySelectorAll('#panels li[data-panel]').length")
                   == len(CONFIG["panels"]), 10, "the panel list on the phone")
        check_wraps(phone, "#panels .panel-title, #panels .panel-meta", "a long panel title on the index")
        shots.append(phone.shot("index"))
        phone.open("/panel/long")
        phone.wait_live()
        check_wraps(phone, ".group h2, #title", "a 64-character group name and a long title on the panel page")
        shots.append(phone.shot("long-names"))

        # Here, before the phone's two-finger gesture: after a multi-touch action
        # sequence, ChromeDriver's touches on a newly loaded page reach it as a tap only
        # (mousedown and click, no pointer events), so no press could start there.
        section("a panel whose buttons need a press key (phone, touch)")
        phone.open("/panel/guarded")
        phone.wait_live()
        check(not prompt_state(phone, "guarded")["shown"], "the press-keyed panel asked for a key just to watch")
        phone.record()
        phone.press("g1", 0.5, kind="touch").finish()
        phone.wait(lambda p: prompt_state(p, "guarded")["shown"], 5, "the key prompt after a forbidden press",
                   show=lambda p: (prompt_state(p, "guarded"), p.sent()))
        seen = prompt_state(phone, "guarded")
        check(seen["title"] == "This panel needs a key" and "press" in seen["why"] and seen["focus"] == "key-input",
              f"the prompt after the forbidden press: {seen}")
        check(all(r["b"]["g1"]["state"] != "pressed" for r in phone.records()), "the forbidden press lit g1")
        check(phone.sent() == [("down", "g1", None)], f"the forbidden press sent {phone.sent()}")
        ok(f"pressing without the key: DENIED reason=forbidden, g1 never lit, the prompt asks ({seen['why']!r})")
        shots.append(phone.shot("key-prompt"))
        check_contrast(phone, "the key prompt")
        phone.d.find_element("id", "key-input").send_keys(PRESS_KEY + "\n")
        phone.wait(lambda p: not prompt_state(p, "guarded")["shown"], 5, "the prompt gone after the press key",
                   show=lambda p: prompt_state(p, "guarded"))
        seen = prompt_state(phone, "guarded")
        check(seen["stored"] == PRESS_KEY and seen["focus"] == "button-g1",
              f"after the press key (kept, focus back on g1): {seen}")
        phone.wait_live()
        phone.record()
        phone.press("g1", 1.0, kind="touch").finish()
        phone.wait_button("g1", state="idle")
        check(any(r["b"]["g1"]["state"] == "pressed" and r["b"]["g1"]["mine"] == "1" and r["b"]["g1"]["pressed"] == "true"
                  for r in phone.records()), "g1 was not granted with the press key")
        sent = phone.sent()
        check(len(sent) == 2 and sent[0] == ("down", "g1", None) and sent[1][:2] == ("up", "g1") and sent[1][2],
              f"the keyed press sent {sent}")
        ok("with the press key the same press is granted (aria-pressed=true), then released with its fence")

        section("the phone on the demo panel")
        phone.open(f"/panel/{PANEL}")
        phone.wait_live()
        mark = carol.mark()
        phone.d.find_element("id", "name-input").clear()
        phone.d.find_element("id", "name-input").send_keys("bob\n")
        phone.wait(lambda p: p.js("return document.getElementById('whoami').textContent") == "You are bob.", 5,
                   "HELLO bob answered on the live socket")
        phone.open(f"/panel/{PANEL}")  # reload: the name must survive it
        phone.wait_live()
        phone.wait(lambda p: p.js("return document.getElementById('whoami').textContent") == "You are bob.", 5,
                   "the name bob remembered across a reload")
        carol.wait(rf"^JOINED {PANEL} name=bob ", since=mark, what="bob's reloaded page joined with its stored name")
        tablet.wait(lambda p: p.js("return document.getElementById('members').textContent").strip() == "· 3 members",
                    5, "the tablet counts 3 members (carol, alice, bob)",
                    show=lambda p: p.js("return document.getElementById('members').textContent"))
        ok("the phone renames itself with HELLO, keeps the name across a reload; member counts follow JOINED/LEFT")

        section("layout and contrast")
        free = {}
        for page in (tablet, phone):
            check_layout(page)
            check_contrast(page, "all idle")
            face = page.face("b1")
            free[page.label] = contrast(face["label"]["color"], face["bg"])

        section("the buttons fill the screen with 1, 5 and 12 buttons, in both orientations")
        carol.send("JOIN twelve")
        carol.wait(r"^OK JOIN twelve ", what="carol joined twelve")
        cjk = shutil.which("fc-list") and subprocess.run(["fc-list", ":lang=ja"], capture_output=True,
                                                           text=True).stdout.strip()
        for page in (tablet, phone):
            check_fills(page, "one", 1)
            shown, name = page.face("alarm")["label"]["text"], page.d.find_element("id", "button-alarm").accessible_name
            check(name == "緊急", f"[{page.label}] the accessible name of a label without a font: {name!r}")
            if cjk:
                check(shown == "緊急", f"[{page.label}] with a CJK font the label 緊急 shows as {shown!r}")
            else:
                # No CJK font on this machine (a bare kiosk image): boxes would show.
                check(shown == "alarm", f"[{page.label}] without a CJK font the label 緊急 shows as {shown!r}, "
                      "not its button id")
            shots.append(page.shot("one-button"))
            check_fills(page, "twelve", 12)
            check_contrast(page, "twelve buttons")
            # A hold in progress beside its locked neighbour, for the picture; cancelled
            # (CANCEL never fires a hold) once the ring has visibly moved.
            mark = carol.mark()
            carol.send("DOWN twelve fire")
            carol.wait(r"^GRANTED twelve fire ", since=mark, what="carol holds twelve's fire")
            page.wait_button("fire", state="pressed", progress=lambda v: v is not None and float(v) >= 0.3)
            check_hold_words(page, "fire")
            shots.append(page.shot("twelve-buttons-hold"))
            carol.send("CANCEL twelve fire")
            carol.wait(r"^RELEASED twelve fire reason=cancel ", since=mark, what="the hold cancelled")
            page.wait_button("fire", state="idle")
            check_fills(page, PANEL, 5)
            shown = page.face("sos")["label"]["text"]
            check(shown == (SOS_LABEL if cjk else "SOS"), f"[{page.label}] the label {SOS_LABEL!r} shows as {shown!r}")
        ok(f"labels without a font ({'a CJK font is installed' if cjk else 'no CJK font here'}): "
           "the drawable part or the button id is shown, the accessible name keeps the label")
        phone.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": PHONE[1], "height": PHONE[0], "deviceScaleFactor": 2, "mobile": True})
        try:
            for panel, count in (("twelve", 12), (PANEL, 5)):
                check_fills(phone, panel, count)
        finally:
            phone.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 2, "mobile": True})
        check_fills(phone, PANEL, 5)  # upright again
        for page in (tablet, phone):
            page.record()

        section("a mouse press on the tablet, seen by the phone and the socket peer")
        mark = carol.mark()
        press = tablet.press("b1", 2.0)
        carol.wait(rf"^PRESSED {PANEL} b1 owner=alice ", since=mark, what="PRESSED b1 owner=alice")
        phone.wait_button("b1", state="pressed", owner="alice", status=lambda s: "alice" in s)
        for other in ("b2", "b3"):
            phone.wait_button(other, state="locked", owner="alice",
                              status=lambda s: "alice" in s and "Button 1" in s)
        ok("phone: b1 held by alice, b2 and b3 locked showing 'alice holds Button 1'; peer saw PRESSED owner=alice")
        press.finish()
        carol.wait(rf"^RELEASED {PANEL} b1 reason=up owner=alice ", since=mark, what="RELEASED b1 reason=up")
        phone.wait_button("b1", state="idle")
        phone.wait_button("b2", state="idle")
        own = [r["b"]["b1"] for r in tablet.records()]
        check(any(b["state"] == "pressed" and b["mine"] == "1" and "alice (you)" in b["status"] for b in own),
              f"tablet never showed b1 as held by alice (you): {own[-3:]}")
        fence = int(carol.since(mark, rf"^PRESSED {PANEL} b1 ")[0].split("fence=")[1].split()[0])
        check(tablet.sent() == [("down", "b1", None), ("up", "b1", fence)], f"tablet sent {tablet.sent()}")
        ok("pointer up released it (RELEASED reason=up) with the grant's fence; the tablet showed 'held by alice (you)'")
        check(any(b["pressed"] == "true" and b["mine"] == "1" for b in own)
              and all(b["pressed"] != "true" or b["mine"] == "1" for b in own),
              f"tablet: aria-pressed=true not (only) on its own press: {[(b['state'], b['mine'], b['pressed']) for b in own]}")
        seen = [r["b"] for r in phone.records()]
        check(all(h["b1"]["pressed"] == "false" for h in seen),
              f"phone: aria-pressed on a button alice holds: {[h['b1']['pressed'] for h in seen]}")
        check(any(h["b1"]["state"] == "pressed" and h["b1"]["unavailable"] == "true"
                  and h["b2"]["state"] == "locked" and h["b2"]["unavailable"] == "true" for h in seen),
              f"phone: b1 (held by alice) and b2 (locked) not aria-disabled: {seen[-1]}")
        announced = tablet.records()[-1]["announce"]
        check("Button 1: pressed, you hold it." in announced, f"tablet's live region after its press: {announced!r}")
        check(not phone.records()[-1]["announce"], f"phone announced alice's press: {phone.records()[-1]['announce']!r}")
        ok("aria-pressed=true only on the presser's page; another's press is aria-disabled; "
           f"the presser's live region said {announced.strip()!r}, the other page nothing")

        section("a socket-peer DOWN, seen by both pages; a press into the busy group lights nothing")
        for page in (tablet, phone):
            page.record()
        mark = carol.mark()
        carol.send(f"DOWN {PANEL} b2")
        carol.wait(rf"^GRANTED {PANEL} b2 fence=\d+", since=mark)
        for page in (tablet, phone):
            page.wait_button("b2", state="pressed", owner="carol", status=lambda s: "carol" in s)
            page.wait_button("b1", state="locked", owner="carol", status=lambda s: "carol holds Button 2" in s)
            page.wait_button("b3", state="locked", owner="carol")
        ok("both pages: b2 held by carol, b1 and b3 locked by carol")
        for page in (tablet, phone):
            held, locked = page.button("b2"), page.button("b1")
            check(held["pressed"] == "false" and held["unavailable"] == "true",
                  f"[{page.label}] b2 held by another session: aria-pressed={held['pressed']} aria-disabled={held['unavailable']}")
            check(locked["pressed"] == "false" and locked["unavailable"] == "true" and not locked["disabled"],
                  f"[{page.label}] b1 locked: aria-pressed={locked['pressed']} aria-disabled={locked['unavailable']}")
            names = {b: page.d.find_element("id", f"button-{b}").accessible_name for b in ("b1", "b2", "sos", "talk")}
            check(names == {"b1": "Button 1", "b2": "Button 2", "sos": SOS_LABEL, "talk": "Talk"},
                  f"[{page.label}] accessible names are not just the labels: {names}")
            description = page.js("""const el = document.getElementById('button-b2');
                return document.getElementById(el.getAttribute('aria-describedby')).textContent""")
            check(description == "held by carol" or "carol" in description, f"[{page.label}] b2's description: {description!r}")
        ok("carol's b2: aria-pressed=false, aria-disabled=true (still focusable); accessible names are the labels, "
           "the status is the description")
        for page in (tablet, phone):  # the tap's short FIRED flash over, for the pictures
            page.wait_button("b2", fired="0", status=lambda s: s == "held by carol")
            shots.append(page.shot("held-by-another"))

        section("across a room: the owner is the biggest word; locked buttons are dim, striped, with a padlock")
        for page in (tablet, phone):
            face = page.face("b2")
            owner, label = face["owner"], face["label"]
            check(owner and owner["shown"] and owner["text"] == "carol", f"[{page.label}] b2 shows no owner: {owner}")
            own = [face[part]["size"] for part in ("label", "caption", "detail") if face[part] and face[part]["shown"]]
            sizes = [page.face(b)[part]["size"] for b in ("b1", "b2", "b3", "sos", "talk")
                     for part in ("label", "caption", "detail") if page.face(b)[part] and page.face(b)[part]["shown"]]
            # 36 CSS px is about 9.5 mm: a capital about 7 mm high, which reads at 3 m.
            check(owner["size"] >= 36 and owner["size"] >= 1.5 * max(own) and owner["size"] >= max(sizes),
                  f"[{page.label}] the owner's name is {owner['size']:.0f}px; the rest of b2 up to {max(own):.0f}px, "
                  f"the page's other text up to {max(sizes):.0f}px")
            ratio = check_dim(page, "b1", "locked", "lock", free[page.label])
            ok(f"[{page.label}] 'carol' at {owner['size']:.0f}px (was 14px; the label {label['size']:.0f}px); "
               f"locked b1 at {ratio:.1f}:1 against {free[page.label]:.1f}:1 free, striped, dashed, padlock")
        for page in (tablet, phone):
            check_contrast(page, "one button held, its group locked")
        mark = carol.mark()
        tablet.press("b1", 0.6).finish()
        tablet.wait(lambda p: any(r["b"]["b1"]["denied"] == "1" for r in p.records()), 5,
                    "the refused press noted on b1")
        seen = [r["b"]["b1"] for r in tablet.records()]
        check(all(b["state"] != "pressed" for b in seen), f"tablet lit b1 although the server refused it: {seen}")
        check(any("busy" in b["status"] and "carol holds Button 2" in b["status"] for b in seen),
              f"the refusal does not say who holds the group: {seen[-3:]}")
        check(not carol.since(mark, rf"^PRESSED {PANEL} b1 "), "the server granted b1 while carol held b2")
        check(tablet.sent() == [("down", "b1", None)], f"the refused press sent {tablet.sent()}, not just its DOWN")
        ok("tablet's press on b1 was DENIED: b1 never lit, it said 'busy · carol holds Button 2', no UP sent")
        announced = tablet.records()[-1]["announce"]
        check("Button 1: not pressed, carol holds Button 2." in announced, f"the refusal was not announced: {announced!r}")
        mark = carol.mark()
        carol.send(f"UP {PANEL} b2")
        carol.wait(rf"^RELEASED {PANEL} b2 reason=up ", since=mark)
        for page in (tablet, phone):
            for b in ("b1", "b2", "b3"):
                page.wait_button(b, state="idle")
        ok("peer UP: both pages idle again")

        section("my press and another's look clearly different")
        for me, other in ((tablet, phone), (phone, tablet)):
            # Space held on a focused button (a key event the page takes as a press), so
            # this WebDriver session stays free to look while the press lasts.
            me.js(KEY_JS, "b3", "keydown")
            # A tap fires at once: its short FIRED flash over, the press itself shows.
            me.wait_button("b3", state="pressed", mine="1", fired="0")
            other.wait_button("b3", state="pressed", mine="0", fired="0")
            me.wait_button("b1", status=lambda s: s.startswith("locked"), what="b1 locked (an earlier refusal's note gone)")
            mine, theirs = me.face("b3"), other.face("b3")
            locked = me.face("b1")["detail"]["text"]
            check(locked == "you hold Button 3", f"[{me.label}] a button locked by its own press says {locked!r}")
            apart = contrast(mine["bg"], theirs["bg"])
            check(apart >= 3, f"my press ({mine['bg']}) and another's ({theirs['bg']}) are only {apart:.1f}:1 apart")
            check(mine["owner"]["text"] == "YOU" and theirs["owner"]["text"] == me.state()["name"],
                  f"the owners shown: mine {mine['owner']['text']!r}, theirs {theirs['owner']['text']!r}")
            check(contrast(mine["owner"]["color"], mine["bg"]) >= 4.5, f"'YOU' is hard to read: {mine}")
            shots.append(me.shot("mine"))
            me.js(KEY_JS, "b3", "keyup")
            for page in (tablet, phone):
                page.wait_button("b3", state="idle")
            ok(f"[{me.label}] its own press: {mine['bg']} with 'YOU'; [{other.label}] sees {theirs['bg']} with "
               f"{theirs['owner']['text']!r}: {apart:.1f}:1 apart in lightness, and in words")

        section("two fingers on two buttons of one group (phone, touch)")
        for page in (tablet, phone):
            page.record()
        mark = carol.mark()
        from selenium.webdriver.common.actions import interaction
        from selenium.webdriver.common.actions.pointer_actions import PointerActions
        b1 = phone.d.find_element("id", "button-b1")
        b3 = phone.d.find_element("id", "button-b3")

        def two_fingers(builder):
            first = PointerActions(builder.add_pointer_input(interaction.POINTER_TOUCH, "finger1"))
            second = PointerActions(builder.add_pointer_input(interaction.POINTER_TOUCH, "finger2"))
            first.move_to(b1).pointer_down().pause(1.5).pointer_up()
            second.move_to(b3).pointer_down().pause(1.5).pointer_up()

        fingers = phone.gesture(two_fingers)
        winner = carol.wait(rf"^PRESSED {PANEL} (b1|b3) owner=bob ", since=mark, what="one PRESSED").group(1)
        loser = "b3" if winner == "b1" else "b1"
        tablet.wait_button(winner, state="pressed", owner="bob")
        tablet.wait_button(loser, state="locked", owner="bob")
        fingers.finish()
        carol.wait(rf"^RELEASED {PANEL} {winner} reason=up owner=bob ", since=mark)
        pressed = carol.since(mark, rf"^PRESSED {PANEL} ")
        check(len(pressed) == 1, f"two fingers on one group: the server granted {pressed}")
        history = [r["b"] for r in phone.records()]
        check(not any(h["b1"]["state"] == "pressed" and h["b3"]["state"] == "pressed" for h in history),
              "the phone lit both buttons at once")
        check(any(h[winner]["state"] == "pressed" for h in history), f"the phone never lit {winner}")
        check(all(h[loser]["state"] != "pressed" for h in history), f"the phone lit {loser} as well")
        sent = phone.sent()
        check(sorted(sent[:2]) == [("down", "b1", None), ("down", "b3", None)] and len(sent) == 3
              and sent[2][:2] == ("up", winner), f"two fingers sent {sent}: want both DOWNs, one UP ({winner})")
        for page in (tablet, phone):
            for b in ("b1", "b3"):
                page.wait_button(b, state="idle")
        ok(f"one grant ({winner}); {loser} never lit on the phone, showed locked on the tablet; both free after the lift")

        section(f"the hold ring ({HOLD_MS} ms) drawn from the server's events; the finger drifts off the button")
        for page in (tablet, phone):
            page.record()
        mark = carol.mark()
        hold = tablet.press("sos", 2.4, drift_to=(5, 5))
        pressed = carol.wait(rf"^PRESSED {PANEL} sos owner=alice \S+ fence=(\d+)", since=mark)
        fence = pressed.group(1)
        phone.wait_button("sos", state="pressed", progress=lambda v: v is not None and 0 < float(v) < 1,
                          what="the phone's ring partly filled")
        check(phone.js(RING_VISIBILITY) == "visible", "the ring's fill is hidden while it fills")
        check_hold_words(phone, "sos")
        phone.wait_button("sos", midway="1", what="MIDWAY shown on the phone")
        carol.wait(rf"^FIRED {PANEL} sos owner=alice \S+ fence={fence} ", since=mark, what="FIRED", timeout=HOLD_MS / 1000 + 5)
        phone.wait_button("sos", fired="1", status=lambda s: "FIRED" in s and "alice" in s)
        phone.wait(lambda p: p.js("return document.getAnimations().every((a) => a.playState !== 'running')"),
                   2, "the FIRED pop animation settled (for the picture)")
        shots.append(phone.shot("hold-fired"))
        fired_at = carol.wait(rf"^FIRED {PANEL} sos ", since=mark).at
        hold.finish()
        carol.wait(rf"^RELEASED {PANEL} sos reason=fired owner=alice fence={fence} ", since=mark)
        events = carol.since(mark, rf"^(PROGRESS|MIDWAY|FIRED|RELEASED) {PANEL} sos ")
        check(sum(line.startswith("FIRED") for line in events) == 1, f"not exactly one FIRED: {events}")
        server_values = [float(m) for m in re.findall(r"^PROGRESS \S+ sos value=([\d.]+)", "\n".join(events), re.M)]
        check(server_values and server_values[-1] == 1.0, f"the server's PROGRESS values: {server_values}")
        for page in (tablet, phone):
            records = [r["b"]["sos"] for r in page.records()]
            shown = [float(b["progress"]) for b in records if b["progress"] not in (None, "0")]
            strange = [v for v in shown if not any(float_eq(v, s) for s in server_values)]
            check(not strange, f"[{page.label}] ring values the server never sent (a timer of its own?): {strange}")
            distinct = sorted(set(shown))
            check(len([v for v in distinct if 0 < v < 1]) >= 3, f"[{page.label}] the ring did not fill step by step: {distinct}")
            check(shown == sorted(shown), f"[{page.label}] the ring went backwards during one hold: {shown}")
            first_midway = next((i for i, b in enumerate(records) if b["midway"] == "1"), None)
            first_half = next((i for i, b in enumerate(records) if float(b["progress"] or 0) >= 0.5), None)
            check(first_midway is not None and first_half is not None and first_midway <= first_half,
                  f"[{page.label}] MIDWAY not shown before the ring passed half ({first_midway}, {first_half})")
            fired = [b for b in records if b["fired"] == "1"]
            check(fired and all(float(b["progress"]) == 1.0 and float(b["ring"]) == 0 for b in fired),
                  f"[{page.label}] FIRED not shown, or shown without a full ring: {fired[:2]}")
            ok(f"[{page.label}] ring showed only server values ({len(distinct)} steps, {distinct[0]:.3f}..{distinct[-1]:.3f}), "
               f"MIDWAY before half, FIRED with a full ring")
        check(tablet.sent("sos") == [("down", "sos", None), ("up", "sos", int(fence))], f"tablet sent {tablet.sent('sos')}")
        fired_texts = {page.label: {b["status"] for b in (r["b"]["sos"] for r in page.records()) if b["fired"] == "1"}
                       for page in (tablet, phone)}
        check(fired_texts["tablet"] == {"FIRED by alice (you)"} and fired_texts["phone"] == {"FIRED by alice"},
              f"FIRED texts (the presser's own page says '(you)'): {fired_texts}")
        announced = tablet.records()[-1]["announce"]
        check(f"{SOS_LABEL}: fired." in announced, f"the tablet did not announce its hold firing: {announced!r}")
        check(not tablet.notice(), f"lifting the finger after the fire showed a notice: {tablet.notice()!r}")
        ok("the hold fired although the pointer left the button at 0.25 s (pointer capture); lifting after FIRED is quiet")

        section("a fire does not vanish: the last fire stays on the button, and in the ticker")
        for page in (tablet, phone):
            page.wait_button("sos", fired="0", what="the FIRED flash over")
        # The claim is about what shows 2 s later: bounded, and only what is left of 2 s.
        time.sleep(max(0.0, 2.0 - (time.monotonic() - fired_at)))
        clock = r"\d\d:\d\d:\d\d"
        for page, who in ((tablet, "alice \\(you\\)"), (phone, "alice")):
            last = page.face("sos")["lastFired"]
            check(last and last["shown"] and re.fullmatch(rf"last fired: sos by {who} at {clock}", last["text"]),
                  f"[{page.label}] {time.monotonic() - fired_at:.1f} s after FIRED the hold shows {last}")
            # Bold on red, and not small print (it was 14 px on the desktop, 12 on the phone).
            least = 18 if page is tablet else 14
            check(last["size"] >= least, f"[{page.label}] the last-fired line is {last['size']} px, under {least}")
            ticker = page.js("return [...document.querySelectorAll('#ticker li')].map((li) => li.textContent)")
            check(any(re.fullmatch(rf"{clock}SOS fired by alice", line) for line in ticker),
                  f"[{page.label}] the ticker has no line for the fire: {ticker}")
        ok(f"{time.monotonic() - fired_at:.1f} s after FIRED both pages still say {last['text']!r} "
           f"({last['size']:.0f} px on the phone); the ticker says {ticker[0]!r}")
        shots.append(phone.shot("last-fired"))
        shots.append(tablet.shot("last-fired"))
        tablet.open(f"/panel/{PANEL}")  # a page opened later learns it from HISTORY
        tablet.wait_live()
        tablet.wait(lambda p: re.fullmatch(rf"last fired: sos by alice at {clock}", p.face("sos")["lastFired"]["text"]),
                    5, "the last fire after a reload", show=lambda p: p.face("sos")["lastFired"])
        ok("a page opened after the fire shows it too (from HISTORY)")

        section("an early release empties the ring and fires nothing (phone, touch)")
        for page in (tablet, phone):
            page.record()
        mark = carol.mark()
        phone.press("sos", 0.6, kind="touch").finish()
        released = carol.wait(rf"^RELEASED {PANEL} sos reason=up owner=bob fence=(\d+)", since=mark)
        check(not carol.since(mark, rf"^FIRED {PANEL} sos "), "an early release fired")
        for page in (tablet, phone):
            page.wait_button("sos", state="idle", progress="0", ring="100", what="ring emptied after the early release")
            check(page.js(RING_VISIBILITY) == "hidden", f"[{page.label}] the empty ring still draws its fill (a dot at 12 o'clock)")
            records = [r["b"]["sos"] for r in page.records()]
            # From the press on (the previous hold's FIRED flash may still be on screen
            # when recording starts; the new PRESSED clears it).
            start = next((i for i, b in enumerate(records) if b["state"] == "pressed"), None)
            check(start is not None, f"[{page.label}] never showed the early press")
            records = records[start:]
            check(any(b["progress"] not in (None, "0") for b in records), f"[{page.label}] the ring never moved during 0.6 s")
            check(all(b["fired"] != "1" for b in records), f"[{page.label}] FIRED shown for an early release")
        ok(f"RELEASED reason=up (fence {released.group(1)}), no FIRED: the ring emptied on both pages")

        section("press-to-talk (phone, touch)")
        mark = carol.mark()
        phone.press("talk", 0.05, kind="touch").finish()
        carol.wait(rf"^TAPPED {PANEL} talk owner=bob ", since=mark, what="TAPPED")
        for page in (tablet, phone):
            page.wait_button("talk", talk="tapped", status=lambda s: "tap" in s)
        ok("a quick tap: TAPPED, shown as a tap on both pages")

        for page in (tablet, phone):
            page.record()
        mark = carol.mark()
        talk = phone.press("talk", 1.2, kind="touch")
        started = carol.wait(rf"^STARTED {PANEL} talk owner=bob ", since=mark, what="STARTED")
        tablet.wait_button("talk", talk="talking", status=lambda s: "bob" in s and "talking" in s)
        talk.finish()
        stopped = carol.wait(rf"^STOPPED {PANEL} talk owner=bob \S+ \S+ held_ms=(\d+) discarded=(\w+) reason=up ",
                             since=mark, what="STOPPED at the release")
        held_ms = int(stopped.group(1))
        # Pressed 1.2 s, STARTED at 0.35 s: about 850 ms of talk. The seed report's bug
        # (a stop at the long-press minimum, finger still down) would make this ~0.
        check(held_ms >= 600 and stopped.group(2) == "false", f"STOPPED {held_ms} ms discarded={stopped.group(2)}")
        check(stopped.at - started.at >= 0.6, f"STOPPED came {stopped.at - started.at:.2f} s after STARTED, before the lift")
        seconds = f"{held_ms / 1000:.2f} s"
        for page in (tablet, phone):
            page.wait_button("talk", talk="stopped", status=lambda s, t=seconds: "stopped" in s and t in s)
        history = [r["b"]["talk"]["talk"] for r in phone.records()]
        check("talking" in history and "stopped" in history and history.index("talking") < history.index("stopped"),
              f"phone talk states: {history}")
        ok(f"a long press: STARTED, talking until the finger lifted, then STOPPED held_ms={held_ms} (shown '{seconds}')")

        phone.record()
        mark = carol.mark()
        talk = phone.press("talk", 4.0, kind="touch")
        carol.wait(rf"^STARTED {PANEL} talk owner=bob ", since=mark, what="STARTED")
        phone.hide()
        try:
            carol.wait(rf"^CANCELLED {PANEL} talk owner=bob ", since=mark, what="CANCELLED when the page was hidden")
            carol.wait(rf"^RELEASED {PANEL} talk reason=cancel owner=bob ", since=mark)
            tablet.wait_button("talk", talk="cancelled", state="idle")
        finally:
            phone.unhide()
        talk.finish()
        phone.wait_button("talk", talk="cancelled", state="idle")
        check(not carol.since(mark, rf"^STOPPED {PANEL} talk "), "a hidden page's talk was STOPPED, not CANCELLED")
        check([c[:2] for c in phone.sent()] == [("down", "talk"), ("cancel", "talk")],
              f"the phone sent {phone.sent()}: want DOWN, then CANCEL on hiding, and nothing at the later lift")
        ok("the page hidden while talking sent CANCEL: CANCELLED + RELEASED reason=cancel; the later lift sent nothing")

        section("keyboard (tablet): Space on a focused button")
        from selenium.webdriver.common.keys import Keys
        tablet.record()
        mark = carol.mark()
        tablet.js("document.getElementById('button-b3').focus()")

        def space(builder):
            builder.key_action.key_down(Keys.SPACE).pause(1.5).key_up(Keys.SPACE)

        key = tablet.gesture(space)
        carol.wait(rf"^PRESSED {PANEL} b3 owner=alice ", since=mark, what="PRESSED by Space")
        phone.wait_button("b3", state="pressed", owner="alice")
        key.finish()
        carol.wait(rf"^RELEASED {PANEL} b3 reason=up owner=alice ", since=mark, what="RELEASED by Space keyup")
        phone.wait_button("b3", state="idle")
        check(len(carol.since(mark, rf"^PRESSED {PANEL} ")) == 1, "Space produced more than one press")
        check([c[:2] for c in tablet.sent()] == [("down", "b3"), ("up", "b3")], f"Space sent {tablet.sent()}")
        ok("Space keydown -> DOWN, keyup -> UP")
        # Auto-repeat and the long-press menu, with synthetic events (WebDriver cannot
        # make a key repeat): one DOWN, one UP; the menu's default prevented.
        tablet.record()
        mark = carol.mark()
        touch = tablet.js("""
            const el = document.getElementById('button-b2');
            el.focus();
            const key = (type, repeat) => el.dispatchEvent(new KeyboardEvent(type,
                {key: ' ', code: 'Space', repeat, bubbles: true, cancelable: true}));
            key('keydown', false); key('keydown', true); key('keydown', true); key('keydown', true);
            key('keyup', false);
            const menu = new MouseEvent('contextmenu', {bubbles: true, cancelable: true});
            el.dispatchEvent(menu);
            const style = getComputedStyle(el);
            return {menu: menu.defaultPrevented, touchAction: style.touchAction, select: style.userSelect};""")
        carol.wait(rf"^RELEASED {PANEL} b2 reason=up owner=alice ", since=mark, what="RELEASED after the repeats")
        check([c[:2] for c in tablet.sent()] == [("down", "b2"), ("up", "b2")],
              f"auto-repeated keydowns sent {tablet.sent()}")
        check(touch == {"menu": True, "touchAction": "none", "select": "none"},
              f"buttons must block the context menu, touch panning and selection: {touch}")
        ok("auto-repeated keydowns send nothing more; context menu blocked; touch-action and user-select none")

        section("a seq gap makes the page JOIN again")
        before = tablet.state()
        tablet.js("window.kioskDebug.forgetLastEvent()")
        mark = carol.mark()
        carol.send(f"DOWN {PANEL} b1")
        carol.wait(rf"^PRESSED {PANEL} b1 owner=carol ", since=mark)
        tablet.wait(lambda p: p.state()["snapshots"] == before["snapshots"] + 1, 5, "a fresh snapshot after the gap",
                    show=lambda p: p.state())
        tablet.wait_button("b1", state="pressed", owner="carol")
        carol.send(f"UP {PANEL} b1")
        last_seq = int(carol.wait(rf"^RELEASED {PANEL} b1 .* seq=(\d+)", since=mark).group(1))
        tablet.wait_button("b1", state="idle")
        tablet.wait(lambda p: p.state()["seq"] == last_seq, 5, f"the tablet at seq {last_seq}", show=lambda p: p.state())
        ok(f"gap seen -> JOIN -> snapshot #{before['snapshots'] + 1}, in step again at seq {last_seq}")

        section("the server is killed and restarted on the same port")
        for page in (tablet, phone):
            page.collect_console()
        carol.send(f"DOWN {PANEL} b2")
        for page in (tablet, phone):
            page.wait_button("b2", state="pressed", owner="carol")
        sessions = {page.label: page.state()["session"] for page in (tablet, phone)}
        tablet.js("document.getElementById('button-b3').focus()")
        server.kill()
        for page in (tablet, phone):
            page.wait(lambda p: p.js("return document.body.dataset.conn") == "offline", 10, "shows disconnected")
            page.wait(lambda p: all(p.button(b)["disabled"] for b in ("b1", "b2", "b3", "sos", "talk")), 5,
                      "every button disabled while disconnected")
            banner = offline_banner(page)
            check("Disconnected" in banner and "Reconnecting in" in banner, f"[{page.label}] banner: {banner!r}")
            check("unreachable" in banner and "shut down" not in banner and page.js(OFFLINE_WHY) == "lost",
                  f"[{page.label}] after kill -9 the banner says {banner!r} ({page.js(OFFLINE_WHY)})")
            check(page.js(WHOAMI) == "", f"[{page.label}] the old session's name is still shown: {page.js(WHOAMI)!r}")
            check_dim(page, "b1", "offline", "offline", free[page.label])
            shots.append(page.shot("unreachable"))
        check_contrast(phone, "disconnected")
        ok(f"after kill -9 both pages say the server is unreachable ({banner!r}); every button disabled, "
           "dim, striped, dotted, with the unplugged icon; 'You are …' gone")
        carol.close()
        server.start(port)
        for page in (tablet, phone):
            page.wait_live(timeout=25)
            page.wait_button("b2", state="idle", disabled=False, what="fresh snapshot: b2 idle and enabled")
            state = page.state()
            check(state["session"] != sessions[page.label], f"[{page.label}] still on the old session")
        check(tablet.js("return document.getElementById('whoami').textContent") == "You are alice.",
              "the tablet lost its name over the restart")
        ok("both pages reconnected by themselves with a fresh snapshot (b2 idle), names kept")
        focused = tablet.js("return document.activeElement.id")
        check(focused == "button-b3", f"the tablet's focus was not given back to b3 after the reconnect: {focused!r}")
        ok("focus went back to the button that had it (b3) once the tablet was live again")
        dave = LinePeer(port, "dave")
        peers.append(dave)
        dave.send(f"JOIN {PANEL}")
        dave.wait(rf"^OK JOIN {PANEL} ")
        mark = dave.mark()
        again = tablet.press("b1", 1.5)
        dave.wait(rf"^PRESSED {PANEL} b1 owner=alice ", since=mark)
        phone.wait_button("b1", state="pressed", owner="alice")
        again.finish()
        dave.wait(rf"^RELEASED {PANEL} b1 reason=up owner=alice ", since=mark)
        ok("pressing works again after the restart")

        section("a clean shutdown (SIGTERM) is told apart from a lost server")
        mark = dave.mark()
        dave.send(f"DOWN {PANEL} b2")
        for page in (tablet, phone):
            page.wait_button("b2", state="pressed", owner="dave")
        server.stop()  # SIGTERM: releases, OK BYE to line peers, close 1001 to WebSockets
        dave.wait(rf"^RELEASED {PANEL} b2 reason=shutdown ", since=mark, what="RELEASED reason=shutdown")
        dave.wait(r"^OK BYE reason=shutdown", since=mark, what="the goodbye")
        for page in (tablet, phone):
            page.wait(lambda p: p.js(OFFLINE_WHY) == "shutdown", 10, "the page offline after the shutdown",
                      show=lambda p: (p.js(OFFLINE_WHY), offline_banner(p)))
            banner = offline_banner(page)
            check("shut down" in banner and "unreachable" not in banner,
                  f"[{page.label}] after SIGTERM the banner says {banner!r}")
            check(page.js(WHOAMI) == "", f"[{page.label}] the old session's name is still shown: {page.js(WHOAMI)!r}")
            page.wait(lambda p: all(p.button(b)["disabled"] and p.button(b)["state"] == "offline"
                                    for b in ("b1", "b2", "b3", "sos", "talk")), 5, "every button offline")
            ticker = page.js("return document.querySelector('#ticker li').textContent")
            check("the server shut down" in ticker, f"[{page.label}] the ticker's last line: {ticker!r}")
            shots.append(page.shot("shutdown"))
        ok(f"after SIGTERM both pages say so ({banner!r}), not 'unreachable'")
        dave.close()
        server.start(port)
        for page in (tablet, phone):
            page.wait_live(timeout=25)
            check(page.js(OFFLINE_WHY) is None and offline_banner(page) == "", f"[{page.label}] still offline-looking")
        dave = LinePeer(port, "dave")
        peers.append(dave)
        ok("both pages live again after the restart, the banner gone")

        section("a panel private to a view key (tablet)")
        dave.send(f"HELLO dave key={VIEW_KEY}")
        dave.wait(r"^OK HELLO name=dave ", what="dave presents the view key")
        dave.send("JOIN vault")
        dave.wait(r"^OK JOIN vault ", what="dave joined the vault")
        tablet.open("/panel/vault")
        tablet.wait(lambda p: prompt_state(p, "vault")["shown"], 10, "the key prompt on the private panel",
                    show=lambda p: prompt_state(p, "vault"))
        seen = prompt_state(tablet, "vault")
        check(seen["title"] == "This panel needs a key" and seen["conn"] == "key" and seen["focus"] == "key-input"
              and not seen["buttons"], f"the private panel's page: {seen}")
        ok(f"/panel/vault asks for the key ({seen['why']!r}), the field focused, status 'needs a key', no buttons")
        tablet.record()
        field = tablet.d.find_element("id", "key-input")
        field.send_keys("not-the-key\n")
        tablet.wait(lambda p: prompt_state(p, "vault")["note"] == "That key is not right.", 5,
                    "a wrong key refused", show=lambda p: prompt_state(p, "vault"))
        seen = prompt_state(tablet, "vault")
        check(seen["shown"] and not seen["buttons"] and seen["stored"] is None and seen["focus"] == "key-input",
              f"after a wrong key: {seen}")
        ok("a key that matches nothing: 'That key is not right.', the field kept, nothing stored")
        field.clear()
        field.send_keys(PRESS_KEY + "\n")  # a real key, of another panel
        tablet.wait(lambda p: prompt_state(p, "vault")["note"] == "That key does not open this panel.", 5,
                    "another panel's key refused here", show=lambda p: prompt_state(p, "vault"))
        check(prompt_state(tablet, "vault")["stored"] is None, "a key that does not open the panel was kept")
        ok("another panel's key: accepted by HELLO, the JOIN refused: 'That key does not open this panel.'")
        field.clear()
        field.send_keys(VIEW_KEY + "\n")
        tablet.wait_live()
        tablet.wait(lambda p: not prompt_state(p, "vault")["shown"], 5, "the prompt gone after the right key")
        seen = prompt_state(tablet, "vault")
        check(sorted(seen["buttons"]) == ["v1", "v2"] and seen["stored"] == VIEW_KEY and not seen["local"],
              f"after the right key: {seen}")
        hellos = [json.loads(text) for text in tablet.js("return window.__sent")]
        hellos = [c for c in hellos if c["cmd"] == "hello"]
        check([(c["name"], c["key"]) for c in hellos] == [("alice", "not-the-key"), ("alice", PRESS_KEY), ("alice", VIEW_KEY)],
              f"the page's HELLOs: {hellos}")
        ok("the right key: HELLO {name: alice, key}, JOIN, the buttons shown; "
           "the key kept in sessionStorage only")
        # With the key, /api/panels (Authorization: Bearer) names the labels too.
        tablet.wait(lambda p: p.js("const e = document.querySelector('[data-button=\"v1\"] .label');"
                                   " return e ? e.textContent : null") == "Vault door", 5,
                    "the private panel's labels after the key")
        ok("the private panel's buttons carry their labels once the key is given")
        mark = dave.mark()
        tablet.record()  # the pressing page's own view, read back after the gesture
        vault = tablet.press("v1", 1.0)
        dave.wait(r"^PRESSED vault v1 owner=alice ", since=mark, what="alice's press on the vault")
        vault.finish()
        dave.wait(r"^RELEASED vault v1 reason=up owner=alice ", since=mark)
        tablet.wait_button("v1", state="idle")
        check(any(r["b"]["v1"]["state"] == "pressed" and r["b"]["v1"]["mine"] == "1" for r in tablet.records()),
              "the tablet never showed its granted press on v1")
        ok("a press on the private panel is granted (shown as alice's own) and released")
        mark = dave.mark()
        tablet.open("/panel/vault")
        tablet.wait_live()
        check(not prompt_state(tablet, "vault")["shown"], "the reloaded page asked for the key again")
        dave.wait(r"^JOINED vault name=alice ", since=mark, what="the reloaded page joined with its kept key")
        ok("reloaded: the kept key is presented again (HELLO, then JOIN), no prompt")

        section("fair groups: a queued press shows its place, everyone sees the line (tablet presses, phone watches)")
        erin = LinePeer(port, "erin")
        frank = LinePeer(port, "frank")
        gina = LinePeer(port, "gina")
        peers += [erin, frank, gina]
        gina.send("JOIN fair")
        gina.wait(r"^OK JOIN fair ", what="gina watches the panel")
        tablet.open("/panel/fair")
        tablet.wait_live()
        phone.open("/panel/fair?host")
        phone.wait_live()
        erin.send("DOWN fair qa")
        erin.wait(r"^GRANTED fair qa fence=\d+", what="erin holds the queue group")
        tablet.wait_button("qa", state="pressed", owner="erin")
        info = lambda p: p.js("return document.getElementById('group-info-line').textContent")
        # The pressing page cannot be asked anything while its gesture runs (ChromeDriver
        # serializes a session's commands): the phone and gina watch, and the tablet's own
        # view is read back from its recorder afterwards.
        tablet.record()
        mark = gina.mark()
        gesture = tablet.press("qb", 3.0)
        gina.wait(r"^QUEUED fair qb name=alice session=s\d+ position=1 seq=", since=mark, what="alice in line")
        frank.send("DOWN fair qa")
        frank.wait(r"^QUEUED fair qa position=2 owner=erin$", what="frank second in line")
        phone.wait(lambda p: info(p) == "next: alice, frank", 5, "the line under the group's name", show=info)
        # The phone only: the tablet is busy pressing (ChromeDriver serializes a session's
        # commands). erin's FIRED flash over first, so the picture shows the holder.
        phone.wait_button("qa", fired="0", owner="erin")
        shots.append(phone.shot("fair-queue"))
        erin.send("UP fair qa")
        gina.wait(r"^PRESSED fair qb owner=alice ", since=mark, what="the hand-off to alice")
        phone.wait(lambda p: info(p) == "next: frank", 5, "frank alone in line once alice was granted", show=info)
        phone.wait_button("qb", state="pressed", owner="alice")
        gesture.finish()
        frank.wait(r"^GRANTED fair qb fence=\d+|^GRANTED fair qa fence=\d+", what="frank granted when alice let go")
        phone.wait(lambda p: info(p) == "", 5, "an empty line shows nothing", show=info)
        seen = [r["b"].get("qb", {}) for r in tablet.records()]
        check(any(b.get("status") == "you are 1st in line" for b in seen),
              f"alice's button never said 'you are 1st in line': {sorted(set(b.get('status') for b in seen))}")
        check(any(b.get("state") == "pressed" and b.get("mine") == "1" for b in seen),
              "the hand-off never lit alice's button as hers")
        ups = [c for c in tablet.sent("qb") if c[0] == "up"]
        check(len(ups) == 1 and ups[0][2] is not None, f"alice's UP after the hand-off should carry its fence: {tablet.sent()}")
        frank.send("UP fair qa")
        ok("alice's button said 'you are 1st in line'; the phone showed 'next: alice, frank', then 'next: frank'; "
           "the hand-off lit alice's button as hers and her UP (with its fence) handed the group on to frank")

        section("fair groups: the host page ARMs, the round's ranking, RESET (phone, ?host)")
        quiz = lambda p: p.js("return document.getElementById('group-info-quiz').textContent")
        phone.wait(lambda p: p.js("return !document.getElementById('host-arm-quiz').closest('.host-controls').hidden"
                                  " && !document.getElementById('host-arm-quiz').disabled"), 5,
                   "ARM and RESET shown to an admin on the host page")
        check(tablet.js("return document.getElementById('host-arm-quiz')") is None, "the non-host page shows ARM")
        mark = erin.mark()
        erin.send("DOWN fair red")
        erin.wait(r"^DENIED fair red reason=early$", since=mark, what="an early press denied")
        phone.d.find_element("id", "host-arm-quiz").click()
        phone.wait(lambda p: quiz(p) == "round open: buzz!", 5, "the round open", show=quiz)
        time.sleep(0.15)  # erin's lockout (100 ms) runs out
        mark = erin.mark()
        erin.send("DOWN fair red")
        erin.wait(r"^GRANTED fair red ", since=mark, what="erin wins the round")
        frank.send("DOWN fair blue")
        ranked = frank.wait(r"^RANKED fair blue rank=2 after_us=(\d+)$", what="frank ranked second")
        ms = round(int(ranked.group(1)) / 1000)
        expected = f"1. Red team · 2. Blue team {'+<1 ms' if int(ranked.group(1)) < 1000 else f'+{ms} ms'}"
        phone.wait(lambda p: quiz(p) == expected, 5, f"the ranking {expected!r}", show=quiz)
        tablet.wait(lambda p: p.js("return document.getElementById('group-info-quiz').textContent") == expected, 5,
                    "the same ranking on the tablet")
        for page in (tablet, phone):  # the FIRED flashes over: frank let go of qa, erin holds red
            page.wait_button("qa", state="idle", fired="0")
            page.wait_button("red", state="pressed", fired="0")
        shots.append(phone.shot("fair-host"))
        shots.append(tablet.shot("fair-round"))
        ok(f"ARM from the host page; ranking {expected!r} on both pages")

        section("fair groups: places after announce, and the full ranking on demand (tablet)")
        # announce=2: gina's third place is her own RANKED; no member is told it.
        mark = gina.mark()
        gina.send("DOWN fair red")
        gina.wait(r"^RANKED fair red rank=3 after_us=\d+$", since=mark, what="gina ranked third")
        # alice presses on the tablet: her fourth place is hers alone, shown beside the two.
        tablet.press("blue", 0.3).finish()
        tablet.wait(lambda p: re.fullmatch(re.escape(expected) + r" · you: 4th \+\d+ ms", quiz(p)), 5,
                    "alice's own place beside the announced ones", show=quiz)
        crowd = [cl.LineClient(port, f"hall{i:03d}") for i in range(CROWD)]
        peers += crowd
        for i, player in enumerate(crowd):
            player.send(f"DOWN fair {'blue' if i % 2 else 'red'}")
        # They press at once: the server ranks them in the order it read them.
        by_rank = {1: "erin", 2: "frank", 3: "gina", 4: "alice (you)"}
        for player in crowd:
            seen = player.wait(r"^RANKED fair \w+ rank=(\d+) after_us=\d+$", timeout=10, what=f"{player.name} ranked")
            by_rank[int(seen.group(1))] = player.name
        check(sorted(by_rank) == list(range(1, CROWD + 5)), f"the crowd's ranks are not 5 to {CROWD + 4}: {sorted(by_rank)[:10]}")
        check(quiz(phone) == expected, f"a place after announce reached the members: {quiz(phone)!r}")
        check(re.fullmatch(re.escape(expected) + r" · you: 4th \+\d+ ms", quiz(tablet)), f"the tablet: {quiz(tablet)!r}")
        check(not gina.since(mark, r"^BUZZED fair .* rank=(?:[3-9]|\d\d+) "), f"BUZZED after announce: {gina.since(mark, r'^BUZZED')}")
        opener = tablet.d.find_element("id", "ranking-open-quiz")
        check(opener.is_displayed() and tablet.js("return document.getElementById('host-arm-quiz')") is None,
              "Full ranking is on the player's page, which has no ARM")
        opener.click()
        rows = lambda p: p.js(RANKING_JS)
        ranked = CROWD + 4
        tablet.wait(lambda p: len(rows(p)["rows"]) == ranked, 5, f"the full ranking's {ranked} rows", show=lambda p: rows(p)["status"])
        table = rows(tablet)
        names = [r[1] for r in table["rows"]]
        check([r[0] for r in table["rows"]] == [str(n) for n in range(1, ranked + 1)], f"ranks out of order: {table['rows'][:5]}")
        check(names == [by_rank[n] for n in range(1, ranked + 1)], f"names out of rank order: {names[:6]}")
        check(table["rows"][0][3] == "first" and all(re.fullmatch(r"\+\d+\.\d ms", r[3]) for r in table["rows"][1:]),
              f"after the first: {[r[3] for r in table['rows'][:4]]}")
        afters = [float(r[3][1:-3]) for r in table["rows"][1:]]
        check(afters == sorted(afters), f"after_us goes down along the table: {afters[:10]}")
        check(table["status"].startswith(f"Round on · {ranked} places · as of "), f"status: {table['status']!r}")
        check(table["modal"] and table["focusInside"], "the dialog is modal and has the focus")
        check(table["rowFont"] >= 24, f"rows are {table['rowFont']}px: not readable across a room")
        check(table["mine"] == ["4"], f"alice's own row is not the one marked hers: {table['mine']}")
        check(table["scrolls"] and table["inViewport"] and table["pageScroll"] == 0,
              f"hundreds of rows must scroll inside the dialog, not the page: {table}")
        check_contrast(tablet, "full ranking open")
        shots.append(tablet.shot("fair-full-ranking"))
        # Closing gives the focus back to the control that opened it.
        tablet.d.switch_to.active_element.send_keys(Keys.ESCAPE)
        tablet.wait(lambda p: not rows(p)["open"] and p.js("return document.activeElement.id") == "ranking-open-quiz", 5,
                    "Escape closes the ranking and focus returns to Full ranking")
        # Opened again and left open: RESET closes the round, and the table follows it.
        opener.click()
        tablet.wait(lambda p: len(rows(p)["rows"]) == ranked, 5, "the ranking again")
        phone.d.find_element("id", "host-reset-quiz").click()
        phone.wait(lambda p: quiz(p) == "round closed", 5, "RESET ends the round", show=quiz)
        gina.wait(r"^RELEASED fair red reason=reset owner=erin ", what="the winner released by RESET")
        tablet.wait(lambda p: rows(p)["status"].startswith(f"Round closed · the last round's {ranked} places"), 5,
                    "the open table follows the round's end", show=lambda p: rows(p)["status"])
        check(len(rows(tablet)["rows"]) == ranked, "the last round's table is kept after RESET")
        tablet.d.find_element("id", "ranking-close").click()
        tablet.wait(lambda p: not rows(p)["open"], 5, "Close closes the ranking")
        # On the phone: the same table, fitted to its screen and scrolling inside.
        phone.d.find_element("id", "ranking-open-quiz").click()
        phone.wait(lambda p: len(rows(p)["rows"]) == ranked, 5, "the last round's table on the phone")
        table = rows(phone)
        check(table["scrolls"] and table["inViewport"] and table["pageScroll"] == 0, f"[phone] the dialog does not fit: {table}")
        shots.append(phone.shot("fair-full-ranking"))
        phone.d.find_element("id", "ranking-close").click()
        phone.wait(lambda p: not rows(p)["open"], 5, "Close closes the ranking on the phone")
        for player in crowd:
            player.close()
        ok(f"gina's 3rd place, alice's 4th (shown on her page alone) and {CROWD} more were told to no member; Full "
           f"ranking on the tablet showed all {ranked} places in order, alice's marked, scrolling inside a modal dialog, "
           "followed RESET and gave the focus back")

        section("no external fetches, no page errors")
        for page in (tablet, phone):
            resources = page.js("return performance.getEntriesByType('resource').map((e) => e.name)")
            foreign = [r for r in resources if not r.startswith(base)]
            check(not foreign, f"[{page.label}] fetched outside the server: {foreign}")
            logs = page.collect_console()
            errors = [entry["message"] for entry in logs if entry.get("level") == "SEVERE"
                      and not re.search(r"ERR_CONNECTION_REFUSED|WebSocket connection to .* failed", entry["message"])]
            for message in [m for m in errors if "ERR_INVALID_HTTP_RESPONSE" in m]:
                note(f"[{page.label}] {message} ({SERVER_ISSUE}; the page reloaded itself)")
            errors = [m for m in errors if "ERR_INVALID_HTTP_RESPONSE" not in m]
            check(not errors, f"[{page.label}] console errors: {errors}")
        ok("every resource came from the arbiter; no console errors (other than refused connections while it was down)")
        return shots
    except Failure:
        for page in pages:
            try:
                path = page.screenshot(f"failure-{page.label}.png")
                print(f"(failure screenshot: {path})", file=sys.stderr)
                print(f"[{page.label}] console: {[e['message'] for e in page.collect_console()][-10:]}", file=sys.stderr)
            except Exception:  # noqa: BLE001 - diagnostics only
                pass
        print(f"arbiter log (last lines):\n{server.log_tail()}", file=sys.stderr)
        raise
    finally:
        for peer in peers:
            peer.close()
        for page in pages:
            page.quit()
        server.stop()


def main():
    binary = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".build" / "debug" / "arbiter"
    missing = [str(p) for p in (binary, Path(CHROMIUM), Path(CHROMEDRIVER)) if not p.exists()]
    if missing:
        print(f"test_kiosk: missing {', '.join(missing)} (swift build; apt-get install chromium chromium-driver)",
              file=sys.stderr)
        return 2
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("test_kiosk: selenium is not installed (pip install selenium)", file=sys.stderr)
        return 2
    # Selenium must use the Debian driver and browser given above, never fetch its own.
    os.environ.setdefault("SE_OFFLINE", "true")
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="kiosk-test-")
    try:
        shots = run(binary.resolve(), workdir)
    except Failure as failure:
        print(f"\nFAIL: {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if NOTES:
        print(f"\n{len(NOTES)} note(s) above: {SERVER_ISSUE}.")
    print(f"\nPASS: kiosk browser test in {time.monotonic() - started:.1f} s. Screenshots:")
    for path in shots:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
