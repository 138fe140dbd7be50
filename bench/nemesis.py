#!/usr/bin/env python3
"""Random faults against a 3-node cluster under load, with arbiter-load's checker on: the
Jepsen way of looking for what the scripted scenarios (Tests/cluster/e2e.py) did not think of.

3 etcd members and 3 nodes on loopback (each node reaches etcd and the other nodes through
proxies that can hold every byte, as in e2e.py), one panel of taps, holds, talks and two queue lines, and
`arbiter-load <workload> --hosts` over the three nodes with observers on each. Every 3-7 s
one fault, chosen at random from a seeded generator and then undone:

  kill        kill -9 a node, start it again 0.5-4 s later
  pause       SIGSTOP a node for 0.5-2.5 s (pause-long: 4-8 s, past its lease), SIGCONT
  etcd1       kill -9 one etcd member for 1-5 s (nothing visible may happen)
  etcd2       kill -9 two etcd members for 1-5 s (no majority: presses get unavailable)
  cut-nodes   hold every byte on a node's relay links for 1-5 s
  cut-etcd    hold every byte between a node and etcd for 1-5 s
  restart     SIGTERM a node (a rolling upgrade's step), start it again 0.5-4 s later;
              a node not gone 10 s after its SIGTERM is killed and fails the run
  etcd-freeze SIGSTOP one etcd member (etcd's leader half the time) for 1-5 s, SIGCONT
              (etcd-freeze2: two members, no majority); a frozen member accepts
              connections and answers nothing

A prober asks every node for `GET /api/panels` every 0.3 s (a node that follows the panel
asks its leader, `LeaderStateGather`): its answers must come, and none may show two
buttons of one group pressed; a node found dead that no fault killed (a crash) fails the
run as well.

Raw observers (one per node, plain sockets, reconnecting) record every line with its time
in WORKDIR/obs<n>.txt, for reading a violation's surroundings; the faults and their
times go to WORKDIR/faults.txt, the nodes' logs to WORKDIR/node-<name>-<run>.log (each
line prefixed with the same monotonic clock).

    python3 bench/nemesis.py BINDIR [--seconds 240] [--seed 1] [--workload contend|holds|queue|buzz]
                                    [--ws-fraction F] [--workdir DIR] [--faults kill,pause,pause-edge,...]

Exit status: arbiter-load's (0: the checker found nothing). Needs etcd and etcdctl.
"""
import argparse
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
import clusterlib as cl  # noqa: E402

TAPS = 16
PANEL = {"id": "busy", "title": "Busy", "buttons":
         [{"id": f"b{i}", "kind": "tap", "group": f"g{i % 4}", "timeout_ms": 0} for i in range(1, TAPS + 1)]
         + [{"id": f"h{i}", "kind": "hold", "hold_ms": 200, "group": f"hg{i % 3}"} for i in range(1, 7)]
         + [{"id": f"t{i}", "kind": "talk", "group": f"tg{i % 2}"} for i in range(1, 5)]
         # After every other tap, so contend's first TAPS taps stay b1..b16: `--workload
         # queue` contends for these, two lines of two buttons each.
         + [{"id": f"q{i}", "kind": "tap", "group": f"ql{i % 2}", "timeout_ms": 0} for i in range(1, 5)]
         # `--workload buzz`: rounds of one buzzer group (a host ARMs, every player presses).
         + [{"id": f"z{i}", "kind": "tap", "group": "zg", "timeout_ms": 0} for i in range(1, 5)],
         "groups": {"ql0": {"policy": "queue", "max_queue": 64}, "ql1": {"policy": "queue", "max_queue": 64},
                    "zg": {"policy": "buzzer"}}}
FAULTS = ["kill", "pause", "pause-long", "etcd1", "etcd2", "cut-nodes", "cut-etcd"]
# Not in the default mix (a new kind there would change every seed's schedule): a pause
# across the lease's edges (TTL 3 s: the safe window ends at 2.5 s, etcd expires the
# lease at 3 s, another node wins the panel soon after), where a node wakes while the
# others are still finding out. `--faults pause-edge,kill,...` picks the mix.
EXTRA_FAULTS = ["pause-edge", "restart", "etcd-freeze", "etcd-freeze2"]
# `etcd-freeze`: one etcd member (etcd's leader half the time) SIGSTOPped for 1-5 s, then
# SIGCONTed. It accepts connections and answers nothing meanwhile; etcd 3.4's leader, woken
# after more than about the TTL, revokes the leases it saw no keepalive for (etcd issue
# 15247): a failover on every node, which must stay safe. `etcd-freeze2` freezes two
# members at once: etcd without a majority that answers nothing instead of refusing.
ETCD_FREEZE_S = (1, 5)
# A graceful stop has this long before the run counts it as hung (`inject`).
SHUTDOWN_LIMIT_S = 10
PAUSES = {"pause": (0.5, 2.5), "pause-long": (4, 8), "pause-edge": (2.3, 3.8)}


