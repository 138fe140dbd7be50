#!/usr/bin/env bash
# The ceiling this machine and this generator put on any server's lock cycles/s.
#
# Runs the contend rows of bench/compare.sh against three servers, interleaved
# (floor, arbiter, Redis, floor, arbiter, Redis, ...), a fresh server per run:
#   floor    bench/floor/floor-server.c: a real lock table and nothing else, one epoll
#            thread making the same system calls as the arbiter and Redis (one read per
#            readable socket, one write per socket per round) with next to no user-space
#            work. No real server can be cheaper per request over the same sockets;
#   arbiter  the release build, as in compare.sh;
#   redis    redis-server, SET NX PX + DEL, as in compare.sh.
# It prints medians, min-max and each system's ratio to Redis. floor / Redis is the most
# any server could show against Redis here: when the generator's core is saturated by
# loopback TCP, a server doing no work at all gets no further.
#
#   bench/floor.sh                    # PAIRS=5 DURATION=5 WARMUP=1, rows contend10 contend100
#   ROWS="10 100 1000" bench/floor.sh
#
# Needs: swift, cc, python3, redis-server (installed with apt-get if missing).
set -euo pipefail

PAIRS=${PAIRS:-5}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
CONNECTION_ROWS=${ROWS:-10 100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-floor.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need_python
need_redis
command -v cc >/dev/null || { log "cc is needed to build bench/floor/floor-server.c"; exit 1; }
cc -O2 -Wall -Wextra -Werror -o "$WORK/floor-server" "$ROOT/bench/floor/floor-server.c"
build_release
"$LOAD" config --buttons 100 >"$WORK/load.json"

start_floor() {
    PORT=$(free_port)
    "$WORK/floor-server" "$PORT" 100 2>>"$WORK/floor.log" &
    SERVER_PID=$!
    wait_listening "$PORT" || { log "floor-server did not start; see $WORK/floor.log"; exit 1; }
    TARGET=(--host "$HOST" --port "$PORT")
}

run() {
    local row=$1 system=$2
    shift 2
    case $system in
        floor) start_floor ;;
        arbiter) start_arbiter "$WORK/load.json" ;;
        redis) start_redis ;;
    esac
    measure "$row" "$system" "$@"
}

machine_line
for connections in $CONNECTION_ROWS; do
    row="contend$connections"
    row_args="contend --connections $connections --observers 0 --duration $DURATION --warmup $WARMUP"
    [ "$connections" -ge 1000 ] && row_args="$row_args --connect-batch 500"
    log "row $row ($PAIRS rounds), load average $(cut -d' ' -f1 /proc/loadavg)"
    for _ in $(seq 1 "$PAIRS"); do
        for system in floor arbiter redis; do
            # shellcheck disable=SC2086 # the arguments are meant to split
            run "$row" "$system" $row_args
        done
    done
done

log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK/results.jsonl" <<'PY'
import collections, json, statistics, sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[(r["row"], r["system"])].append(r)

def cpu(r, key):
    return r[key] / r["measured_s"] * 100 if r.get("measured_s") else 0

print("| row | system | lock cycles/s, median (min - max) | / Redis | per round / Redis, median (min - max) | server CPU | generator CPU | checked |")
print("|---|---|---|---|---|---|---|---|")
failed = False
for row in sorted({k[0] for k in runs}, key=lambda s: int(s[len("contend"):])):
    good = {s: [r for r in runs[(row, s)] if r["status"] == 0] for s in ("floor", "arbiter", "redis")}
    redis = statistics.median(r["cycles_per_s"] for r in good["redis"]) if good["redis"] else None
    for system in ("floor", "arbiter", "redis"):
        rs = good[system]
        if len(rs) < len(runs[(row, system)]):
            failed = True
        if not rs:
            print(f"| {row} | {system} | no successful run | - | - | - | - | - |")
            continue
        c = [r["cycles_per_s"] for r in rs]
        med = statistics.median(c)
        ratio = f"{med / redis:.2f}x" if redis else "-"
        # Each round runs the three back to back: a ratio within a round sees the same
        # minute of a VM whose speed drifts.
        rounds = [a["cycles_per_s"] / b["cycles_per_s"] for a, b in zip(runs[(row, system)], runs[(row, "redis")])
                  if a["status"] == 0 and b["status"] == 0 and b["cycles_per_s"] > 0]
        per_round = f"{statistics.median(rounds):.2f}x ({min(rounds):.2f} - {max(rounds):.2f})" if rounds else "-"
        clean = all(r["safety"]["clean"] for r in rs)
        failed |= not clean
        print(f"| {row} | {system} | {med:,.0f} ({min(c):,.0f} - {max(c):,.0f}), n={len(c)} | {ratio} | {per_round} "
              f"| {statistics.median(cpu(r, 'server_cpu_s') for r in rs):.0f}% "
              f"| {statistics.median(cpu(r, 'generator_cpu_s') for r in rs):.0f}% "
              f"| {'clean' if clean else 'VIOLATIONS'} |")
sys.exit(1 if failed else 0)
PY
log "raw results: $WORK/results.jsonl"
