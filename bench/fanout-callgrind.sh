#!/usr/bin/env bash
# User-space instructions per fan-out delivery, counted by valgrind's callgrind: two runs
# of `arbiter-load fanout` (one presser, MEMBERS members, 100 taps) differing only in the
# number of press cycles (N and 2N); the difference over the N extra cycles, divided by
# the deliveries a cycle makes (PRESSED and RELEASED to every member), is one delivery's
# cost with start-up and connection set-up cancelled out.
# Usage: bench/fanout-callgrind.sh [N]   (default 2000 cycles; MEMBERS=100)
# SERVER=<arbiter binary>: count that build instead of this tree's (an older commit's).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-2000}"
MEMBERS="${MEMBERS:-100}"
# shellcheck source=bench/callgrind-lib.sh
. bench/callgrind-lib.sh
callgrind_setup
if [ -n "${SERVER:-}" ]; then cp "$SERVER" "$OUT/arbiter" && strip --strip-debug "$OUT/arbiter"; fi
"$BIN/arbiter-load" config --buttons 100 > "$OUT/load.json"
export CONNECTIONS="$MEMBERS"
A=$(callgrind_total fanout "$OUT/load.json" "$N")
B=$(callgrind_total fanout "$OUT/load.json" $((2 * N)))
PER_CYCLE=$(( (B - A) / N ))
echo "callgrind: fanout to $MEMBERS members: $PER_CYCLE instructions per press cycle, $(( PER_CYCLE / (2 * MEMBERS) )) per delivery ($A for $N cycles, $B for $((2 * N)))"
