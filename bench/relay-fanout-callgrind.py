#!/usr/bin/env python3
"""User-space instructions per fan-out delivery on a relaying node, counted by callgrind.

    python3 bench/relay-fanout-callgrind.py BINDIR [CYCLES] [MEMBERS]

One etcd member and two nodes on loopback, set up as bench/relay-callgrind.py does: n1
leads panel `busy`, n2 relays to it and runs under callgrind. `arbiter-load fanout` puts
one presser and MEMBERS (default 100) members on n2 and drives press cycles; every cycle
is relayed to n1 and its PRESSED and RELEASED come back to be delivered to every member.

Each run's members connect and JOIN again through n2, and their JOINs and presence
tallies cost more than the deliveries of a short run, so one run's total says little.
The counters are zeroed and dumped around runs of CYCLES and 2 x CYCLES cycles (twice
each, alternating): the difference of a pair is CYCLES cycles with the set-up cancelled
out, divided by the deliveries a cycle makes (2 x MEMBERS). Background work that grows
with wall time (lease keepalives, the watch) is not cancelled; an idle stretch of the
same node is counted too and printed, so the reader can see how much it could weigh.
BINDIR's `arbiter` should be stripped of debug info (`strip -g`); LOAD=<arbiter-load>
drives every build with the same generator. `NODE_ARGS` adds flags to both nodes.
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
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    members = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    load_bin = os.environ.get("LOAD", str(bindir / "arbiter-load"))
    if not shutil.which("valgrind") or not shutil.which("etcd"):
        sys.exit("usage: relay-fanout-callgrind.py BINDIR [CYCLES] [MEMBERS]; needs valgrind and etcd")
    work = cl.temp_dir("relay-fanout-callgrind.")
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

    profiled = []  # n2's pid: callgrind_control would zero and dump every callgrind process

    def node(name, port):
        argv = [str(bindir / "arbiter"), "--cluster", f"http://127.0.0.1:{client}", "--node", name, "--advertise", f"127.0.0.1:{port}",
                "--port", str(port), "--host", "127.0.0.1", "--cluster-key", str(key), "--cluster-ttl", "10",
                "--config", str(config), "--log-level", "info", "--rate", "0"] + os.environ.get("NODE_ARGS", "").split()
        if name == "n2":
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/cg.out", "--dump-instr=no"] + argv
        procs.append(cl.spawn(argv, work / f"{name}.log"))
        if name == "n2":
            profiled.append(str(procs[-1].pid))
        cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=3)[0] == 200, 120, f"{name} to answer /healthz", interval=0.5)

    def load(n):
        result = subprocess.run([load_bin, "fanout", "--hosts", f"127.0.0.1:{port2}", "--panel", "busy", "--buttons", str(BUTTONS),
                                 "--connections", str(members), "--cycles", str(n), "--json"],
                                capture_output=True, text=True, timeout=1800)
        if result.returncode != 0:
            sys.exit(f"arbiter-load failed: {result.stderr[-500:]}")

    dumps = 0

    def counted(action):
        nonlocal dumps
        subprocess.run(["callgrind_control", "-z"] + profiled, capture_output=True)
        started = time.monotonic()
        action()
        seconds = time.monotonic() - started
        subprocess.run(["callgrind_control", "-d"] + profiled, capture_output=True)
        dumps += 1
        dump = work / f"cg.out.{dumps}"
        cl.wait_until(lambda: dump.exists(), 30, f"{dump} to be written", interval=0.2)
        time.sleep(0.5)
        totals = subprocess.run(["callgrind_annotate", str(dump)], capture_output=True, text=True).stdout
        return next(int(line.split()[0].replace(",", "")) for line in totals.splitlines() if "PROGRAM TOTALS" in line), seconds

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
        load(100)
        time.sleep(5)  # the warm-up's members have left
        idle, idle_s = counted(lambda: time.sleep(10))
        runs = [(n, *counted(lambda n=n: load(n))) for n in (cycles, 2 * cycles, cycles, 2 * cycles)]
        idle_rate = idle / idle_s
        per, net = [], []
        for (n1, t1, s1), (n2, t2, s2) in (runs[0:2], runs[2:4]):
            deliveries = (n2 - n1) * 2 * members
            per.append((t2 - t1) // deliveries)
            net.append(int((t2 - t1 - idle_rate * (s2 - s1)) // deliveries))
            print(f"relay-fanout-callgrind: {n1} cycles: {t1:,} ({s1:.1f} s); {n2}: {t2:,} ({s2:.1f} s)")
        print(f"relay-fanout-callgrind: n2 idle: {int(idle_rate):,} instructions a second")
        print(f"relay-fanout-callgrind: {'; '.join(f'{p:,}' for p in per)} user-space instructions per fan-out delivery "
              f"on the relaying node ({members} members, {cycles} extra cycles per pair), "
              f"{'; '.join(f'{p:,}' for p in net)} less the idle rate; profiles in {work}")
    finally:
        for proc in reversed(procs):
            cl.kill_group(proc)


if __name__ == "__main__":
    main()
