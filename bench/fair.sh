#!/usr/bin/env bash
# Fair groups: queue hand-offs per second against today's contend lock cycles, at 10
# and 100 connections. Buzzer rounds of 1,000 players have their own script,
# bench/hall.sh (on one node and through a relaying node). On this machine and on
# 127.0.0.1 only.
#
#   bench/fair.sh                      # defaults: PAIRS=3 DURATION=5 WARMUP=1
#   PAIRS=5 DURATION=10 bench/fair.sh
#
# Every run gets a fresh server; the contend and queue runs alternate, so drift of a
# shared machine hits both alike. Prints a Markdown table of medians (min-max).
set -euo pipefail

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-fair.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need_python
build_release
machine_line
"$LOAD" config --buttons 100 >"$WORK/contend.json"
"$LOAD" config --buttons 1 --policy queue >"$WORK/queue.json"
"$LOAD" config --buttons 100 --policy queue >"$WORK/queue100.json"

for c in 10 100; do
    for _ in $(seq 1 "$PAIRS"); do
        # Today's contend: 100 tap buttons, each its own group (the README's run).
        start_arbiter "$WORK/contend.json"
        measure "c$c" contend100 contend --connections "$c" --duration "$DURATION" --warmup "$WARMUP"
        # Today's contend on one group: every grant is serial, as in a queue.
        start_arbiter "$WORK/contend.json"
        measure "c$c" contend1 contend --connections "$c" --buttons 1 --duration "$DURATION" --warmup "$WARMUP"
        start_arbiter "$WORK/queue.json"
        measure "c$c" queue queue --connections "$c" --duration "$DURATION" --warmup "$WARMUP"
        # contend100's shape with every group a queue: what queueing costs a panel whose
        # groups are mostly free (grants and hand-offs together, against lock cycles).
        start_arbiter "$WORK/queue100.json"
        measure "c$c" queue100 queue --connections "$c" --buttons 100 --duration "$DURATION" --warmup "$WARMUP"
    done
done

python3 - "$WORK/results.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def cell(values, fmt):
    if not values: return "-"
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"
k = lambda v: f"{v:,.0f}"
ms = lambda v: f"{v / 1000:.2f} ms"
print("| row | system | per second (median, min-max) | clean | p99 press->event |")
print("|---|---|---|---|---|")
for row in ["c10", "c100"]:
    for system in ["contend100", "contend1", "queue", "queue100"]:
        runs = [r for r in rows if r["row"] == row and r["system"] == system]
        if not runs: continue
        extra = ""
        if system == "queue":
            rate = [r["hand_offs"] / r["measured_s"] for r in runs if r.get("measured_s")]
            what = "hand-offs/s"
        elif system == "queue100":
            rate = [r["cycles_per_s"] for r in runs if "cycles_per_s" in r]
            offs = [r["hand_offs"] / r["measured_s"] for r in runs if r.get("measured_s")]
            what = "lock cycles/s"
            extra = f", of which hand-offs/s {cell(offs, k)}"
        else:
            rate = [r["cycles_per_s"] for r in runs if "cycles_per_s" in r]
            what = "lock cycles/s"
        clean = all(r.get("status") == 0 and r.get("safety", {}).get("clean", False) for r in runs)
        p99 = [r["event_latency_us"]["p99"] for r in runs if isinstance(r.get("event_latency_us"), dict) and "p99" in r["event_latency_us"]]
        print(f"| {row} | {system} | {what} {cell(rate, k)}{extra} | {'yes' if clean else 'NO'} | {cell(p99, lambda v: f'{v / 1000:.2f} ms')} |")
PY
log "raw results: $WORK/results.jsonl"
