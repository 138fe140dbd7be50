#!/usr/bin/env python3
"""Reads the JSON lines of bench/compare.sh and prints the comparison table (Markdown):
the median of each system's runs, their min-max spread, and arbiter / Redis."""
import json
import statistics
import sys

# (label, row, how to read the figure from one run, unit, higher is better)
METRICS = [
    ("lock cycles/s, 10 connections", "contend10", lambda r: r["cycles_per_s"], "/s", True),
    ("lock cycles/s, 100 connections", "contend100", lambda r: r["cycles_per_s"], "/s", True),
    ("lock cycles/s, 1000 connections", "contend1000", lambda r: r["cycles_per_s"], "/s", True),
    ("fan-out deliveries/s, 1 presser -> 100 members", "fanout100", lambda r: r["events_per_s"], "/s", True),
    ("fan-out deliveries/s, 1 presser -> 1000 members", "fanout1000", lambda r: r["events_per_s"], "/s", True),
    ("p99 request->reply, 10 connections", "contend10", lambda r: r["reply_latency_us"]["p99"], "us", False),
    ("server memory per idle connection, 10,000 connections", "idle10000",
     lambda r: r["memory"]["per_connection_bytes"], "B", False),
]


def fmt(value, unit):
    if unit == "us":
        return f"{value / 1000:.3f} ms"
    if unit == "B":
        return f"{value:,.0f} B"
    return f"{value:,.0f}"


def observers(runs, row):
    """How the row's arbiter runs were watched: bench/compare.sh runs the contend rows
    with --observers 0 (older result files had one observer)."""
    commands = {r["command"] for r in runs if r["row"] == row and r["system"] == "arbiter"}
    if not row.startswith("contend") or not commands:
        return ""
    return ", no observer" if all("--observers 0" in c for c in commands) else ", 1 arbiter observer"


def pair_ratios(in_order):
    """The runs alternate arbiter, Redis, arbiter, Redis...: the ratio within each pair
    sees the same minute of a drifting VM, so its median is the steadier figure when the
    machine's speed wanders between pairs. Only when every run of the row succeeded
    (otherwise the pairs would no longer line up)."""
    a, r = in_order.get("arbiter", []), in_order.get("redis", [])
    if not a or len(a) != len(r) or any(v == 0 for v in r):
        return "-"
    ratios = [x / y for x, y in zip(a, r)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f} - {max(ratios):.2f})"


def main(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    failures = [r for r in runs if r.get("status") != 0]
    print("| figure | arbiter median (min-max) | Redis median (min-max) | arbiter / Redis | per pair (median, min-max) |")
    print("|---|---|---|---|---|")
    for label, row, read, unit, higher in METRICS:
        cells = []
        medians = {}
        in_order = {}
        for system in ("arbiter", "redis"):
            values = []
            for r in runs:
                if r["row"] != row or r["system"] != system or r.get("status") != 0:
                    continue
                try:
                    values.append(float(read(r)))
                except (KeyError, TypeError):
                    pass
            in_order[system] = values
            if values:
                medians[system] = statistics.median(values)
                cells.append(f"{fmt(medians[system], unit)} ({fmt(min(values), unit)} - {fmt(max(values), unit)}), n={len(values)}")
            else:
                cells.append("no successful run")
        ratio = "-"
        if medians.get("redis"):
            ratio = f"{medians['arbiter'] / medians['redis']:.2f}x" if "arbiter" in medians else "-"
            ratio += " (higher is better)" if higher else " (lower is better)"
        print(f"| {label}{observers(runs, row)} | {cells[0]} | {cells[1]} | {ratio} | {pair_ratios(in_order)} |")
    print()
    print("CPU during the measured window (median share of one core):")
    for row in ("contend10", "contend100", "contend1000", "fanout100", "fanout1000"):
        parts = []
        for system in ("arbiter", "redis"):
            sel = [r for r in runs if r["row"] == row and r["system"] == system and r.get("status") == 0 and r.get("measured_s")]
            gen = [r["generator_cpu_s"] / r["measured_s"] for r in sel if "generator_cpu_s" in r]
            srv = [r["server_cpu_s"] / r["measured_s"] for r in sel if "server_cpu_s" in r]
            if gen and srv:
                parts.append(f"{system}: server {statistics.median(srv) * 100:.0f}%, generator {statistics.median(gen) * 100:.0f}%")
        print(f"- {row}: " + "; ".join(parts))
    print()
    print("Safety checks (every run, both systems):")
    for system in ("arbiter", "redis"):
        sel = [r for r in runs if r["system"] == system and "safety" in r]
        if not sel:
            continue
        grants = sum(r["safety"].get("grants_checked", 0) for r in sel)
        events = sum(r["safety"].get("events_checked", 0) for r in sel)
        bad = sum(r["safety"].get("violations", 0) for r in sel)
        verdict = "clean" if bad == 0 else f"{bad:,} VIOLATIONS"
        print(f"- {system}: {verdict} in {len(sel)} checked runs: {grants:,} grants checked for overlap, {events:,} events checked")
    if failures:
        print()
        print(f"{len(failures)} run(s) failed or were not clean:")
        for r in failures:
            why = r.get("failure") or " / ".join(r.get("safety", {}).get("first_violations", [])[:1])
            print(f"- {r['row']} {r['system']} exit {r['status']}: {why} ({r['command']})")


if __name__ == "__main__":
    main(sys.argv[1])
