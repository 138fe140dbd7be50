#!/usr/bin/env bash
# A full hall: buzzer rounds of 1,000 players (announce 10) on one node and through a
# relaying node of a 3-node cluster, 3 runs each, alternating; press->RANKED and
# press->BUZZED percentiles with the load averages. See bench/hall.py for the knobs
# (RUNS, PLAYERS, ANNOUNCE, DURATION, WARMUP, PARTS, HALL_JSONL); docs/BENCHMARKS.md
# ("Fair groups") for the figures.
#
#   bash bench/hall.sh                         release build, then the runs
#   BIN=.build/release bash bench/hall.sh      reuse built binaries
#
# Needs etcd and etcdctl for the cluster runs (apt-get install etcd-server etcd-client).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [[ ",${PARTS:-single,relay}," == *,relay,* ]] && ! command -v etcd >/dev/null; then
  echo "hall.sh: etcd not found (apt-get install etcd-server etcd-client), or PARTS=single" >&2
  exit 2
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ -z "${BIN:-}" ]; then
  echo "building release binaries" >&2
  (cd "$ROOT" && swift build -c release >/tmp/hall-bench-build.$$.log 2>&1) || { cat /tmp/hall-bench-build.$$.log >&2; exit 1; }
  rm -f /tmp/hall-bench-build.$$.log
  BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
fi
exec python3 "$ROOT/bench/hall.py" "$BIN" "$@"
