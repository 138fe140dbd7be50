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
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relaypair import BUTTONS, RelayPair  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: relay-fanout-callgrind.py BINDIR [CYCLES] [MEMBERS]")
    bindir = Path(sys.argv[1]).resolve()
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    members = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    load_bin = os.environ.get("LOAD", str(bindir / "arbiter-load"))
    pair = RelayPair(bindir, "n2", "relay-fanout-callgrind", node_args=("--rate", "0"))

    def load(n):
        result = subprocess.run([load_bin, "fanout", "--hosts", f"127.0.0.1:{pair.port2}", "--panel", "busy", "--buttons", str(BUTTONS),
                                 "--connections", str(members), "--cycles", str(n), "--json"],
                                capture_output=True, text=True, timeout=1800)
        if result.returncode != 0:
            sys.exit(f"arbiter-load failed: {result.stderr[-500:]}")

    try:
        pair.start()
        load(100)
        time.sleep(5)  # the warm-up's members have left
        idle, idle_s = pair.counted(lambda: time.sleep(10))
        runs = [(n, *pair.counted(lambda n=n: load(n))) for n in (cycles, 2 * cycles, cycles, 2 * cycles)]
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
              f"{'; '.join(f'{p:,}' for p in net)} less the idle rate; profiles in {pair.work}")
    finally:
        pair.stop()


if __name__ == "__main__":
    main()
