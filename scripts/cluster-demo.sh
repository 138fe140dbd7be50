#!/usr/bin/env bash
# A cluster on one laptop (README, "Running on several machines"): 3 etcd members and 3
# arbiter nodes on loopback, serving the panel "demo" on ports 7071, 7072 and 7073
# (DEMO_PORTS=a,b,c for others). Open http://127.0.0.1:7071/panel/demo, kill that node
# (the script prints its pid), and watch the page move to another node; the script
# restarts a killed node after 5 s. Ctrl-C stops everything and removes the data.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
exec bash "$ROOT/bench/cluster.sh" --demo
