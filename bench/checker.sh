#!/usr/bin/env bash
# A long run of the safety checker against the arbiter, to back the claim "the checker
# has run clean over millions of operations". Three workloads, each against a fresh
# release server on 127.0.0.1, all with watching members:
#
#   1. contend: 100 pressers + 1 observer, CONTEND_S seconds (default 60): the event
#      checker over every PRESSED/FIRED/RELEASED, and the overlap check over every grant
#   2. holds: hold and talk buttons pressed and let go at random, HOLDS_S (default 30)
#   3. fanout: 1 presser, 100 members, half of them WebSocket peers, FANOUT_S (default 30)
#
#   bench/checker.sh
#   CONTEND_S=5 HOLDS_S=3 FANOUT_S=3 bench/checker.sh      # a quick look
#
# Prints each run's counts and the total operations checked (events checked by the
# event checker + grants checked by the overlap check); exits 1 if any run was not
# clean or failed, with the first violations.
#
# Needs: swift (release build), python3.
set -euo pipefail

CONTEND_S=${CONTEND_S:-60}
HOLDS_S=${HOLDS_S:-30}
FANOUT_S=${FANOUT_S:-30}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-checker.XXXXXX")
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

need_python
build_release
# Tap buttons for contend and fanout, hold and talk buttons for holds, in one panel.
"$LOAD" config --buttons 100 --holds 4 --talks 4 >"$WORK/load.json"

# run <name> <arbiter-load arguments...>: one run against a fresh server, one JSON line.
run() {
    local name=$1
    shift
    start_arbiter "$WORK/load.json"
    measure "$name" arbiter "$@"
}

machine_line
run contend contend --connections 100 --observers 1 --duration "$CONTEND_S"
run holds holds --duration "$HOLDS_S"
run fanout fanout --members 100 --ws-fraction 0.5 --duration "$FANOUT_S"
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
log "raw results: $WORK/results.jsonl"

python3 - "$WORK/results.jsonl" <<'PY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
total = 0
bad = 0
print("| run | seconds | events checked | compared across members | grants checked for overlap | violations | exit |")
print("|---|---|---|---|---|---|---|")
for r in runs:
    s = r.get("safety", {})
    events, grants = s.get("events_checked", 0), s.get("grants_checked", 0)
    total += events + grants
    if r.get("status") != 0:
        bad += 1
    print(f"| {r['row']} | {r.get('measured_s', 0):.0f} | {events:,} | {s.get('events_compared', 0):,} | {grants:,} | "
          f"{s.get('violations', '-')} | {r.get('status')} |")
print()
verdict = "clean" if bad == 0 else f"NOT CLEAN ({bad} run(s) failed or found violations)"
print(f"checker: {verdict}: {total:,} operations checked ({len(runs)} runs)")
for r in runs:
    if r.get("failure"):
        print(f"- {r['row']} failed: {r['failure']}")
    for v in r.get("safety", {}).get("first_violations", []):
        print(f"- {r['row']}: {v}")
sys.exit(1 if bad else 0)
PY
