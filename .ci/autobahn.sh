#!/usr/bin/env bash
# Autobahn|Testsuite (sections 1-7, 9, 10) against the real binary's WebSocket code.
# The suite needs an echo peer, so the server runs with --ws-echo and the suite uses
# /ws?echo=1: the same handshake, frame decoder, assembler and close logic as /ws.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-.build/debug/arbiter}"
LOG=$(mktemp)
"$BIN" --port 0 --ws-echo 2>"$LOG" &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
PORT=""
for _ in $(seq 1 100); do
  PORT=$(sed -n 's/.*msg=listening.* port=\([0-9]*\).*/\1/p' "$LOG" | head -1)
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || { echo "autobahn: the server did not start"; exit 1; }
AB_PATH="/ws?echo=1" AB_OUT="${AB_OUT:-artifacts/autobahn}" AB_TIMEOUT="${AB_TIMEOUT:-600}" \
  bash Tests/ws-conformance/run-autobahn.sh 127.0.0.1 "$PORT"