def observe(node, path, stop):
    """One member of the panel on `node`, every line kept; reconnects while the node is down."""
    with open(path, "w") as out:
        while not stop.is_set():
            try:
                sock = socket.create_connection(("127.0.0.1", node.port), timeout=2)
                sock.settimeout(1.0)
                sock.sendall(f"HELLO raw-{node.name}\nJOIN busy\n".encode())
                out.write(f"{time.monotonic():.6f} #connected {node.name}\n")
                pending = b""
                while not stop.is_set():
                    try:
                        data = sock.recv(65536)
                    except socket.timeout:
                        continue
                    if not data:
                        break
                    pending += data
                    *lines, pending = pending.split(b"\n")
                    now = time.monotonic()
                    for line in lines:
                        out.write(f"{now:.6f} {line.decode(errors='replace')}\n")
                out.write(f"{time.monotonic():.6f} #closed\n")
                sock.close()
            except OSError as error:
                out.write(f"{time.monotonic():.6f} #error {error}\n")
            stop.wait(0.5)


def probe(nodes, stop, report):
    """GET /api/panels on each node in turn until `stop`: answer times, failures (a node
    down or paused does not answer: counted, not judged), and any document with two
    buttons of one group pressed (judged)."""
    groups = {b["id"]: b["group"] for b in PANEL["buttons"]}
    while not stop.is_set():
        for node in nodes:
            began = time.monotonic()
            status, body = cl.http_get(node.port, "/api/panels", timeout=5)
            took = time.monotonic() - began
            if status != 200:
                report["failed"] += 1
                continue
            report["answers"].append(took)
            try:
                buttons = json.loads(body)["panels"][0]["buttons"]
            except (ValueError, KeyError, IndexError) as error:
                report["bad"].append(f"{node.name}: {error}: {body[:200]}")
                continue
            pressed = [b["id"] for b in buttons if b["state"] == "pressed"]
            by_group = {}
            for b in pressed:
                by_group.setdefault(groups[b], []).append(b)
            for group, ids in by_group.items():
                if len(ids) > 1:
                    report["bad"].append(f"{node.name} at {began:.3f}: group {group} pressed on {ids}")
        stop.wait(0.3)


