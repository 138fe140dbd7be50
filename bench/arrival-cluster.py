#!/usr/bin/env python3
"""Buzzer rounds of a full hall across three nodes: how many pairs of players a round
ranked against the order they sent in, when a press relayed by another node arrives
when the panel's leader reads its relay frame.

    python3 bench/arrival-cluster.py BINDIR      (BINDIR holds release arbiter, arbiter-load)

3 etcd members and 3 nodes on loopback (--cluster-ttl 3, --rate 0, --reactors 2), one
panel with one buzzer group (announce 100000, decision_window_us WINDOW_US, default
2000), PLAYERS (300) players spread over the three nodes (arbiter-load buzz --hosts),
DURATION (5) s after 1 s of warm-up, RUNS (1) times; NODE_ARGS adds flags to every node
(e.g. --no-arrival-stamps). Prints each run's arrival_order (see bench/arrival.sh).
"""

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402

PLAYERS = int(os.environ.get("PLAYERS", "300"))
DURATION = float(os.environ.get("DURATION", "5"))
RUNS = int(os.environ.get("RUNS", "1"))
WINDOW_US = int(os.environ.get("WINDOW_US", "2000"))
NODE_ARGS = os.environ.get("NODE_ARGS", "").split()


def main():
    bindir = Path(sys.argv[1])
    panel = {"id": "load", "title": "Load",
             "buttons": [{"id": f"b{i}", "kind": "tap", "group": "g1", "timeout_ms": 0} for i in range(1, 5)],
             "groups": {"g1": {"policy": "buzzer", "early_lockout_ms": 20, "announce": 100000,
                               "decision_window_us": WINDOW_US}}}
    cluster = cl.Cluster(bindir / "arbiter", {"panels": [panel]}, ttl=3,
                         extra=["--rate", "0", "--log-level", "warn", "--reactors", "2"] + NODE_ARGS).start()
    try:
        leader = cluster.leader_of("load")
        cl.log(f"panel load is led by {leader.name}; players over {cluster.hosts()}")
        for _ in range(RUNS):
            args = ["buzz", "--hosts", cluster.hosts(), "--panel", "load", "--connections", str(PLAYERS),
                    "--duration", str(DURATION), "--warmup", "1"]
            code, result, output = cl.run_load(bindir / "arbiter-load", args, timeout=DURATION + 120)
            if result is None:
                print(output[-3000:])
                continue
            latency = result.get("reply_latency_us", {})
            print(json.dumps({"status": code, "errors": result.get("errors"), "rounds": result.get("rounds"),
                              "abandoned_rounds": result.get("abandoned_rounds"),
                              "arrival_order": result.get("arrival_order"),
                              "reply_p50_us": latency.get("p50"), "reply_p99_us": latency.get("p99"),
                              "command": "arbiter-load " + " ".join(args)}))
            time.sleep(1)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
