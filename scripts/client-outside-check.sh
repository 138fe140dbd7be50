#!/usr/bin/env bash
# The Swift client from outside the repository: a throwaway package that depends on this
# checkout by path builds the README's ten lines, runs them against the release server,
# and, after the server is stopped and started again on the same port and journal, its
# next DOWN is granted with a higher fence without the app reconnecting by hand. The server
# is .build/release/arbiter, the binary `swift run -c release arbiter` builds and runs.
#
#   scripts/client-outside-check.sh            # PORT=7079 by default
#   KEEP=1 scripts/client-outside-check.sh     # keep the temporary package and logs
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
port=${PORT:-7079}
work=$(mktemp -d /tmp/arbiter-client-outside.XXXXXX)
journal="$work/journal.jsonl"
server_pid=""
app_pid=""
cleanup() {
    [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

mkdir -p "$work/app/Sources/App"
cat > "$work/app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "App",
    dependencies: [.package(path: "$repo")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "ArbiterClient", package: "$(basename "$repo")")])]
)
SWIFT
# The README's ten lines, on the port of this run; then, on a line from standard input,
# one more press: by then the server has been restarted, and the client must have come
# back by itself.
cat > "$work/app/Sources/App/main.swift" <<SWIFT
import ArbiterClient

let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:$port"], name: "kiosk-1")
let panel = try await client.join("demo")
Task { for await event in panel.events { print(event) } }
let result = try await panel.down("b1")
print("first:", result)
try await panel.up("b1")

_ = readLine()
let again = try await panel.down("b1")
print("again:", again)
try await panel.up("b1")
guard case .granted(let before) = result, case .granted(let after) = again, after > before else {
    print("FAIL: the press after the restart was not granted above fence of the first")
    exit(1)
}
print("OK: fence \(before) before the restart, \(after) after it")
SWIFT
sed -i '1a import Foundation' "$work/app/Sources/App/main.swift"

echo "== building the release server and the outside package"
(cd "$repo" && swift build -c release --product arbiter 2>&1 | tail -1)
(cd "$work/app" && swift build 2>&1 | grep -E "warning:|error:|Compiling|Build" | tail -5)

start_server() {
    "$repo/.build/release/arbiter" --port "$port" --journal "$journal" 2>>"$work/server.log" &
    server_pid=$!
    for _ in $(seq 100); do
        grep -q "msg=listening" "$work/server.log" 2>/dev/null && [ "$(grep -c msg=listening "$work/server.log")" -ge "$1" ] && return 0
        sleep 0.1
    done
    echo "the server did not start:"; cat "$work/server.log"; exit 1
}

echo "== server on port $port, journal $journal"
start_server 1
mkfifo "$work/go"
# Line-buffered, so that the script sees "first:" while the app waits for its next line.
(cd "$work/app" && exec stdbuf -oL .build/debug/App < "$work/go" > "$work/app.log" 2>&1) &
app_pid=$!
exec 3>"$work/go"
for _ in $(seq 100); do grep -q "^first:" "$work/app.log" 2>/dev/null && break; sleep 0.1; done
grep "^first:" "$work/app.log" || { cat "$work/app.log"; exit 1; }

echo "== restarting the server on the same port and journal"
kill -TERM "$server_pid"
wait "$server_pid" || true
start_server 2
echo go >&3
exec 3>&-
status=0
wait "$app_pid" || status=$?
app_pid=""
cat "$work/app.log"
exit "$status"
