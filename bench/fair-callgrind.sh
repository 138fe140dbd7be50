#!/usr/bin/env bash
# What one queue hand-off costs the server, against one lock cycle of today's contend:
# user-space instructions counted by valgrind's callgrind (counts, not time, so a busy
# machine does not skew them). As bench/callgrind.sh: two runs per workload, N and 2N
# cycles, 10 connections, no observer; the difference over the N extra cycles is the
# cost of one cycle, start-up and connection set-up cancelled out.
#   contend: DOWN (granted, or denied and retried) + UP on 100 tap buttons, own groups.
#   queue:   DOWN (QUEUED) + the hand-off GRANTED to the head + UP on one queue group.
# Usage: bench/fair-callgrind.sh [N]     (default 5000 cycles)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-5000}"
# shellcheck source=bench/callgrind-lib.sh
. bench/callgrind-lib.sh
callgrind_setup
"$BIN/arbiter-load" config --buttons 100 > "$OUT/contend.json"
"$BIN/arbiter-load" config --buttons 1 --policy queue > "$OUT/queue.json"
for workload in contend queue; do
  A=$(callgrind_total "$workload" "$OUT/$workload.json" "$N")
  B=$(callgrind_total "$workload" "$OUT/$workload.json" $((2 * N)))
  echo "callgrind: $workload: $(( (B - A) / N )) user-space instructions per cycle ($A for $N cycles, $B for $((2 * N)))"
done
rm -rf "$OUT"
