#!/usr/bin/env python3
"""What a webhook costs a press in a cluster: the leader writes a hooked event's
deliveries to etcd (one transaction) before any member sees the event. Two panels alike
but for a hook on `pressed` (its receiver, here, answers 204); presses alternate between
them, each a DOWN and its UP, one at a time.

    python3 bench/hooks-cluster.py BINDIR      (BINDIR holds arbiter)

3 etcd members and 3 nodes on loopback (--cluster-ttl 3, --rate 0). PRESSES (300) per
panel and path. Two paths: the presser on the panel's leader, and on a node that relays
to it; the watcher, a member, on another node than the presser. Prints, per panel and
path, the DOWN's GRANTED (reply) and the watcher's PRESSED (event) latency in ms:
p50, p90, p99, as the client's reader thread stamps them.
"""

import base64
import http.server
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402

PRESSES = int(os.environ.get("PRESSES", "300"))


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def quantiles(values):
    s = sorted(values)
    return "p50 %.2f  p90 %.2f  p99 %.2f" % tuple(s[min(len(s) - 1, int(q * len(s)))] * 1000 for q in (0.5, 0.9, 0.99))


def main():
    bindir = Path(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = cl.temp_dir("hooks-bench.") / "hook.secret"
    secret.write_text("whsec_" + base64.b64encode(os.urandom(24)).decode() + "\n")
    os.chmod(secret, 0o600)
    button = [{"id": "b1", "kind": "tap", "timeout_ms": 0}]
    hook = {"url": f"http://127.0.0.1:{server.server_address[1]}/in", "events": ["pressed"], "secret_file": str(secret)}
    config = {"panels": [{"id": "plain", "buttons": button}, {"id": "hooked", "buttons": button, "hooks": [hook]}]}
    cl.install_cleanup()
    cluster = cl.Cluster(bindir / "arbiter", config, ttl=3, extra=["--rate", "0", "--log-level", "warn"]).start()
    try:
        rows = {}
        for path in ("leader", "follower"):
            clients = {}
            for panel in ("plain", "hooked"):
                leader = cluster.leader_of(panel)
                rest = [n for n in cluster.nodes if n is not leader]
                presser_node = leader if path == "leader" else rest[0]
                watcher_node = rest[1] if path == "leader" else leader
                presser = cl.LineClient(presser_node.port, f"p-{panel}-{path}")
                watcher = cl.LineClient(watcher_node.port, f"w-{panel}-{path}")
                watcher.join(panel)
                clients[panel] = (presser, watcher)
                rows[(panel, path)] = ([], [])
            for i in range(PRESSES + 20):
                for panel, (presser, watcher) in clients.items():
                    mark = watcher.mark()
                    sent = time.monotonic()
                    _, replied, _ = presser.request(f"DOWN {panel} b1", rf"^GRANTED {panel} b1\b")
                    _, seen, _ = watcher.wait(rf"^PRESSED {panel} b1\b", since=mark)
                    presser.request(f"UP {panel} b1", r"^OK UP\b")
                    if i >= 20:  # the first presses dial relay links and warm etcd's connections
                        rows[(panel, path)][0].append(replied - sent)
                        rows[(panel, path)][1].append(seen - sent)
            for presser, watcher in clients.values():
                presser.close()
                watcher.close()
        for (panel, path), (replies, events) in rows.items():
            print(f"{panel:6} presser on the {path:8}  reply ms: {quantiles(replies)}   event ms: {quantiles(events)}")
    finally:
        cluster.stop()
        cl.cleanup()
        server.shutdown()


if __name__ == "__main__":
    main()
