#!/usr/bin/env python3
"""Browser test of the kiosk moving to another node when its own dies (issue 11).

    python3 Tests/browser/test_kiosk_failover.py [path/to/arbiter]   (default .build/debug/arbiter)

Starts a 3-member etcd and 3 cluster nodes on loopback (Tests/cluster/clusterlib.py),
opens the kiosk of panel demo in headless Chromium (a 1280x800 desktop page) on a node
that does not lead demo. First demo's leader is killed under it: the page stays where it
is, shows the held button released by the failover, and is live in the new term. Then,
the leader restarted, it kill -9s the page's node and checks that the page moves to
another node by itself, says "Moved to node nX", and shows the panel live: a press from a line
peer (nc) shows up on it. Then the node the page moved to is killed too (the page moves
to the last one), and last, with the others restarted, the page's node, now the panel's
leader, is killed: the page moves and is live once the panel has a new leader.
Screenshots go to artifacts/kiosk-failover-*.png.

Exit status 0 when every check passed, 1 on the first failure, 2 when something needed
is missing. Needs etcd (etcd-server, etcd-client), chromium, chromium-driver, selenium.
"""

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402
import test_kiosk as tk  # noqa: E402

CONFIG = {"panels": [
    {"id": "demo", "title": "Failover", "buttons": [
        {"id": "b1", "label": "Button 1", "kind": "tap", "group": "g1", "timeout_ms": 0},
        {"id": "b2", "label": "Button 2", "kind": "tap", "group": "g2", "timeout_ms": 0},
        {"id": "sos", "label": "SOS", "kind": "hold", "hold_ms": 3000, "group": "emergency"}]},
    {"id": "lobby", "title": "Lobby", "buttons": [{"id": "x", "label": "X"}]},
    {"id": "hall", "title": "Hall", "buttons": [{"id": "y", "label": "Y"}]},
]}

MOVED_JS = """
const m = document.getElementById('moved');
return {host: location.host, search: location.search, conn: document.body.dataset.conn,
        moved: m && !m.hidden ? m.textContent : null,
        banner: document.getElementById('banner').hidden ? null : document.getElementById('banner').textContent};
"""


def ok(message):
    print(f"ok    {message}", flush=True)


def press_shows(page, cluster, via, button, name):
    """A press from a line peer on node `via` shows up on the page as held by `name`."""
    peer = cl.LineClient(via.port, name)
    try:
        answer = cl.wait_until(lambda: _down(peer, button), 10, f"DOWN demo {button} granted through {via.name}")
        page.wait_button(button, timeout=5, what=f"held by {name} (pressed through {via.name})",
                         owner=lambda o: o == name)
        return peer, answer
    except Exception:
        peer.close()
        raise


def _down(peer, button):
    _, _, m = peer.request(f"DOWN demo {button}", r"^(GRANTED|DENIED|ERROR).*$", timeout=5)
    if m.group(0).startswith("GRANTED"):
        return m.group(0)
    time.sleep(0.2)
    return None


def _up(peer, button):
    _, _, m = peer.request(f"UP demo {button}", r"^(OK UP|ERROR).*$", timeout=5)
    return m.group(0)


def moved_away(page, old_host):
    state = page.js(MOVED_JS)
    return state if state["host"] != old_host and state["conn"] == "live" and state["moved"] else None


