#!/usr/bin/env bash
# Builds the four libFuzzer targets (with AddressSanitizer) from the package's own
# sources and runs each for a bounded time. Usage: Fuzz/build-and-run.sh [SECONDS]
# A crash leaves its input in Fuzz/findings/; rerun a target on it to reproduce.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
OUT=.build/fuzz
mkdir -p "$OUT" Fuzz/findings
# -package-name as SwiftPM passes it: the sources use `package` access across modules.
FLAGS=(-parse-as-library -sanitize=fuzzer,address -O -g -package-name buttonarbiter -I "$OUT" -L "$OUT")
# Outputs of an earlier run are removed first, and a compiler failure stops the script:
# otherwise a target that no longer compiles would fuzz its old binary and pass.
rm -f "$OUT"/*.a "$OUT"/*.swiftmodule "$OUT/LineParserFuzz" "$OUT/HTTPHeadFuzz" "$OUT/WebSocketFrameFuzz" "$OUT/RelayFrameFuzz"
compile() {
  local log="$OUT/swiftc.log"
  if ! swiftc "${FLAGS[@]}" "$@" > "$log" 2>&1; then
    grep -v "ld.gold: warning" "$log" >&2 || true
    echo "fuzz: swiftc failed: $*" >&2
    exit 1
  fi
  grep -v "ld.gold: warning" "$log" || true
}
compile -module-name ArbiterCore -emit-module -emit-module-path "$OUT/ArbiterCore.swiftmodule" \
  -emit-library -static -o "$OUT/libArbiterCore.a" Sources/ArbiterCore/*.swift
compile -module-name ArbiterWire -emit-module -emit-module-path "$OUT/ArbiterWire.swiftmodule" \
  -emit-library -static -o "$OUT/libArbiterWire.a" $(find Sources/ArbiterWire -name '*.swift')
compile -module-name ArbiterCluster -emit-module -emit-module-path "$OUT/ArbiterCluster.swiftmodule" \
  -emit-library -static -o "$OUT/libArbiterCluster.a" $(find Sources/ArbiterCluster -name '*.swift')
status=0
for target in LineParserFuzz HTTPHeadFuzz WebSocketFrameFuzz RelayFrameFuzz; do
  compile -lArbiterCluster -lArbiterWire -lArbiterCore "Fuzz/$target.swift" -o "$OUT/$target"
  corpus="$OUT/corpus-$target"
  mkdir -p "$corpus"
  cp Fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $target for ${SECONDS_EACH}s"
  if ! "$OUT/$target" -max_total_time="$SECONDS_EACH" -timeout=5 -rss_limit_mb=2048 \
       -artifact_prefix="Fuzz/findings/$target-" "$corpus" > "$OUT/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; see $OUT/$target.log and Fuzz/findings/" >&2
    tail -30 "$OUT/$target.log" >&2
    status=1
  else
    grep -E "^Done|stat::number_of_executed_units" "$OUT/$target.log" | tail -1
  fi
done
exit $status
