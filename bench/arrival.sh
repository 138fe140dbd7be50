#!/usr/bin/env bash
# Buzzer rounds of a full hall, ranked by arrival: how many pairs of players each round
# ranked against the order they sent their DOWNs in, with two reactors. Each player
# stamps its DOWN just before the write that carries it (arbiter-load's send order);
# pairs sent at least 100 us apart count. On this machine and on 127.0.0.1 only.
#
#   bench/arrival.sh                          # 300 players, 2 reactors, the three modes
#   MODES="stamp" WINDOWS="2000 5000" bench/arrival.sh
#   LOAD=/path/to/arbiter-load ANNOUNCE=10 bench/arrival.sh
#
# Modes: read (ranked by read time, as before: --no-arrival-stamps, decision_window_us
# 0), stamp0 (kernel stamps, no window), stamp (kernel stamps, each of WINDOWS).
# ANNOUNCE (default 100000: every place told to every member, which is what lets
# arbiter-load's host see each round end) below PLAYERS needs an arbiter-load with
# --announce. Every run gets a fresh server. Prints a Markdown table; the raw reports
# (JSON) and each server's /metrics lines are kept in the scratch directory.
set -euo pipefail

PLAYERS=${PLAYERS:-300}
REACTORS=${REACTORS:-2}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-1}
MODES=${MODES:-read stamp0 stamp}
WINDOWS=${WINDOWS:-2000}
ANNOUNCE=${ANNOUNCE:-100000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-arrival.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need_python
GIVEN_LOAD=${LOAD:-}
build_release
LOAD=${GIVEN_LOAD:-$LOAD}
machine_line

# config WINDOW: the buzzer panel with decision_window_us WINDOW and announce ANNOUNCE.
config() {
    "$LOAD" config --buttons 4 --groups 1 --policy buzzer | python3 -c '
import json, sys
c = json.load(sys.stdin)
for p in c["panels"]:
    for g in p["groups"].values():
        g["decision_window_us"] = int(sys.argv[1])
        g["announce"] = int(sys.argv[2])
json.dump(c, sys.stdout)' "$1" "$ANNOUNCE" >"$WORK/buzz-$1.json"
    echo "$WORK/buzz-$1.json"
}

announce_flag=()
if [ "$ANNOUNCE" -lt "$PLAYERS" ]; then announce_flag=(--announce "$ANNOUNCE"); fi

# run SYSTEM WINDOW [arbiter options...]
run() {
    local system=$1 window=$2
    shift 2
    start_arbiter "$(config "$window")" --reactors "$REACTORS" "$@"
    local args=(buzz --connections "$PLAYERS" --duration "$DURATION" --warmup "$WARMUP" "${announce_flag[@]}")
    log "  $system: arbiter-load ${args[*]}"
    local out status=0
    out=$("$LOAD" "${args[@]}" "${TARGET[@]}" --json) || status=$?
    python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
        "http://$HOST:$PORT/metrics" 2>/dev/null | grep -E '^arbiter_(arrival_reads|arrival_behind|buzzer_)' >"$WORK/metrics-$system-$window.txt" || true
    stop_server
    record "$system" "$window" "$status" "$out" "arbiter-load ${args[*]}"
}

for _ in $(seq 1 "$RUNS"); do
    for mode in $MODES; do
        case $mode in
            read) run read 0 --no-arrival-stamps ;;
            stamp0) run stamp0 0 ;;
            stamp) for w in $WINDOWS; do run stamp "$w"; done ;;
        esac
    done
done

python3 - "$WORK/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| ranked by | window | rounds | pairs >= 100 us apart | inverted | winner not first | inverted, any gap | largest inverted gap | inverted by gap <10us / <100us / <1ms / >=1ms | reply p50 / p99 |")
print("|---|---|---|---|---|---|---|---|---|---|")
names = {"read": "read time", "stamp0": "kernel stamp", "stamp": "kernel stamp"}
for r in rows:
    o = r.get("arrival_order", {})
    lat = r.get("reply_latency_us", {})
    ms = lambda v: f"{v / 1000:.1f} ms"
    lat_cell = f"{ms(lat['p50'])} / {ms(lat['p99'])}" if isinstance(lat, dict) and "p50" in lat else "-"
    gaps = " / ".join(str(v) for v in o.get("inverted_by_gap", []))
    ok = "" if r.get("status") == 0 and r.get("errors", 1) == 0 else " (errors)"
    print(f"| {names.get(r['row'], r['row'])}{ok} | {int(r['system']) // 1000 if int(r['system']) % 1000 == 0 else int(r['system']) / 1000} ms "
          f"| {o.get('rounds', '-')} | {o.get('pairs', 0):,} | {o.get('inversions', 0):,} | {o.get('winner_inversions', 0)} | {o.get('all_inversions', 0):,} "
          f"| {o.get('largest_inverted_gap_us', 0):,} us | {gaps} | {lat_cell} |")
PY
for f in "$WORK"/metrics-*.txt; do log "$(basename "$f"): $(tr '\n' ' ' <"$f")"; done
log "raw results: $WORK/results.jsonl"
