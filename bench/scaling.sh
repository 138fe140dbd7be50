#!/usr/bin/env bash
# Multi-core scaling of the arbiter: lock cycles over 8 independent panels, the server
# started with one reactor thread (A) and with two (B), alternating A B A B (PAIRS
# pairs, default 3) so that drift of a shared VM hits both alike. Prints the medians,
# min-max spread and the ratio B / A.
#
#   bench/scaling.sh                  # defaults: PAIRS=3 DURATION=5 WARMUP=1
#   PAIRS=5 DURATION=10 bench/scaling.sh
#   REACTORS_B=4 GEN_THREADS=2 bench/scaling.sh
#
# The workload: `arbiter-load contend --panels 8 --connections 64 --observers 0`, 8
# pressers per panel on 100 buttons each, no member receiving events (checked by the
# overlap check). Panels share nothing, so the server can spread them over reactors.
# On a 2-core machine the generator shares the cores with the server: the ratio is a
# lower bound of what two cores give the server (see the CPU columns).
#
# Needs: swift (release build), python3.
set -euo pipefail

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
REACTORS_A=${REACTORS_A:-1}
REACTORS_B=${REACTORS_B:-2}
GEN_THREADS=${GEN_THREADS:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-scaling.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

need_python
build_release
"$LOAD" config --panels 8 --buttons 100 >"$WORK/panels8.json"

# run <reactors>: one measured run against a fresh server, one JSON line.
run() {
    local reactors=$1
    start_arbiter "$WORK/panels8.json" --reactors "$reactors"
    local args=(contend --panels 8 --connections 64 --observers 0 --threads "$GEN_THREADS"
                --duration "$DURATION" --warmup "$WARMUP" "${TARGET[@]}" --server-pid "$SERVER_PID" --json)
    log "  reactors $reactors: arbiter-load ${args[*]}"
    local out status=0
    out=$("$LOAD" "${args[@]}") || status=$?
    stop_server
    record panels8 "reactors$reactors" "$status" "$out" "arbiter --reactors $reactors; arbiter-load ${args[*]}"
}

machine_line
for _ in $(seq 1 "$PAIRS"); do
    run "$REACTORS_A"
    run "$REACTORS_B"
done
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
log "raw results: $WORK/results.jsonl"

# The arbitration layer alone (no sockets): 8 panels driven by 1 thread, then by as many
# threads as there are cores, alternated. On 2 cores the loopback rows above cannot show
# scaling (the generator needs a core of its own); this shows the part that must be serial
# per panel is not serial across panels.
log "arbitration layer alone (arbiter-cores), 8 panels"
CORES=$(nproc)
for _ in $(seq 1 "$PAIRS"); do
    for t in 1 "$CORES"; do
        "$BIN/arbiter-cores" 8 "$t" "${DURATION%.*}" | tee -a "$WORK/cores.txt" >&2
    done
done
python3 - "$WORK/cores.txt" "$CORES" <<'PYC'
import re, statistics, sys
rates = {}
for line in open(sys.argv[1]):
    m = re.search(r"(\d+) thread\(s\).*: (\d+) lock cycles/s", line)
    if m:
        rates.setdefault(int(m.group(1)), []).append(int(m.group(2)))
cores = int(sys.argv[2])
one, many = statistics.median(rates.get(1, [0])), statistics.median(rates.get(cores, [0]))
print(f"Arbitration layer alone, 8 panels: 1 thread {one:,.0f} lock cycles/s, {cores} threads {many:,.0f}"
      f" ({many / one:.2f}x on {cores} cores), medians of {len(rates.get(1, []))}.")
PYC

python3 - "$WORK/results.jsonl" "reactors$REACTORS_A" "reactors$REACTORS_B" <<'PY'
import json, statistics, sys
path, a, b = sys.argv[1:4]
runs = [json.loads(line) for line in open(path) if line.strip()]
ok = [r for r in runs if r.get("status") == 0]
figures = [
    ("lock cycles/s, 8 panels, 64 connections", lambda r: r["cycles_per_s"], lambda v: f"{v:,.0f}", True),
    ("p99 request->reply", lambda r: r["reply_latency_us"]["p99"], lambda v: f"{v / 1000:.3f} ms", False),
    ("server CPU (share of one core)", lambda r: r["server_cpu_s"] / r["measured_s"], lambda v: f"{v * 100:.0f}%", None),
    ("generator CPU (share of one core)", lambda r: r["generator_cpu_s"] / r["measured_s"], lambda v: f"{v * 100:.0f}%", None),
]
print(f"| figure | {a} median (min-max) | {b} median (min-max) | {b} / {a} |")
print("|---|---|---|---|")
for label, read, fmt, higher in figures:
    cells, medians = [], {}
    for system in (a, b):
        values = []
        for r in ok:
            if r["system"] != system:
                continue
            try:
                values.append(float(read(r)))
            except (KeyError, TypeError, ZeroDivisionError):
                pass
        if values:
            medians[system] = statistics.median(values)
            cells.append(f"{fmt(medians[system])} ({fmt(min(values))} - {fmt(max(values))}), n={len(values)}")
        else:
            cells.append("no successful run")
    ratio = "-"
    if medians.get(a) and b in medians:
        ratio = f"{medians[b] / medians[a]:.2f}x"
        if higher is not None:
            ratio += " (higher is better)" if higher else " (lower is better)"
    print(f"| {label} | {cells[0]} | {cells[1]} | {ratio} |")
grants = sum(r.get("safety", {}).get("grants_checked", 0) for r in runs)
bad = sum(r.get("safety", {}).get("violations", 0) for r in runs)
print()
print(f"Overlap check: {'clean' if bad == 0 else f'{bad:,} VIOLATIONS'}, {grants:,} grants checked in {len(runs)} runs.")
failed = [r for r in runs if r.get("status") != 0]
for r in failed:
    why = r.get("failure") or " / ".join(r.get("safety", {}).get("first_violations", [])[:1])
    print(f"- {r['system']} exit {r['status']}: {why}")
sys.exit(1 if failed else 0)
PY
