#!/usr/bin/env python3
"""Cluster mode under load, or a demo cluster to play with.

    python3 bench/cluster.py BINDIR            the benchmark (bench/cluster.sh runs it)
    python3 bench/cluster.py BINDIR --demo     3 etcd members + 3 nodes, until Ctrl-C

BINDIR holds arbiter and arbiter-load (bench/cluster.sh builds release ones).

The benchmark, on loopback with a 3-member etcd (--heartbeat-interval 50
--election-timeout 500) and 3 nodes (--cluster-ttl 3, --rate 0):
  1. lock cycles/s (contend, --observers 0) on one single node (no --cluster), through
     the busy panel's leader node only, and through a relaying node only; then one
     connection alone through each, for the relay hop's cost without queueing, in turn
     with the same through bench/floor's C server alone and behind its C relay (what one
     extra loopback hop costs here at the least), LATENCY_ROUNDS (3) rounds;
  2. fan-out of FANOUT_MEMBERS (3000) members on the single node, and spread over the
     3 nodes (--hosts all three);
  3. failovers: contend over all three nodes (--hosts, observers on each node) while the
     busy panel's leader is killed (kill -9) every FAILOVER_EVERY s (10) and restarted,
     FAILOVERS (20) times; a probe presses through a surviving node to time each gap
     (kill -> first GRANTED through a surviving node); the run's checker must be clean.
Environment: NODE_ARGS (flags for every arbiter process), FAILOVERS, FAILOVER_EVERY,
LOCK_S (10), FANOUT_S (10), CONNECTIONS (32), FANOUT_MEMBERS (3000). The figures are printed at the end, and as JSON to
$CLUSTER_BENCH_JSON when set.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402
from clusterlib import Failure, check, log  # noqa: E402

BUTTONS = 16
BUSY = {"id": "busy", "title": "Busy", "buttons":
        [{"id": f"b{i}", "kind": "tap", "group": f"g{i}", "timeout_ms": 0} for i in range(1, BUTTONS + 1)]
        + [{"id": "probe", "kind": "tap", "group": "probe", "timeout_ms": 0}]}
FAN = {"id": "fan", "title": "Fan-out", "buttons": [{"id": "f1", "kind": "tap", "group": "g1", "timeout_ms": 0},
                                                    {"id": "f2", "kind": "tap", "group": "g2", "timeout_ms": 0}]}
DEMO = {"id": "demo", "title": "Cluster demo", "buttons": [
    {"id": "b1", "label": "Button 1", "kind": "tap"},
    {"id": "b2", "label": "Button 2", "kind": "tap"},
    {"id": "b3", "label": "Button 3", "kind": "tap"},
    {"id": "sos", "label": "SOS", "kind": "hold", "hold_ms": 3000, "group": "emergency"},
    {"id": "talk", "label": "Talk", "kind": "talk", "group": "talk"}]}
CONFIG = {"panels": [BUSY, FAN, DEMO]}

FAILOVERS = int(os.environ.get("FAILOVERS", "20"))
EVERY = float(os.environ.get("FAILOVER_EVERY", "10"))
LOCK_S = float(os.environ.get("LOCK_S", "10"))
FANOUT_S = float(os.environ.get("FANOUT_S", "10"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "32"))
MEMBERS = int(os.environ.get("FANOUT_MEMBERS", "3000"))
LATENCY_ROUNDS = int(os.environ.get("LATENCY_ROUNDS", "3"))
# Flags every arbiter process gets besides the benchmark's own, for A/B runs (e.g.
# NODE_ARGS="--idle-spin 0").
NODE_ARGS = os.environ.get("NODE_ARGS", "").split()
PARTS = os.environ.get("PARTS", "single,locks,latency,fanout,failovers").split(",")


def load(loader, args, seconds):
    code, result, output = cl.run_load(loader, args, timeout=seconds + 120)
    check(result is not None, f"arbiter-load printed no result (status {code}):\n{output[-3000:]}")
    return code, result, output


def cpu_times():
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def steal_share(before, after):
    """The share of the machine's CPU time the hypervisor gave to others (steal) between two
    readings: on this VM it swung lock cycles/s from 6,753 to 34,012 between runs a few
    minutes apart (2026-12-02), so each figure says how much of it there was."""
    spent = [b - a for a, b in zip(before, after)]
    return round(spent[7] / sum(spent), 3) if sum(spent) else 0.0


def contend(loader, hosts, seconds, observers=0, extra=()):
    before = cpu_times()
    code, result, output = load(loader, ["contend", "--hosts", hosts, "--panel", "busy", "--buttons", str(BUTTONS),
                                         "--connections", str(CONNECTIONS), "--observers", str(observers),
                                         "--duration", str(seconds), "--warmup", "1"] + list(extra), seconds)
    result["steal_share"] = steal_share(before, cpu_times())
    return code, result, output


def fanout(loader, hosts, seconds):
    return load(loader, ["fanout", "--hosts", hosts, "--panel", "fan", "--members", str(MEMBERS),
                         "--pressers", "2", "--connect-batch", "500", "--duration", str(seconds), "--warmup", "1"], seconds)


def single_node(binary, workdir):
    config = workdir / "single.json"
    config.write_text(json.dumps(CONFIG))
    port = cl.free_ports(1)[0]
    proc = cl.spawn([str(binary), "--port", str(port), "--host", "127.0.0.1", "--config", str(config), "--rate", "0",
                     "--log-level", "warn"] + NODE_ARGS, workdir / "single.log")
    cl.wait_until(lambda: cl.http_get(port, "/healthz", timeout=1)[0] == 200, 20, "the single node to answer")
    return proc, f"127.0.0.1:{port}"


def bench(bindir):
    binary, loader = bindir / "arbiter", bindir / "arbiter-load"
    figures = {"cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg()}
    work = cl.temp_dir("cluster-bench.")

    if "single" in PARTS:
        log("single node (no --cluster)")
        proc, host = single_node(binary, work)
        _, r, _ = contend(loader, host, LOCK_S)
        figures["single_cycles_per_s"] = r["cycles_per_s"]
        figures["single_steal_share"] = r["steal_share"]
        figures["single_reply_us"] = r.get("reply_latency_us")
        _, r, _ = fanout(loader, host, FANOUT_S)
        figures["single_fanout_events_per_s"] = r["events_per_s"]
        figures["single_fanout_press_to_event_us"] = r.get("event_latency_us")
        cl.kill_group(proc)
        log(f"  {figures['single_cycles_per_s']} cycles/s (steal {figures['single_steal_share']:.1%}), "
            f"fan-out {figures['single_fanout_events_per_s']} events/s")

    cluster = cl.Cluster(binary, CONFIG, ttl=3, extra=["--rate", "0", "--log-level", "warn"] + NODE_ARGS).start()
    try:
        time.sleep(3)  # the first node sheds panels to the others one per step; let that finish
        leader = cluster.leader_of("busy")
        relay = next(n for n in cluster.nodes if n is not leader)
        if "locks" in PARTS:
            log(f"lock cycles through the leader {leader.name}")
            _, r, _ = contend(loader, leader.address, LOCK_S)
            figures["leader_cycles_per_s"] = r["cycles_per_s"]
            figures["leader_steal_share"] = r["steal_share"]
            log(f"  {r['cycles_per_s']} cycles/s (steal {r['steal_share']:.1%})")
            figures["leader_reply_us"] = r.get("reply_latency_us")
        if "relay" in PARTS or "locks" in PARTS and "norelay" not in PARTS:
            log(f"lock cycles through {relay.name}, which relays to {leader.name}")
            _, r, _ = contend(loader, relay.address, LOCK_S)
            figures["relay_cycles_per_s"] = r["cycles_per_s"]
            figures["relay_steal_share"] = r["steal_share"]
            figures["relay_reply_us"] = r.get("reply_latency_us")
        if "latency" in PARTS:
            latency(loader, leader, relay, work, figures)
        if "fanout" in PARTS:
            fan_leader = cluster.leader_of("fan")
            log(f"fan-out: {MEMBERS} members on the leader's node {fan_leader.name}")
            _, r, _ = fanout(loader, fan_leader.address, FANOUT_S)
            figures["cluster1_fanout_events_per_s"] = r["events_per_s"]
            figures["cluster1_fanout_press_to_event_us"] = r.get("event_latency_us")
            if "norelay" not in PARTS:
                log(f"fan-out: {MEMBERS} members over 3 nodes")
                _, r, _ = fanout(loader, cluster.hosts(), FANOUT_S)
                figures["cluster3_fanout_events_per_s"] = r["events_per_s"]
                figures["cluster3_fanout_press_to_event_us"] = r.get("event_latency_us")
        if "failovers" in PARTS:
            failovers(cluster, loader, figures)
    finally:
        cluster.stop()
    return figures


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def latency(loader, leader, relay, work, figures):
    """One connection in a closed loop: the relay hop's own cost, not queueing.

    What "one extra loopback round trip" costs on this machine at this minute is measured
    beside it, not assumed: bench/floor/floor-server.c (the least work a server can do for
    contend) alone, and behind bench/floor/floor-relay.c (the least work a relaying process
    can do: a copy each way, one thread). The four run in turn, LATENCY_ROUNDS times, each
    round in a rotated order, so drift in the machine's load lands on all of them.
    """
    floor_server, floor_relay = work / "floor-server", work / "floor-relay"
    for source, binary in (("floor-server.c", floor_server), ("floor-relay.c", floor_relay)):
        subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(ROOT / "bench" / "floor" / source)],
                       check=True)
    server_port, relay_port = cl.free_ports(2)
    procs = [cl.spawn([str(floor_server), str(server_port), str(BUTTONS)], work / "floor-server.log")]
    procs.append(cl.spawn([str(floor_relay), str(relay_port), str(server_port)], work / "floor-relay.log"))
    targets = {"leader": leader.address, "relay": relay.address,
               "floor": f"127.0.0.1:{server_port}", "floor_relay": f"127.0.0.1:{relay_port}"}
    p50s = {name: [] for name in targets}
    try:
        for port in (server_port, relay_port):
            cl.wait_until(lambda: listening(port), 10, f"the floor on port {port} to listen")
        order = list(targets)
        for round_ in range(LATENCY_ROUNDS):
            for name in order[round_ % len(order):] + order[:round_ % len(order)]:
                _, r, _ = load(loader, ["contend", "--hosts", targets[name], "--panel", "busy", "--buttons", str(BUTTONS),
                                        "--connections", "1", "--observers", "0", "--duration", str(LOCK_S / 2),
                                        "--warmup", "1"], LOCK_S)
                p50s[name].append(r["reply_latency_us"]["p50"])
                figures.setdefault(f"{name}_1conn_reply_us", []).append(r.get("reply_latency_us"))
    finally:
        for proc in procs:
            cl.kill_group(proc)
    median = {name: statistics.median(values) for name, values in p50s.items()}
    relay_extra = median["relay"] - median["leader"]
    hop = median["floor_relay"] - median["floor"]
    figures["latency_p50_us_rounds"] = p50s
    figures["latency_p50_us_median"] = median
    figures["relay_extra_p50_us"] = round(relay_extra, 1)
    figures["floor_hop_p50_us"] = round(hop, 1)
    log(f"  one connection, request->reply p50 (median of {LATENCY_ROUNDS} rounds): leader's node {median['leader']} us, "
        f"relaying node {median['relay']} us (+{relay_extra:.1f}); floor server {median['floor']} us, "
        f"through the floor relay {median['floor_relay']} us (+{hop:.1f}: one extra loopback hop, at its cheapest)")


def failovers(cluster, loader, figures):
    seconds = FAILOVERS * EVERY + EVERY
    log(f"failovers: {FAILOVERS}, one every {EVERY:.0f} s, contend over all 3 nodes for {seconds:.0f} s")
    run = cl.BackgroundLoad(loader, ["contend", "--hosts", cluster.hosts(), "--panel", "busy", "--buttons", str(BUTTONS),
                                     "--connections", str(CONNECTIONS), "--observers", "3", "--duration", str(seconds)],
                            timeout=seconds + 180)
    gaps = []
    started = time.monotonic()
    probes = []
    try:
        for i in range(FAILOVERS):
            time.sleep(max(0.0, started + (i + 0.5) * EVERY - time.monotonic()))  # the schedule, not a poll
            for node in cluster.nodes:
                if not node.running():
                    node.start()
            leader = cluster.leader_of("busy", timeout=20, among=[n for n in cluster.nodes if n.running()])
            survivors = [n for n in cluster.nodes if n is not leader and n.running()]
            for probe in probes:
                probe.stop()
            # One probe per surviving node: the gap ends at the first grant through any of them.
            probes = [cl.Presser(n.port, f"probe{i}-{n.name}", "busy", "probe", pause=0.02) for n in survivors]
            for probe in probes:
                probe.start()
            cl.wait_until(lambda: any(p.first_grant_after(0) for p in probes), 10, "a probe to be granted before the kill")
            killed = time.monotonic()
            leader.kill9()

            def first():
                grants = [(g[0], n.name) for p, n in zip(probes, survivors) if (g := p.first_grant_after(killed))]
                return min(grants) if grants else None
            at, via = cl.wait_until(first, 20, f"a grant after killing {leader.name}")
            gaps.append(at - killed)
            log(f"  failover {i + 1}: killed {leader.name}, first grant through {via} after {gaps[-1] * 1000:.0f} ms")
            leader.start()
    finally:
        for probe in probes:
            probe.stop()
    code, result, output = run.join(seconds + 200)
    check(result is not None, f"the failover run printed no result (status {code}):\n{output[-3000:]}")
    figures["failovers"] = len(gaps)
    figures["failover_gap_ms_p50"] = round(cl.percentile(gaps, 0.5) * 1000)
    figures["failover_gap_ms_max"] = round(max(gaps) * 1000)
    figures["failover_gaps_ms"] = [round(g * 1000) for g in gaps]
    figures["failover_run"] = {k: result.get(k) for k in ("cycles_per_s", "reconnects", "unavailable", "failover_ups",
                                                           "errors", "safety")}
    figures["failover_run_status"] = code
    log(f"  gaps p50 {figures['failover_gap_ms_p50']} ms, max {figures['failover_gap_ms_max']} ms; "
        f"status {code}, safety {result.get('safety')}")
    if code != 0:
        print(output[-3000:], file=sys.stderr)


def demo(bindir):
    ports = [int(p) for p in os.environ.get("DEMO_PORTS", "7071,7072,7073").split(",")]
    cluster = cl.Cluster(bindir / "arbiter", {"panels": [DEMO]}, count=len(ports), ttl=3)
    for node, port in zip(cluster.nodes, ports):
        node.port = port
    cluster.start()
    print("\nA cluster of 3 nodes on one etcd (3 members), all on this machine:\n")
    for node in cluster.nodes:
        print(f"  {node.name}: http://{node.address}/panel/demo     nc 127.0.0.1 {node.port}     (pid {node.proc.pid})")
    print(f"\netcd: {cluster.etcd.endpoints}")
    print("Open a kiosk on one node, kill that node (kill -9 <pid>) and watch the page move to another.")
    print("A killed node is restarted 5 s later. Ctrl-C stops everything.\n", flush=True)
    try:
        while True:  # until Ctrl-C; each turn restarts nodes that died
            time.sleep(1)
            for node in cluster.nodes:
                if not node.running():
                    dead_for = getattr(node, "dead_since", None)
                    if dead_for is None:
                        node.dead_since = time.monotonic()
                        log(f"{node.name} is gone; restarting it in 5 s")
                    elif time.monotonic() - dead_for > 5:
                        node.dead_since = None
                        node.start()
                        log(f"{node.name} restarted (pid {node.proc.pid})")
    finally:
        cluster.stop()


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    bindir = Path(args[0]).resolve()
    cl.install_cleanup()
    try:
        if "--demo" in args:
            demo(bindir)
            return 0
        figures = bench(bindir)
    except Failure as error:
        print(f"\nFAIL: {error}", file=sys.stderr)
        return 1
    finally:
        cl.cleanup()
    figures["loadavg_at_end"] = os.getloadavg()
    print("\nCluster benchmark (loopback, 3 etcd members, 3 nodes, --cluster-ttl 3):")
    for key, value in figures.items():
        print(f"  {key}: {value}")
    if os.environ.get("CLUSTER_BENCH_JSON"):
        Path(os.environ["CLUSTER_BENCH_JSON"]).write_text(json.dumps(figures, indent=1))
    print(json.dumps(figures))
    return 0 if figures.get("failover_run_status", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
