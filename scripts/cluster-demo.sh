#!/usr/bin/env bash
# A cluster on one laptop (README, "Running on several machines"): 3 etcd members and 3
# arbiter nodes on loopback, serving the panel "demo" on ports 7071, 7072 and 7073
# (DEMO_PORTS=a,b,c for others). Open http://127.0.0.1:7071/panel/demo, kill that node
# (the script prints its pid), and watch the page move to another node; the script
# restarts a killed node after 5 s. Ctrl-C stops everything and removes the data.
#
# Logs: everything goes under one directory, printed at the start and at the exit:
# the nodes' logs in arbiter-cluster.*/n<i>-<run>.log (a restarted node starts a new
# run), etcd's in etcd3.*/m<i>.log. They are removed at the exit, with etcd's data,
# unless asked to keep them:
#
#   scripts/cluster-demo.sh --keep-logs      (or KEEP_LOGS=1 scripts/cluster-demo.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

usage() { echo "usage: scripts/cluster-demo.sh [--keep-logs]   (KEEP_LOGS=1 keeps them too)"; }
keep="${KEEP_LOGS:-}"
[ "$keep" = "0" ] && keep=""
for arg in "$@"; do
  case "$arg" in
    --keep-logs) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "cluster-demo.sh: unknown argument '$arg'" >&2; usage >&2; exit 64 ;;
  esac
done

# The harness (Tests/cluster/clusterlib.py) makes its directories with mkdtemp, which
# honours TMPDIR: pointing it here puts every log under one directory known before any
# of them exists, to name now and at the exit.
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/arbiter-cluster-demo.XXXXXX")"
export TMPDIR="$LOGS"
# The harness's own switch for keeping its directories (it prints each one it kept).
if [ -n "$keep" ]; then export CLUSTER_KEEP_DIRS=1; fi

finish() {
  if [ -n "$keep" ]; then
    echo "cluster-demo: logs kept in $LOGS:" >&2
    find "$LOGS" -name '*.log' | sort | sed 's/^/  /' >&2
  else
    rm -rf "$LOGS"
    echo "cluster-demo: logs were in $LOGS, now removed (--keep-logs or KEEP_LOGS=1 keeps them)" >&2
  fi
}
trap finish EXIT
# Ctrl-C reaches the demo too, which stops the cluster; then this script exits, and
# `finish` runs once it has.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

echo "cluster-demo: logs go to $LOGS ($([ -n "$keep" ] && echo "kept at the exit" || echo "removed at the exit; --keep-logs keeps them"))" >&2
bash "$ROOT/bench/cluster.sh" --demo
