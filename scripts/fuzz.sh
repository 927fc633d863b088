#!/usr/bin/env bash
# Runs every Go fuzz target of the project briefly (FUZZTIME each, default
# 5000x: 5,000 inputs), one after another: the readers of outside input
# (simulation files, model answers, commands, orders, the server's bytes)
# must never panic. A failure leaves its input under the package's
# testdata/fuzz/ and fails the script. Usage: scripts/fuzz.sh [FUZZTIME]
#
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report "context deadline exceeded" as a failure when the time runs out on
# a loaded machine (go.dev/issue/75804, fixed in Go 1.27); a count has no
# deadline to race. A duration (30s) still works for a longer local run.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-${FUZZTIME:-5000x}}"

# Each line: package, target (found by name, so a new target is not missed).
targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
  pkg="./$(dirname "${f#./}")"
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | sed "s|^|$pkg |"
done)

count=0
while read -r pkg target; do
  [ -n "$pkg" ] || continue
  echo "== fuzz $pkg $target ($fuzztime)"
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"  </dev/null
  count=$((count + 1))
done <<< "$targets"
echo "== $count fuzz targets ran $fuzztime each, no failure"
