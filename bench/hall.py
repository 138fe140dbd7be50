#!/usr/bin/env python3
"""A full hall: buzzer rounds of 1,000 players, on one node and through a relaying node of
a 3-node cluster, the runs alternating so that drift of a shared machine hits both alike.

    python3 bench/hall.py BINDIR      (bash bench/hall.sh builds release binaries and runs it)

BINDIR holds arbiter and arbiter-load. Each run starts what it measures afresh: one node,
or 3 etcd members (--heartbeat-interval 50 --election-timeout 500) and 3 nodes
(--cluster-ttl 3), all with --rate 0, serving one panel `hall` whose buzzer group (4 tap
buttons) tells its members ANNOUNCE places. Then

    arbiter-load buzz --panel hall --connections PLAYERS --announce ANNOUNCE --observers 1
        --connect-batch 500 --duration DURATION --warmup WARMUP

against the single node, or against a node that is not the panel's leader (every player,
the host and the observer on it: each press and each answer crosses the relay). Per run:
rounds, press->RANKED (each player's DOWN to its own answer: RANKED, or the winner's
GRANTED), press->BUZZED (a DOWN to its BUZZED read by the observer, places 2 to
ANNOUNCE), the checker's verdict and the load averages before and after. Then the
medians (min-max) of each setting.

Environment: RUNS (3), PLAYERS (1000), ANNOUNCE (10), DURATION (10), WARMUP (2),
PARTS (single,relay), WINDOW_US (the group's decision_window_us), HALL_JSONL (appends each run's JSON line to that file).
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402
from clusterlib import Failure, check, log  # noqa: E402

RUNS = int(os.environ.get("RUNS", "3"))
PLAYERS = int(os.environ.get("PLAYERS", "1000"))
ANNOUNCE = int(os.environ.get("ANNOUNCE", "10"))
DURATION = float(os.environ.get("DURATION", "10"))
WARMUP = float(os.environ.get("WARMUP", "2"))
PARTS = os.environ.get("PARTS", "single,relay").split(",")
MIN_ROUNDS = 20
NODE_FLAGS = ["--rate", "0", "--log-level", "warn"]


def config(loader, work):
    text = subprocess.run([str(loader), "config", "--panel", "hall", "--buttons", "4", "--groups", "1",
                           "--policy", "buzzer", "--announce", str(ANNOUNCE)],
                          check=True, capture_output=True, text=True).stdout
    if os.environ.get("WINDOW_US"):
        # The buzzer group's decision_window_us; the server's default without it.
        parsed = json.loads(text)
        for group in parsed["panels"][0].get("groups", {}).values():
            group["decision_window_us"] = int(os.environ["WINDOW_US"])
        text = json.dumps(parsed)
    path = work / "hall.json"
    path.write_text(text)
    return path, json.loads(text)


def buzz(loader, port):
    args = ["buzz", "--host", "127.0.0.1", "--port", str(port), "--panel", "hall", "--connections", str(PLAYERS),
            "--announce", str(ANNOUNCE), "--observers", "1", "--connect-batch", "500",
            "--duration", str(DURATION), "--warmup", str(WARMUP)]
    before = os.getloadavg()
    code, result, output = cl.run_load(loader, args, timeout=DURATION + WARMUP + 300)
    check(result is not None, f"arbiter-load printed no result (status {code}):\n{output[-3000:]}")
    result.update(status=code, loadavg_before=[round(x, 2) for x in before],
                  loadavg_after=[round(x, 2) for x in os.getloadavg()],
                  command="arbiter-load " + " ".join(args))
    if code != 0:
        log(f"  arbiter-load exited {code}:\n{output[-2000:]}")
    return result


def single(binary, loader, path, work):
    port = cl.free_ports(1)[0]
    proc = cl.spawn([str(binary), "--host", "127.0.0.1", "--port", str(port), "--config", str(path)] + NODE_FLAGS,
                    work / "single.log")
    try:
        cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=1)[0] == 200, 20, "the single node to answer")
        return buzz(loader, port)
    finally:
        cl.kill_group(proc)


def relay(binary, loader, panels):
    cluster = cl.Cluster(binary, panels, ttl=3, extra=NODE_FLAGS).start()
    try:
        time.sleep(3)  # the first node sheds panels to the others one per step; let that finish
        leader = cluster.leader_of("hall")
        via = next(n for n in cluster.nodes if n is not leader)
        log(f"  players on {via.name}, which relays to the leader {leader.name}")
        result = buzz(loader, via.port)
        result.update(leader=leader.name, relay=via.name)
        return result
    finally:
        cluster.stop()


def figure(run, key, stat):
    latency = run.get(key)
    return latency.get(stat) if isinstance(latency, dict) and latency.get("count") else None


def cell(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    bindir = Path(sys.argv[1]).resolve()
    binary, loader = bindir / "arbiter", bindir / "arbiter-load"
    cl.install_cleanup()
    work = cl.temp_dir("hall-bench.")
    path, panels = config(loader, work)
    runs = []
    try:
        for i in range(RUNS):
            for part in PARTS:
                log(f"run {i + 1} of {RUNS}: {part} (load average {os.getloadavg()[0]:.2f})")
                run = single(binary, loader, path, work) if part == "single" else relay(binary, loader, panels)
                run.update(setting=part, run=i + 1)
                runs.append(run)
                log(f"  {run.get('rounds')} rounds, press->RANKED p99 {figure(run, 'reply_latency_us', 'p99')} us, "
                    f"press->BUZZED p99 {figure(run, 'event_latency_us', 'p99')} us, "
                    f"clean {run.get('safety', {}).get('clean')}, status {run['status']}")
                if os.environ.get("HALL_JSONL"):
                    with open(os.environ["HALL_JSONL"], "a") as f:
                        f.write(json.dumps(run) + "\n")
    except Failure as error:
        print(f"\nFAIL: {error}", file=sys.stderr)
        return 1
    finally:
        cl.cleanup()

    ms = lambda us: f"{us / 1000:.1f} ms"
    print(f"\n{PLAYERS} players, announce {ANNOUNCE}, {DURATION:g} s measured after {WARMUP:g} s, "
          f"medians of {RUNS} (min-max):\n")
    print("| setting | rounds | press->RANKED p50 | press->RANKED p99 | press->BUZZED p50 | press->BUZZED p99 | clean | load avg (1 min) |")
    print("|---|---|---|---|---|---|---|---|")
    for part in PARTS:
        rs = [r for r in runs if r["setting"] == part]
        clean = all(r["status"] == 0 and r.get("safety", {}).get("clean") for r in rs)
        loads = [r["loadavg_before"][0] for r in rs] + [r["loadavg_after"][0] for r in rs]
        print(f"| {part} | {cell([r.get('rounds') for r in rs], lambda v: f'{v:.0f}')} "
              f"| {cell([figure(r, 'reply_latency_us', 'p50') for r in rs], ms)} "
              f"| {cell([figure(r, 'reply_latency_us', 'p99') for r in rs], ms)} "
              f"| {cell([figure(r, 'event_latency_us', 'p50') for r in rs], ms)} "
              f"| {cell([figure(r, 'event_latency_us', 'p99') for r in rs], ms)} "
              f"| {'yes' if clean else 'NO'} | {min(loads):.1f}-{max(loads):.1f} |")
    few = [f"{r['setting']} run {r['run']}: {r.get('rounds')}" for r in runs if (r.get("rounds") or 0) < MIN_ROUNDS]
    if few:
        print(f"\nfewer than {MIN_ROUNDS} rounds measured: {', '.join(few)} (raise DURATION)")
    ok = all(r["status"] == 0 for r in runs) and not few
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
