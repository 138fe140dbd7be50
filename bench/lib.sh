# shellcheck shell=bash
# shellcheck disable=SC2034 # BIN, LOAD, PORT and TARGET are for the scripts that source this
# Shared by bench/compare.sh, bench/scaling.sh and bench/checker.sh (sourced, not run):
# release build, free ports, a fresh server per run on 127.0.0.1, stopped on exit.
#
# The caller sets ROOT (the package) and WORK (a scratch directory) first.

HOST=127.0.0.1
SERVER_PID=""

log() { printf '%s\n' "$*" >&2; }

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

need_python() {
    command -v python3 >/dev/null || { log "python3 is needed for free ports and statistics"; exit 1; }
}

# Installs redis-server with apt-get if it is missing.
need_redis() {
    command -v redis-server >/dev/null && return 0
    log "installing redis-server with apt-get"
    if ! apt-get install -y -q redis-server >"$WORK/apt.log" 2>&1; then
        apt-get update -q >>"$WORK/apt.log" 2>&1
        apt-get install -y -q redis-server >>"$WORK/apt.log" 2>&1
    fi
}

# Sets BIN (the release binaries) and LOAD (arbiter-load).
build_release() {
    log "building release binaries"
    (cd "$ROOT" && swift build -c release >"$WORK/build.log" 2>&1) || { cat "$WORK/build.log" >&2; exit 1; }
    BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
    LOAD="$BIN/arbiter-load"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits (bounded: 10 s) until something accepts on the port.
wait_listening() {
    local port=$1
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# start_arbiter CONFIG [arbiter options...]: sets SERVER_PID, PORT and TARGET.
start_arbiter() {
    local config=$1
    shift
    PORT=$(free_port)
    # --rate 0: the default per-session limit (1000 commands/s) would cap a closed-loop
    # presser; the benchmarks are about capacity, and Redis has no such limit.
    "$BIN/arbiter" --host "$HOST" --port "$PORT" --config "$config" --log-level warn --rate 0 "$@" 2>>"$WORK/arbiter.log" &
    SERVER_PID=$!
    wait_listening "$PORT" || { log "arbiter did not start; see $WORK/arbiter.log"; exit 1; }
    TARGET=(--host "$HOST" --port "$PORT")
}

# start_redis: sets SERVER_PID, PORT and TARGET.
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

# record ROW SYSTEM STATUS OUTPUT COMMAND: appends one JSON line to $WORK/results.jsonl,
# the run's report with the row, system, exit status and command added.
record() {
    python3 - "$@" >>"$WORK/results.jsonl" <<'PY'
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

# measure ROW SYSTEM ARGS...: with a server started (SERVER_PID, TARGET), runs one
# arbiter-load command against it, stops the server and records the run.
measure() {
    local row=$1 system=$2
    shift 2
    local args=("$@" "${TARGET[@]}" --server-pid "$SERVER_PID" --json)
    log "  $system: arbiter-load ${args[*]}"
    local out status=0
    out=$("$LOAD" "${args[@]}") || status=$?
    stop_server
    record "$row" "$system" "$status" "$out" "arbiter-load $*"
}

machine_line() {
    log "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
    # Other work on the machine skews every figure; say how busy it was.
    log "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}
