#!/usr/bin/env bash
# Autobahn|Testsuite (sections 1-7, 9, 10) against the real binary's WebSocket code.
# The suite needs an echo peer, so the server runs with --ws-echo and the suite uses
# /ws?echo=1: the same handshake, frame decoder, assembler and close logic as /ws.
#
# The suite kills a connection that has not closed 0.5 s after a case started and then
# calls the close "UNCLEAN". A case takes 2-10 ms here, so that only happens when the host
# stops scheduling the suite or the server for half a second (seen once in CI on 6.22.8).
# Cases that failed with exactly that signature - right messages, unclean close - run once
# more against the same server and are reported by name; any other failure, or the same
# one twice, fails the check.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-.build/debug/arbiter}"
OUT="${AB_OUT:-artifacts/autobahn}"
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
run() { AB_PATH="/ws?echo=1" AB_OUT="$1" AB_TIMEOUT="${AB_TIMEOUT:-600}" \
  bash Tests/ws-conformance/run-autobahn.sh 127.0.0.1 "$PORT" ${2:+"$2"}; }

if run "$OUT"; then exit 0; fi
EXPECT=$(sed -n 's/^Ok, will run \([0-9]*\) test cases.*/\1/p' "$OUT/wstest.log" | head -1)
list() { python3 Tests/ws-conformance/summarize.py "$OUT/index.json" --expect "${EXPECT:-301}" --list "$@"; }
TIMED_OUT=$(list --unclean-only)
ALL_FAILED=$(list)
if [ -z "$TIMED_OUT" ] || [ "$TIMED_OUT" != "$ALL_FAILED" ]; then
  echo "autobahn: failed (not only unclean closes; see above)"
  exit 1
fi
echo "autobahn: re-running once, as they failed only by an unclean close: $TIMED_OUT"
if run "$OUT/rerun" "$TIMED_OUT"; then
  echo "autobahn: ${EXPECT:-301} passed, 0 failed ($TIMED_OUT closed uncleanly on the first run, cleanly on the re-run)"
else
  echo "autobahn: failed twice: see $OUT/rerun"
  exit 1
fi
