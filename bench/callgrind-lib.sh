# Shared by bench/callgrind.sh and bench/fair-callgrind.sh (sourced, not run): the
# release build, a stripped server copy valgrind can read, and one counted run.

# Installs valgrind if missing, builds the release binaries, sets BIN and OUT and puts a
# stripped copy of the server at $OUT/arbiter (valgrind 3.19 cannot read Swift 6's DWARF 5).
callgrind_setup() {
  command -v valgrind >/dev/null || { apt-get install -y valgrind >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y valgrind >/dev/null; }; }
  swift build -c release --product arbiter >/dev/null
  swift build -c release --product arbiter-load >/dev/null
  BIN=$(swift build -c release --show-bin-path)
  OUT=$(mktemp -d)
  cp "$BIN/arbiter" "$OUT/arbiter" && strip --strip-debug "$OUT/arbiter"
}

# callgrind_total <workload> <config> <cycles>: the server's total user-space
# instructions while arbiter-load drives <cycles> cycles of <workload> (10 connections,
# no observer, CONNECTIONS overrides; ARBITER_ARGS adds server options).
callgrind_total() {
  local workload=$1 config=$2 cycles=$3 port=$((20000 + RANDOM % 20000))
  # shellcheck disable=SC2086 # ARBITER_ARGS is a list of options
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$workload.$cycles" \
    "$OUT/arbiter" --port "$port" --config "$config" --rate 0 --log-level warn ${ARBITER_ARGS:-} 2>"$OUT/vg.$workload.$cycles" &
  local pid=$!
  for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$BIN/arbiter-load" "$workload" --port "$port" --connections "${CONNECTIONS:-10}" --observers 0 --cycles "$cycles" >"$OUT/load.$workload.$cycles" 2>&1
  kill -TERM $pid; wait $pid || true
  grep -E "^(summary|totals):" "$OUT/cg.$workload.$cycles" | head -1 | awk '{print $2}'
}
