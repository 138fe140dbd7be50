#!/usr/bin/env python3
"""Browser test of the arbiter's Origin check, in headless Chromium from Debian.

    python3 Tests/browser/test_origin.py [path/to/arbiter]     (default .build/debug/arbiter)

Starts the real arbiter binary on 127.0.0.1 (--port 0, the embedded demo panel) and a
Python http.server on ANOTHER loopback port. A page of that other origin tries
`new WebSocket("ws://127.0.0.1:<arbiter port>/ws?panel=demo")` and must fail (the server
answers 403, so the browser reports an error and a close with code 1006, never an open
socket or a welcome). Then the kiosk page served by the arbiter itself, from its own
origin, must connect and show "live". Finally a request naming a foreign Host (as a DNS
rebinding attack does) must get 421. Exit status 0 when every check passed, 1 on the
first failure, 2 when the environment is missing something.

Needs: apt-get install chromium chromium-driver; pip install selenium. Only 127.0.0.1 is
ever contacted: Chromium gets a dead proxy for everything that is not loopback.
"""

import functools
import http.server
import os
import re
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

ATTACK_PAGE = """<!doctype html>
<meta charset="utf-8">
<title>another site</title>
<p id="out">trying</p>
<script>
  // What a hostile page opened on a visitor's browser would do.
  window.outcome = { opened: false, messages: [], error: false, closed: null };
  const socket = new WebSocket("ws://127.0.0.1:%(port)d/ws?panel=demo");
  socket.onopen = () => { window.outcome.opened = true; socket.send('{"cmd":"down","panel":"demo","button":"b1"}'); };
  socket.onmessage = (e) => { window.outcome.messages.push(e.data); };
  socket.onerror = () => { window.outcome.error = true; };
  socket.onclose = (e) => { window.outcome.closed = e.code; document.getElementById("out").textContent = "closed " + e.code; };
</script>
"""


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)
    print(f"ok: {message}")


def start_arbiter(binary, log_path):
    log = open(log_path, "w")
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0"],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = Path(log_path).read_text()
        match = re.search(r"msg=listening\b.*\bport=(\d+)", text)
        if match:
            return process, int(match.group(1))
        if process.poll() is not None:
            raise Failure(f"arbiter exited before listening:\n{text}")
        time.sleep(0.05)
    process.kill()
    raise Failure("arbiter printed no listening line within 20 s")


def start_other_origin(directory):
    handler = functools.partial(QuietHandler, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def new_browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in [
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--window-size=1024,768", "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-sync", "--disable-background-networking",
        "--disable-component-update", "--disable-default-apps", "--no-pings",
        # Loopback bypasses proxies; everything else goes to a closed local port.
        "--proxy-server=http://127.0.0.1:9",
    ]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    return driver


def wait_for(driver, script, timeout, what):
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise Failure(f"{what}: not within {timeout} s (last {value!r})")


def metric(port, name):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    match = re.search(rf"^{name} (\d+)$", text, re.M)
    return int(match.group(1)) if match else None


def foreign_host_status(port):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/panels", headers={"Host": f"rebind.example:{port}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / ".build/debug/arbiter")
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        print("needs Debian's chromium and chromium-driver", file=sys.stderr)
        return 2
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("needs selenium (pip install selenium)", file=sys.stderr)
        return 2
    if not os.access(binary, os.X_OK):
        print(f"no arbiter binary at {binary}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="arbiter-origin-")
    log_path = os.path.join(work, "arbiter.log")
    arbiter = other = driver = None
    try:
        arbiter, port = start_arbiter(binary, log_path)
        Path(work, "attack.html").write_text(ATTACK_PAGE % {"port": port})
        other = start_other_origin(work)
        other_port = other.server_address[1]
        check(other_port != port, f"the other origin is 127.0.0.1:{other_port}, the arbiter 127.0.0.1:{port}")
        driver = new_browser()

        driver.get(f"http://127.0.0.1:{other_port}/attack.html")
        outcome = wait_for(driver, "return window.outcome && window.outcome.closed !== null ? window.outcome : null",
                           10, "the other origin's WebSocket to end")
        check(not outcome["opened"], f"a page of http://127.0.0.1:{other_port} cannot open the arbiter's WebSocket")
        check(outcome["messages"] == [], "and it received nothing (no welcome, no snapshot)")
        check(outcome["error"] and outcome["closed"] == 1006, f"the browser reports an error and close 1006 (got {outcome})")
        refused = metric(port, "arbiter_origin_refused_total")
        check(refused is not None and refused >= 1, f"the server counted the refusal (arbiter_origin_refused_total {refused})")
        upgrades = metric(port, "arbiter_websocket_upgrades_total")
        check(upgrades == 0, "no WebSocket session was opened for it")

        driver.get(f"http://127.0.0.1:{port}/panel/demo")
        wait_for(driver, "return document.body.dataset.conn === 'live'", 15, "the kiosk from the arbiter's own origin to be live")
        check(True, "the kiosk page from the arbiter's own origin connects (live)")
        upgrades = metric(port, "arbiter_websocket_upgrades_total")
        check(upgrades is not None and upgrades >= 1, f"and its WebSocket was opened (arbiter_websocket_upgrades_total {upgrades})")

        status = foreign_host_status(port)
        check(status == 421, f"a request with a foreign Host (DNS rebinding) gets 421 (got {status})")
        print("test_origin: all checks passed")
        return 0
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        try:
            print(Path(log_path).read_text()[-3000:], file=sys.stderr)
        except OSError:
            pass
        return 1
    finally:
        if driver is not None:
            driver.quit()
        if other is not None:
            other.shutdown()
        if arbiter is not None:
            arbiter.terminate()
            try:
                arbiter.wait(timeout=5)
            except subprocess.TimeoutExpired:
                arbiter.kill()
                arbiter.wait()


if __name__ == "__main__":
    sys.exit(main())
