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
# cmd/arbiter's tests take about 2 minutes of CPU; on a machine shared by
# several builds (load 40 on 2 cores) that is over go test's default 10
# minutes of wall time, so the bound is set where only a hang reaches it.
go test -race -count=1 -timeout 30m ./...
