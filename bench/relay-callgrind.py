#!/usr/bin/env python3
"""User-space instructions per relayed request, counted by valgrind's callgrind on one node.

    python3 bench/relay-callgrind.py BINDIR [CYCLES] [n1|n2]

One etcd member and two nodes on loopback; n1 starts first and leads panel `busy`, n2
relays to it. arbiter-load drives CYCLES (default 4000) DOWN/UP cycles over one
connection through n2 while the chosen node (default n2, the relaying node) runs under
callgrind; counters are zeroed after a warm-up and dumped after the run, so the profile
is the relayed requests plus what the node does in the background meanwhile (lease
keepalives, the watch). Valgrind cannot read the DWARF of a Swift release build, so BINDIR's
`arbiter` should be stripped of debug info first (`strip -g`; the symbols stay).
`NODE_ARGS` adds flags to both nodes (e.g. `NODE_ARGS="--idle-spin 0"` to compare a build
from before spinning became opt-in with one after). Read the result with `callgrind_annotate [--inclusive=yes] <workdir>/cg.out.1`.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402

BUTTONS = 16


def main():
    bindir = Path(sys.argv[1]).resolve()
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
    profiled = sys.argv[3] if len(sys.argv) > 3 else "n2"
    if profiled not in ("n1", "n2") or not shutil.which("valgrind") or not shutil.which("etcd"):
        sys.exit("usage: relay-callgrind.py BINDIR [CYCLES] [n1|n2]; needs valgrind and etcd")
    work = cl.temp_dir("relay-callgrind.")
    busy = {"id": "busy", "title": "Busy", "buttons":
            [{"id": f"b{i}", "kind": "tap", "group": f"g{i}", "timeout_ms": 0} for i in range(1, BUTTONS + 1)]}
    config = work / "panels.json"
    config.write_text(json.dumps({"panels": [busy]}))
    key = work / "cluster.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    os.chmod(key, 0o600)
    client, peer, port1, port2 = cl.free_ports(4)
    procs = [cl.spawn(["etcd", "--name", "m1", "--data-dir", str(work / "etcd"),
                       "--listen-client-urls", f"http://127.0.0.1:{client}", "--advertise-client-urls", f"http://127.0.0.1:{client}",
                       "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                       "--initial-cluster", f"m1=http://127.0.0.1:{peer}"], work / "etcd.log")]

    def node(name, port):
        argv = [str(bindir / "arbiter"), "--cluster", f"http://127.0.0.1:{client}", "--node", name, "--advertise", f"127.0.0.1:{port}",
                "--port", str(port), "--host", "127.0.0.1", "--cluster-key", str(key), "--cluster-ttl", "10",
                "--config", str(config), "--log-level", "info"] + os.environ.get("NODE_ARGS", "").split()
        if name == profiled:
            # A TTL of 10 s: under valgrind the node runs tens of times slower.
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/cg.out", "--dump-instr=no"] + argv
        procs.append(cl.spawn(argv, work / f"{name}.log"))
        cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=3)[0] == 200, 120, f"{name} to answer /healthz", interval=0.5)

    def load(n):
        return subprocess.run([str(bindir / "arbiter-load"), "contend", "--hosts", f"127.0.0.1:{port2}", "--panel", "busy",
                               "--buttons", str(BUTTONS), "--connections", "1", "--observers", "0", "--cycles", str(n), "--json"],
                              capture_output=True, text=True, timeout=600)
    try:
        time.sleep(2)
        node("n1", port1)
        time.sleep(3)
        node("n2", port2)
        time.sleep(5)
        leader = subprocess.run(["etcdctl", "--endpoints", f"http://127.0.0.1:{client}", "get", "--print-value-only",
                                 "/arbiter/panels/busy/leader"], capture_output=True, text=True).stdout.strip()
        if leader != "n1":
            sys.exit(f"panel busy is led by {leader!r}, not n1: nothing is relayed")
        load(200)
        subprocess.run(["callgrind_control", "-z"], capture_output=True)
        result = load(cycles)
        subprocess.run(["callgrind_control", "-d"], capture_output=True)
        time.sleep(1)
        if result.returncode != 0:
            sys.exit(f"arbiter-load failed: {result.stderr[-500:]}")
        dump = work / "cg.out.1"
        totals = subprocess.run(["callgrind_annotate", str(dump)], capture_output=True, text=True).stdout
        total = next(int(line.split()[0].replace(",", "")) for line in totals.splitlines() if "PROGRAM TOTALS" in line)
        print(f"relay-callgrind: {profiled}: {total // (2 * cycles)} user-space instructions per relayed request "
              f"({total} over {2 * cycles} requests, background included); profile: {dump}")
    finally:
        for proc in reversed(procs):
            cl.kill_group(proc)


if __name__ == "__main__":
    main()