def run(binary):
    cluster = cl.Cluster(binary, CONFIG, ttl=3).start()
    shots = []
    page = None
    peers = []
    try:
        leader = cluster.leader_of("demo")
        first = next(n for n in cluster.nodes if n is not leader)
        page = tk.Page("desktop", *tk.DESKTOP, False, f"http://127.0.0.1:{first.port}")
        page.open("/panel/demo")
        page.wait_live()
        ok(f"kiosk live on {first.name} ({first.address}); demo is led by {leader.name}")

        # The panel fails over under the page: its leader dies, the page's own node lives.
        # The page stays where it is, shows the held button released, then the new term.
        holder = next(n for n in cluster.nodes if n is not leader and n is not first)
        peer, _ = press_shows(page, cluster, holder, "b2", "bob")
        peers.append(peer)
        killed_at = time.monotonic()
        leader.kill9()
        ok(f"kill -9 {leader.name}, demo's leader, while the page is on {first.name}")
        page.wait_button("b2", timeout=cluster.ttl + 5, what="b2 released by the failover", owner=lambda o: not o)
        ok(f"bob's b2 shown released {time.monotonic() - killed_at:.1f} s after the kill")
        peer, _ = press_shows(page, cluster, first, "b1", "amy")
        peers.append(peer)
        state = page.js(MOVED_JS)
        if state["host"] != first.address or state["moved"] or state["conn"] != "live":
            raise cl.Failure(f"the page should have stayed live on {first.address}: {state}")
        ok(f"the page stayed on {first.name} and is live in the new term: a press from nc shows up "
           f"{time.monotonic() - killed_at:.1f} s after the kill")
        shots.append(page.screenshot("kiosk-failover-under-page-desktop-1280x800.png"))
        _up(peer, "b1")
        leader.start()
        time.sleep(3)  # the restarted node registers, and panels are spread over the nodes again
        # Next, the page's own node dies; it should not lead demo, as at the start.
        leader = cluster.leader_of("demo")
        if first is leader:
            first = next(n for n in cluster.nodes if n is not leader)
            page.d.get(f"http://{first.address}/panel/demo")
            page.wait_live()
            ok(f"the page opened on {first.name}, which does not lead demo now")

        peer, _ = press_shows(page, cluster, first, "b1", "carol")
        peers.append(peer)
        ok("a press through the page's own node shows up")
        shots.append(page.screenshot("kiosk-failover-before-desktop-1280x800.png"))

        killed_at = time.monotonic()
        first.kill9()
        ok(f"kill -9 {first.name}")
        state = page.wait(lambda p: moved_away(p, first.address), 20,
                          "the page moved to another node and is live",
                          show=lambda p: f"Last seen: {p.js(MOVED_JS)}")
        moved_after = time.monotonic() - killed_at
        target = next(n for n in cluster.nodes if n.address == state["host"])
        check_text = f"Moved to node {target.name}"
        if not state["moved"].startswith(check_text):
            raise cl.Failure(f"the notice says {state['moved']!r}, not {check_text!r}...")
        if "moved_to" in state["search"]:
            raise cl.Failure(f"the move's parameters stayed in the address: {state['search']}")
        ok(f"moved to {target.name} ({target.address}) {moved_after:.1f} s after the kill; notice: {state['moved']!r}")
        shots.append(page.screenshot("kiosk-failover-moved-desktop-1280x800.png"))
        # b1's owner was a session on the dead node: released once that node's lease ends.
        page.wait_button("b1", timeout=cluster.ttl + 3, what="b1 released after its owner's node died",
                         owner=lambda o: not o)
        ok("the dead node's session's grant (b1) was released")
        via = next(n for n in cluster.nodes if n.running() and n is not target)
        peer, _ = press_shows(page, cluster, via, "b2", "dave")
        peers.append(peer)
        ok(f"live on the new node: a press from nc through {via.name} shows up")
        shots.append(page.screenshot("kiosk-failover-live-desktop-1280x800.png"))

        # Once more: the node the page moved to dies too; one node is left.
        killed_at = time.monotonic()
        target.kill9()
        state = page.wait(lambda p: moved_away(p, target.address), 20,
                          "the page moved to the last node and is live",
                          show=lambda p: f"Last seen: {p.js(MOVED_JS)}")
        last = next(n for n in cluster.nodes if n.address == state["host"])
        ok(f"moved again, to {last.name}, {time.monotonic() - killed_at:.1f} s after killing {target.name}: {state['moved']!r}")
        peer, _ = press_shows(page, cluster, last, "sos", "erin")
        peers.append(peer)
        ok("live on the last node: a hold pressed from nc shows up")
        shots.append(page.screenshot("kiosk-failover-last-desktop-1280x800.png"))

        # Last: the dead nodes come back, and the page is opened on demo's leader; killing
        # it is a failover of the panel too (reason=failover, a new term) besides the move.
        for node in (first, target):
            node.start()
        time.sleep(3)  # the restarted nodes register, and panels are spread over them again
        last = cluster.leader_of("demo", among=[n for n in cluster.nodes if n.running()])
        page.d.get(f"http://{last.address}/panel/demo")
        page.wait_live()
        ok(f"the page opened on demo's leader {last.name}")
        killed_at = time.monotonic()
        last.kill9()
        state = page.wait(lambda p: moved_away(p, last.address), 25,
                          "the page moved away from the dead leader's node and is live",
                          show=lambda p: f"Last seen: {p.js(MOVED_JS)}")
        final = next(n for n in cluster.nodes if n.address == state["host"])
        ok(f"the panel's leader {last.name} killed under the page: moved to {final.name} and live again "
           f"{time.monotonic() - killed_at:.1f} s later")
        peer, _ = press_shows(page, cluster, final, "b2", "frank")
        peers.append(peer)
        ok("live after the leader's failover: a press from nc shows up")
        shots.append(page.screenshot("kiosk-failover-leader-desktop-1280x800.png"))
        return shots
    finally:
        for peer in peers:
            peer.close()
        if page:
            page.quit()
        cluster.stop()


def main():
    binary = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".build" / "debug" / "arbiter"
    missing = [str(p) for p in (binary, Path(tk.CHROMIUM), Path(tk.CHROMEDRIVER)) if not p.exists()]
    if missing:
        print(f"test_kiosk_failover: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("test_kiosk_failover: selenium is not installed (pip install selenium)", file=sys.stderr)
        return 2
    os.environ.setdefault("SE_OFFLINE", "true")
    cl.install_cleanup()
    started = time.monotonic()
    try:
        shots = run(binary.resolve())
    except (cl.Failure, tk.Failure) as failure:
        print(f"\nFAIL: {failure}", file=sys.stderr)
        return 1
    finally:
        cl.cleanup()
    print(f"\nPASS: kiosk failover browser test in {time.monotonic() - started:.1f} s. Screenshots:")
    for path in shots:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
