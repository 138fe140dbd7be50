#!/usr/bin/env bash
# A press's latency on one panel while another panel's journal compactions run, and
# without compactions: is compaction really off every panel's command path?
#
# One server with a journal and two panels. Panel load1 is pressed hard by one
# arbiter-load (so its records fill the journal), and arbiter-load measures presses on
# load2 at the same time. "with" runs the server with --journal-max-bytes 65536, so it
# compacts the journal again and again (each time it has doubled past what a restart
# needs, every few hundred milliseconds here); "without" runs it with
# --journal-max-bytes 0 (never at run time). Runs alternate with/without PAIRS times;
# the table shows medians of the measured panel's reply latency and the number of
# compactions each run did.
#
#   bench/compaction-p99.sh                       # PAIRS=3 DURATION=5
#   PAIRS=5 DURATION=10 bench/compaction-p99.sh
#   BIN=/path/to/release/bin bench/compaction-p99.sh   # another build, for before/after
#
# Needs: swift (release build), python3.
set -euo pipefail

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-compaction.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

need_python
if [ -n "${BIN:-}" ]; then LOAD="$BIN/arbiter-load"; else build_release; fi
"$LOAD" config --panels 2 --buttons 100 >"$WORK/load.json"
BACKGROUND_PID=""
stop_background() {
    if [ -n "$BACKGROUND_PID" ] && kill -0 "$BACKGROUND_PID" 2>/dev/null; then kill "$BACKGROUND_PID" 2>/dev/null || true; fi
    [ -n "$BACKGROUND_PID" ] && wait "$BACKGROUND_PID" 2>/dev/null || true
    BACKGROUND_PID=""
}
trap 'stop_background; cleanup' EXIT

# run ROW MAX_BYTES: one measured run with a fresh journal.
run() {
    local row=$1 max=$2
    rm -f "$WORK/journal.jsonl"
    : >"$WORK/arbiter.log"
    start_arbiter "$WORK/load.json" --journal "$WORK/journal.jsonl" --journal-max-bytes "$max" --log-level info
    # Panel load1: the writer whose records make the journal compact. It runs longer
    # than the measurement, so the measured seconds always have it.
    "$LOAD" contend --panel load1 --connections "$CONNECTIONS" --observers 0 --no-check \
        --duration $((DURATION + 3)) "${TARGET[@]}" >/dev/null 2>>"$WORK/background.log" &
    BACKGROUND_PID=$!
    local args=(contend --panel load2 --connections "$CONNECTIONS" --observers 0 --duration "$DURATION" --warmup 1)
    log "  $row: arbiter-load ${args[*]}"
    local out status=0
    out=$("$LOAD" "${args[@]}" "${TARGET[@]}" --json) || status=$?
    stop_background
    stop_server
    local compactions
    compactions=$(grep -c 'journal compacted' "$WORK/arbiter.log" || true)
    record "$row" arbiter "$status" "$out" "compactions=$compactions max=$max ${args[*]}"
}

machine_line
for pair in $(seq 1 "$PAIRS"); do
    log "pair $pair/$PAIRS"
    run with 65536
    run without 0
done

python3 - "$WORK/results.jsonl" <<'PY'
import json, re, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
print("| measured panel load2 | presses/s | p50 µs | p99 µs | p99.9 µs | max µs | compactions per run |")
print("|---|---|---|---|---|---|---|")
for row in ("without", "with"):
    rs = [r for r in runs if r["row"] == row and r.get("status") == 0 and "reply_latency_us" in r]
    if not rs:
        print(f"| {row} | failed: {[r.get('failure', r.get('status')) for r in runs if r['row'] == row]} |")
        continue
    def med(f):
        return statistics.median(f(r) for r in rs)
    lat = lambda k: med(lambda r: r["reply_latency_us"][k])
    ops = med(lambda r: float(r.get("ops_per_s", 0)))
    comp = [int(re.search(r"compactions=(\d+)", r["command"]).group(1)) for r in rs]
    print(f"| {row} compactions | {ops:,.0f} | {lat('p50')} | {lat('p99')} | {lat('p999')} | {lat('max')} | {statistics.median(comp):.0f} |")
print(f"\n{len(runs)} runs, medians; the compactions column counts 'journal compacted' log lines.")
PY
log "raw results: $WORK/results.jsonl"
