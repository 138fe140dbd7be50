#!/usr/bin/env bash
# ButtonArbiter vs Redis, side by side, on this machine and on 127.0.0.1 only.
#
# Starts a fresh server for every run (so idle memory is measured from a clean
# process and no run inherits another's state), alternates the two systems A B A B
# (PAIRS pairs per row, default 3) so that drift of a shared VM hits both alike, and
# prints a Markdown table of medians, min-max spread and the ratio arbiter/Redis.
#
#   bench/compare.sh                 # defaults: PAIRS=3 DURATION=5 WARMUP=1
#   PAIRS=5 DURATION=10 bench/compare.sh
#
# Needs: swift (release build of arbiter and arbiter-load), python3 (free ports and
# statistics), redis-server (installed with apt-get if missing).
set -euo pipefail

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-bench.XXXXXX")
SERVER_PID=""

log() { printf '%s\n' "$*" >&2; }

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# 10,000 idle connections need that many descriptors on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 10100 ]; then
    log "ulimit -n is $(ulimit -n); the 10,000-connection row needs at least 10100"
    exit 1
fi

command -v python3 >/dev/null || { log "python3 is needed for free ports and statistics"; exit 1; }
if ! command -v redis-server >/dev/null; then
    log "installing redis-server with apt-get"
    if ! apt-get install -y -q redis-server >"$WORK/apt.log" 2>&1; then
        apt-get update -q >>"$WORK/apt.log" 2>&1
        apt-get install -y -q redis-server >>"$WORK/apt.log" 2>&1
    fi
fi

log "building release binaries"
(cd "$ROOT" && swift build -c release >"$WORK/build.log" 2>&1) || { cat "$WORK/build.log" >&2; exit 1; }
BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
LOAD="$BIN/arbiter-load"
"$LOAD" config --buttons 100 >"$WORK/load.json"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits (bounded) until something accepts on the port.
wait_listening() {
    local port=$1
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

start_arbiter() {
    PORT=$(free_port)
    # --rate 0: the default per-session limit (1000 commands/s) would cap a closed-loop
    # presser; the comparison is about capacity, and Redis has no such limit.
    "$BIN/arbiter" --host "$HOST" --port "$PORT" --config "$WORK/load.json" --log-level warn --rate 0 2>>"$WORK/arbiter.log" &
    SERVER_PID=$!
    wait_listening "$PORT" || { log "arbiter did not start; see $WORK/arbiter.log"; exit 1; }
    TARGET=(--host "$HOST" --port "$PORT")
}

start_redis() {
    PORT=$(free_port)
    # No persistence, its own instance, loopback only.
    redis-server --bind "$HOST" --port "$PORT" --save '' --appendonly no --maxclients 20000 \
        --daemonize no --logfile "$WORK/redis.log" --dir "$WORK" &
    SERVER_PID=$!
    wait_listening "$PORT" || { log "redis-server did not start; see $WORK/redis.log"; exit 1; }
    TARGET=(--redis "$HOST:$PORT")
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

# run <row> <system> <arbiter-load arguments...>: one measured run, one JSON line.
run() {
    local row=$1 system=$2
    shift 2
    if [ "$system" = arbiter ]; then start_arbiter; else start_redis; fi
    local args=("$@" "${TARGET[@]}" --server-pid "$SERVER_PID" --json)
    log "  $system: arbiter-load ${args[*]}"
    local out status=0
    out=$("$LOAD" "${args[@]}") || status=$?
    stop_server
    python3 - "$row" "$system" "$status" "$out" "arbiter-load $*" >>"$WORK/results.jsonl" <<'PY'
import json, sys
row, system, status, out, command = sys.argv[1:6]
try:
    result = json.loads(out)
except ValueError:
    result = {"failure": out.strip()[:500]}
result.update(row=row, system=system, status=int(status), command=command)
print(json.dumps(result))
PY
}

ROWS=(
    "contend10|contend --connections 10 --duration $DURATION --warmup $WARMUP"
    "contend100|contend --connections 100 --duration $DURATION --warmup $WARMUP"
    "contend1000|contend --connections 1000 --duration $DURATION --warmup $WARMUP --connect-batch 500"
    "fanout100|fanout --members 100 --duration $DURATION --warmup $WARMUP"
    "fanout1000|fanout --members 1000 --duration $DURATION --warmup $WARMUP --connect-batch 500"
    "idle10000|idle --connections 10000 --connect-batch 1000"
)

log "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
# Other work on the machine skews every figure; say how busy it was.
log "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for entry in "${ROWS[@]}"; do
    row=${entry%%|*}
    args=${entry#*|}
    log "row $row ($PAIRS pairs), load average $(cut -d' ' -f1 /proc/loadavg)"
    for _ in $(seq 1 "$PAIRS"); do
        # shellcheck disable=SC2086 # the arguments are meant to split
        run "$row" arbiter $args
        # shellcheck disable=SC2086
        run "$row" redis $args
    done
done

log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$ROOT/bench/summarize.py" "$WORK/results.jsonl"
log "raw results: $WORK/results.jsonl"
