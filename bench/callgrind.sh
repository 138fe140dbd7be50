#!/usr/bin/env bash
# User-space instructions per DOWN/UP request, counted by valgrind's callgrind (counts,
# not time: repeatable on a noisy machine). Two runs of the release server under
# callgrind, identical but for the number of lock cycles the generator drives (N and
# 2N, 10 connections, no observer); the difference divided by the 2N extra requests is
# the cost of one request, with start-up, connection set-up and shutdown cancelled out.
# Usage: bench/callgrind.sh [N]     (default 20000 cycles = 40000 requests)
# STAMPED=1: a second panel with a buzzer group beside the pressed one, so every client
# socket carries the kernel's receive stamp (read with recvmsg), on one reactor as without.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-20000}"
# shellcheck source=bench/callgrind-lib.sh
. bench/callgrind-lib.sh
callgrind_setup
"$BIN/arbiter-load" config --buttons 100 > "$OUT/load.json"
if [ "${STAMPED:-0}" = 1 ]; then
  python3 - "$OUT/load.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["panels"].append({"id": "quiz", "buttons": [{"id": "q1", "group": "quiz"}], "groups": {"quiz": {"policy": "buzzer"}}})
json.dump(c, open(sys.argv[1], "w"))
PY
  ARBITER_ARGS="--reactors 1 ${ARBITER_ARGS:-}"
fi
A=$(callgrind_total contend "$OUT/load.json" "$N")
B=$(callgrind_total contend "$OUT/load.json" $((2 * N)))
echo "callgrind: arbiter: $(( (B - A) / (2 * N) )) user-space instructions per DOWN/UP request ($A for $N cycles, $B for $((2 * N)))"

# The same for redis-server, SET NX PX + DEL from the same generator, for scale.
redis_total() {
  local cycles=$1 port=$((20000 + RANDOM % 20000))
  valgrind --tool=callgrind --callgrind-out-file="$OUT/rg.$cycles" redis-server --bind 127.0.0.1 --port "$port" \
    --save '' --appendonly no --daemonize no --logfile "$OUT/redis.log" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$BIN/arbiter-load" contend --redis "127.0.0.1:$port" --connections "${CONNECTIONS:-10}" --observers 0 --cycles "$cycles" >/dev/null 2>&1
  kill -TERM $pid; wait $pid || true
  grep -E "^(summary|totals):" "$OUT/rg.$cycles" | head -1 | awk '{print $2}'
}
if command -v redis-server >/dev/null; then
  RA=$(redis_total "$N")
  RB=$(redis_total $((2 * N)))
  echo "callgrind: redis:   $(( (RB - RA) / (2 * N) )) user-space instructions per SET NX PX/DEL request"
fi
rm -rf "$OUT"
