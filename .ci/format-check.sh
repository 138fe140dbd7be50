#!/usr/bin/env bash
# Fails when any Swift file breaks the repository's .swift-format rules, as the
# toolchain's `swift format` reads them (--strict: every finding is an error).
# Fix a tree with:
#   swift format --in-place --recursive --parallel Sources clients Tests bench Fuzz Plugins Package.swift
set -euo pipefail
cd "$(dirname "$0")/.."
PATHS=(Sources clients Tests bench Fuzz Plugins Package.swift)
if ! swift format lint --strict --recursive --parallel "${PATHS[@]}"; then
  echo "ci: swift format found formatting issues (above); run: swift format --in-place --recursive --parallel ${PATHS[*]}" >&2
  exit 1
fi
echo "format-check: clean"
