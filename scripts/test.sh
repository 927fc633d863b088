#!/usr/bin/env bash
# The project's test command: formatting, vet, and every unit test with the race
# detector, offline. README.md and .ci/run both run exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files are not formatted (run gofmt -w .):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# The integration tests only build with their tag: vet them too, so a
# rename that misses them fails here and not on the real model.
go vet -tags integration ./...
go test -race -count=1 ./...
