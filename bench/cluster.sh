#!/usr/bin/env bash
# Cluster mode under load: 3 etcd members and 3 nodes on loopback, lock cycles
# through the leader's node and through a relaying node (and on one single node), fan-out
# of 3000 members over 3 nodes and on 1, and FAILOVERS (20) kills of the busy panel's
# leader, one every 10 s, under load with the checker on. See bench/cluster.py for the
# environment knobs; docs/BENCHMARKS.md for the figures.
#
#   bash bench/cluster.sh            the benchmark (release build)
#   bash bench/cluster.sh --demo     a 3-node cluster to play with (scripts/cluster-demo.sh)
#
# Needs etcd and etcdctl (apt-get install etcd-server etcd-client) and python3.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
command -v etcd >/dev/null || { echo "cluster.sh: etcd not found (apt-get install etcd-server etcd-client)" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
  echo "building release binaries" >&2
  (cd "$ROOT" && swift build -c release >/tmp/cluster-bench-build.$$.log 2>&1) || { cat /tmp/cluster-bench-build.$$.log >&2; exit 1; }
  rm -f /tmp/cluster-bench-build.$$.log
  BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
fi
exec python3 "$ROOT/bench/cluster.py" "$BIN" "$@"
