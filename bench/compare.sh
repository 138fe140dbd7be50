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
#   ONLY=contend10,contend100 bench/compare.sh   # just those rows
#   ARBITER_ARGS="--idle-spin 0" bench/compare.sh  # flags for every arbiter run
#
# Needs: swift (release build of arbiter and arbiter-load), python3 (free ports and
# statistics), redis-server (installed with apt-get if missing).
set -euo pipefail

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-bench.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

# 10,000 idle connections need that many descriptors on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 10100 ]; then
    log "ulimit -n is $(ulimit -n); the 10,000-connection row needs at least 10100"
    exit 1
fi

need_python
need_redis
build_release
"$LOAD" config --buttons 100 >"$WORK/load.json"

# run <row> <system> <arbiter-load arguments...>: one measured run, one JSON line.
run() {
    local row=$1 system=$2
    shift 2
    # shellcheck disable=SC2086 # ARBITER_ARGS (e.g. "--idle-spin 0", for A/B runs) splits
    if [ "$system" = arbiter ]; then start_arbiter "$WORK/load.json" ${ARBITER_ARGS:-}; else start_redis; fi
    measure "$row" "$system" "$@"
}

# The lock-cycle rows run with --observers 0 for both systems: Redis publishes nothing
# when a lock is taken, so no arbiter member receives events either (apples to apples).
# They are still checked: contend's overlap check needs no observer (every grant read
# is checked against the other connections' release writes; clients/load/README.md).
# The fan-out rows measure event delivery and keep their members.
ROWS=(
    "contend10|contend --connections 10 --observers 0 --duration $DURATION --warmup $WARMUP"
    "contend100|contend --connections 100 --observers 0 --duration $DURATION --warmup $WARMUP"
    "contend1000|contend --connections 1000 --observers 0 --duration $DURATION --warmup $WARMUP --connect-batch 500"
    "fanout100|fanout --members 100 --duration $DURATION --warmup $WARMUP"
    "fanout1000|fanout --members 1000 --duration $DURATION --warmup $WARMUP --connect-batch 500"
    "idle10000|idle --connections 10000 --connect-batch 1000"
)

machine_line
for entry in "${ROWS[@]}"; do
    row=${entry%%|*}
    row_args=${entry#*|}
    # ONLY=contend10,contend100 runs just those rows (for quick before/after checks).
    if [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$row,"* ]]; then continue; fi
    log "row $row ($PAIRS pairs), load average $(cut -d' ' -f1 /proc/loadavg)"
    for _ in $(seq 1 "$PAIRS"); do
        # shellcheck disable=SC2086 # the arguments are meant to split
        run "$row" arbiter $row_args
        # shellcheck disable=SC2086
        run "$row" redis $row_args
    done
done

log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$ROOT/bench/summarize.py" "$WORK/results.jsonl"
log "raw results: $WORK/results.jsonl"