def inject(kind, node, cluster, rng):
    """Injects and undoes one fault; returns what went wrong with the node itself (a
    shutdown that hung), or None."""
    if kind == "restart":
        began = time.monotonic()
        node.proc.terminate()
        try:
            node.proc.wait(timeout=SHUTDOWN_LIMIT_S)
        except subprocess.TimeoutExpired:
            node.kill9()
            return f"{node.name} still running {SHUTDOWN_LIMIT_S} s after SIGTERM"
        cl.log(f"  {node.name} stopped {time.monotonic() - began:.2f} s after SIGTERM, status {node.proc.returncode}")
        bad = None if node.proc.returncode == 0 else f"{node.name} exited with status {node.proc.returncode} on SIGTERM"
        time.sleep(rng.uniform(0.5, 4))
        node.start()
        return bad
    if kind == "kill":
        node.kill9()
        time.sleep(rng.uniform(0.5, 4))
        node.start()
    elif kind.startswith("pause"):
        node.pause()
        time.sleep(rng.uniform(*PAUSES[kind]))
        node.resume()
    elif kind in ("etcd1", "etcd2"):
        members = rng.sample([1, 2, 3], 1 if kind == "etcd1" else 2)
        for m in members:
            cluster.etcd.kill_member(m)
        time.sleep(rng.uniform(1, 5))
        for m in members:
            cluster.etcd.start_member(m)
    elif kind == "etcd-freeze2":
        members = rng.sample(cluster.etcd.alive(), 2)
        cl.log(f"  etcd m{members[0]} and m{members[1]} frozen")
        for m in members:
            cluster.etcd.pause_member(m)
        time.sleep(rng.uniform(*ETCD_FREEZE_S))
        for m in members:
            cluster.etcd.resume_member(m)
    elif kind == "etcd-freeze":
        alive = cluster.etcd.alive()
        leader = None
        if rng.random() < 0.5:
            try:
                leader = cluster.etcd.leader_member(timeout=5)
            except cl.Failure:
                leader = None
        member = leader if leader in alive else rng.choice(alive)
        cl.log(f"  etcd m{member}{' (its leader)' if member == leader else ''} frozen")
        cluster.etcd.pause_member(member)
        time.sleep(rng.uniform(*ETCD_FREEZE_S))
        cluster.etcd.resume_member(member)
    elif kind == "cut-nodes":
        node.cut_from_nodes()
        time.sleep(rng.uniform(1, 5))
        node.reconnect_to_nodes()
    elif kind == "cut-etcd":
        node.cut_from_etcd()
        time.sleep(rng.uniform(1, 5))
        node.reconnect_to_etcd()
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bindir", type=Path)
    parser.add_argument("--seconds", type=int, default=240)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workload", choices=["contend", "holds", "queue", "buzz"], default="contend")
    parser.add_argument("--ws-fraction", type=float, default=0.0,
                        help="share of arbiter-load's connections that are WebSocket peers (JSON), 0 to 1")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--faults", default=",".join(FAULTS),
                        help="comma-separated fault kinds to draw from (default: every kind but " + ", ".join(EXTRA_FAULTS) + ")")
    args = parser.parse_args()
    kinds = args.faults.split(",")
    cl.STAMP_NODE_LOGS = True
    unknown = [k for k in kinds if k not in FAULTS + EXTRA_FAULTS]
    if unknown:
        parser.error(f"unknown fault kinds {unknown}; known: {FAULTS + EXTRA_FAULTS}")
    # Not cl.temp_dir: those are removed at exit, and these files are for reading afterwards.
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nemesis."))
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    cl.install_cleanup()
    cluster = cl.Cluster(args.bindir / "arbiter", {"panels": [PANEL]}, ttl=3,
                         extra=["--rate", "0", "--log-level", "info"], proxied=True).start()
    stop = threading.Event()
    faults = []
    code = 1
    try:
        observers = [threading.Thread(target=observe, args=(n, work / f"obs{i}.txt", stop), daemon=True)
                     for i, n in enumerate(cluster.nodes)]
        for o in observers:
            o.start()
        api = {"answers": [], "failed": 0, "bad": []}
        prober = threading.Thread(target=probe, args=(cluster.nodes, stop, api), daemon=True)
        prober.start()
        load = [args.workload, "--hosts", cluster.hosts(), "--panel", "busy", "--connections", "30",
                "--observers", "3", "--duration", str(args.seconds), "--ws-fraction", str(args.ws_fraction)]
        load += {"contend": ["--buttons", str(TAPS)], "holds": ["--max-hold-ms", "400"], "queue": [], "buzz": []}[args.workload]
        run = cl.BackgroundLoad(args.bindir / "arbiter-load", load, timeout=args.seconds + 180)
        started = time.monotonic()
        # Bounded by the clock: one fault per turn, none in the last 12 s.
        while time.monotonic() - started < args.seconds - 12:
            time.sleep(rng.uniform(3, 7))
            kind, node = rng.choice(kinds), rng.choice(cluster.nodes)
            began = time.monotonic()
            trouble = inject(kind, node, cluster, rng)
            faults.append({"at_s": round(began - started, 1), "fault": kind, "node": node.name,
                           "began": round(began, 3), "ended": round(time.monotonic(), 3)})
            if trouble:
                faults[-1]["trouble"] = trouble
                cl.log(f"  {trouble}")
            cl.log(f"fault at {faults[-1]['at_s']} s: {kind} {node.name}")
            for n in cluster.nodes:
                if not n.running():
                    # Every fault that stops a node starts it again itself: this one died.
                    faults[-1].setdefault("trouble", "")
                    faults[-1]["trouble"] += f"{n.name} found dead (status {n.proc.returncode}); "
                    cl.log(f"  {n.name} found dead, status {n.proc.returncode}")
                    n.start()
        code, result, output = run.join(args.seconds + 200)
        summary = {k: (result or {}).get(k) for k in ("cycles_per_s", "reconnects", "unavailable", "failover_ups", "lines_lost", "hand_offs",
                                                      "rounds", "ranked", "early_denied", "abandoned_rounds", "abandon_samples", "denials", "errors", "error_samples", "safety")}
        troubles = [f["trouble"] for f in faults if "trouble" in f]
        times = sorted(api["answers"])
        api_summary = {"answers": len(times), "failed": api["failed"], "two_pressed_in_a_group": api["bad"][:10],
                       "p50_ms": round(times[len(times) // 2] * 1000, 1) if times else None,
                       "max_ms": round(times[-1] * 1000, 1) if times else None}
        troubles += [f"/api/panels: {b}" for b in api["bad"][:10]]
        if not times:
            troubles.append("/api/panels never answered")
        print(json.dumps({"faults": len(faults), "kinds": {k: sum(f["fault"] == k for f in faults) for k in kinds},
                          "status": code, "load": summary, "api_panels": api_summary, "node_troubles": troubles}, indent=1))
        if troubles and code == 0:
            code = 1
        if code != 0:
            print(output[-4000:], file=sys.stderr)
    finally:
        stop.set()
        time.sleep(1.5)
        (work / "faults.txt").write_text("\n".join(json.dumps(f) for f in faults) + "\n")
        # Every run of every node (a killed node's earlier runs explain most violations).
        for n in cluster.nodes:
            for run in sorted(Path(cluster.workdir).glob(f"{n.name}-*.log")):
                shutil.copy(run, work / f"node-{run.name}")
        cluster.stop()
        print(f"observers, faults and node logs: {work}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
