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
command -v valgrind >/dev/null || { apt-get install -y valgrind >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y valgrind >/dev/null; }; }
swift build -c release --product arbiter >/dev/null
swift build -c release --product arbiter-load >/dev/null
BIN=$(swift build -c release --show-bin-path)
OUT=$(mktemp -d)
"$BIN/arbiter-load" config --buttons 100 > "$OUT/contend.json"
"$BIN/arbiter-load" config --buttons 1 --policy queue > "$OUT/queue.json"
# valgrind 3.19 cannot read Swift 6's DWARF 5: count a stripped copy.
cp "$BIN/arbiter" "$OUT/arbiter" && strip --strip-debug "$OUT/arbiter"
total() {   # workload config cycles -> total instructions of the server
  local workload=$1 config=$2 cycles=$3 port=$((20000 + RANDOM % 20000))
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$workload.$cycles" \
    "$OUT/arbiter" --port "$port" --config "$config" --rate 0 --log-level warn 2>"$OUT/vg.$workload.$cycles" &
  local pid=$!
  for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$BIN/arbiter-load" "$workload" --port "$port" --connections "${CONNECTIONS:-10}" --observers 0 --cycles "$cycles" >"$OUT/load.$workload.$cycles" 2>&1
  kill -TERM $pid; wait $pid || true
  grep -E "^(summary|totals):" "$OUT/cg.$workload.$cycles" | head -1 | awk '{print $2}'
}
for workload in contend queue; do
  A=$(total "$workload" "$OUT/$workload.json" "$N")
  B=$(total "$workload" "$OUT/$workload.json" $((2 * N)))
  echo "callgrind: $workload: $(( (B - A) / N )) user-space instructions per cycle ($A for $N cycles, $B for $((2 * N)))"
done
rm -rf "$OUT"
