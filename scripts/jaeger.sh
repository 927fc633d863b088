#!/usr/bin/env bash
# A local Jaeger all-in-one (v2: the OpenTelemetry Collector with Jaeger's
# storage, query API and UI) to send a run's traces to, built from the Go
# module proxy the first time and kept in the Go bin directory as
# jaeger-v1.76.0, which later calls find by its version (go version -m).
#
#   eval "$(scripts/jaeger.sh start)"   # prints export lines on stdout
#   scripts/jaeger.sh build             # only build (or find) the binary
#   scripts/jaeger.sh ui SRC            # build the UI from jaeger-ui's source
#   scripts/jaeger.sh stop [PID]        # default $ARBITER_JAEGER_PID
#
# The binary built from the module proxy has the query API but no UI: its
# pages are an npm build of the jaeger-ui repository, packed into Jaeger's
# released binaries only (and published to no registry). `ui SRC` builds
# them from SRC, a jaeger-ui source tree at tag $version (e.g. a clone of
# that repository), with npm, into the Go bin directory as
# jaeger-ui-v1.76.0 (7 minutes at a load average near 18, and 650 MB of
# node_modules in SRC); start serves them when they are there.
#
# start prints
#   export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:P1   (OTLP over HTTP)
#   export ARBITER_JAEGER_OTLP=http://127.0.0.1:P1           (the same, for the tests)
#   export ARBITER_JAEGER_URL=http://127.0.0.1:P2            (UI and query API)
#   export ARBITER_JAEGER_PID=...
# and nothing else on stdout; messages go to stderr. On failure it prints
# `false`, so that `eval "$(scripts/jaeger.sh start)"` fails too. Storage is
# in memory: stop forgets every trace.
#
# Environment:
#   ARBITER_JAEGER_BIN  a jaeger binary to use as is (default: the Go bin
#                       directory's jaeger-v1.76.0, else built there: about
#                       7 minutes of CPU from empty caches, 3 to 4 on 2 idle
#                       cores; later runs find it and start in a second).
#   ARBITER_JAEGER_UI   a directory of built UI assets (index.html, static/)
#                       to serve (default: the Go bin directory's
#                       jaeger-ui-v1.76.0 when `ui` built it; else no UI).
set -euo pipefail

module=github.com/jaegertracing/jaeger
version=v1.76.0
mode="${1:-}"
base="${TMPDIR:-/tmp}"
base="${base%/}/arbiter-jaeger"

log() { printf 'jaeger: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  if [ "$mode" = start ]; then echo false; fi
  exit 1
}
now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0fs", b - a }'; }

# is_pinned BIN: BIN was built from $module at $version (go version -m).
is_pinned() {
  [ -f "$1" ] && [ -x "$1" ] || return 1
  local v
  v=$(go version -m "$1" 2>/dev/null | awk -v m="$module" '($1 == "mod" || $1 == "dep") && $2 == m { print $3 }')
  [ "$v" = "$version" ]
}

# find_jaeger sets jaeger_bin, building it when no pinned build is found.
# `go install module/cmd/jaeger@version` refuses a module whose go.mod
# has replace directives, so it is built from a module of its own that
# requires it as a tool.
find_jaeger() {
  if [ -n "${ARBITER_JAEGER_BIN:-}" ]; then
    [ -x "$ARBITER_JAEGER_BIN" ] || die "ARBITER_JAEGER_BIN=$ARBITER_JAEGER_BIN is not an executable file"
    jaeger_bin=$ARBITER_JAEGER_BIN
    return
  fi
  command -v go >/dev/null || die "no go tool to find or build jaeger $version: set ARBITER_JAEGER_BIN"
  local gobin
  gobin=$(go env GOBIN)
  if [ -z "$gobin" ]; then gobin="$(go env GOPATH | cut -d: -f1)/bin"; fi
  jaeger_bin="$gobin/jaeger-$version"
  if is_pinned "$jaeger_bin"; then return; fi
  log "building jaeger $version from the Go module proxy into $jaeger_bin (about 7 CPU-minutes from empty caches)"
  local began tmp
  began=$(now)
  tmp=$(mktemp -d)
  mkdir -p "$gobin"
  if ! (cd "$tmp" && go mod init arbiter-jaeger-build >/dev/null 2>&1 &&
    go get -tool "$module/cmd/jaeger@$version" >&2 &&
    go build -o "$jaeger_bin.tmp" "$module/cmd/jaeger" >&2); then
    rm -rf "$tmp" "$jaeger_bin.tmp"
    die "building $module/cmd/jaeger@$version failed (see above)"
  fi
  rm -rf "$tmp"
  mv "$jaeger_bin.tmp" "$jaeger_bin"
  is_pinned "$jaeger_bin" || die "the build at $jaeger_bin is not $module $version"
  log "built $jaeger_bin in $(since "$began")"
}

# ui_dir is where `ui` keeps the UI's assets: beside the binary.
ui_dir() {
  local gobin
  gobin=$(go env GOBIN)
  if [ -z "$gobin" ]; then gobin="$(go env GOPATH | cut -d: -f1)/bin"; fi
  echo "$gobin/jaeger-ui-$version"
}

# find_ui sets ui_assets to the UI's assets to serve, "" for none.
find_ui() {
  ui_assets=${ARBITER_JAEGER_UI:-}
  if [ -n "$ui_assets" ]; then
    [ -f "$ui_assets/index.html" ] || die "ARBITER_JAEGER_UI=$ui_assets has no index.html"
    return
  fi
  if command -v go >/dev/null && [ -f "$(ui_dir)/index.html" ]; then ui_assets=$(ui_dir); fi
}

# build_ui SRC builds the UI's assets from the jaeger-ui source tree SRC,
# which must be at tag $version, into ui_dir. engine-strict is lifted: the
# tree asks for node 24 and builds on 20.19 or later (vite 7's floor).
build_ui() {
  local src="${1:-}" dir began
  [ -n "$src" ] || die "usage: scripts/jaeger.sh ui SRC (SRC: the jaeger-ui repository at tag $version)"
  [ -f "$src/packages/jaeger-ui/package.json" ] || die "$src is not a jaeger-ui source tree (no packages/jaeger-ui/package.json)"
  grep -q "\"version\": \"${version#v}\"" "$src/packages/jaeger-ui/package.json" ||
    die "$src/packages/jaeger-ui is not version ${version#v}, the UI of jaeger $version"
  command -v npm >/dev/null || die "no npm to build the UI: apt-get install -y npm"
  command -v go >/dev/null || die "no go tool to find the Go bin directory"
  dir=$(ui_dir)
  if [ -f "$dir/index.html" ]; then
    log "the UI is built already: $dir"
    return
  fi
  log "building jaeger-ui ${version#v} in $src with npm (7 minutes at a load average near 18)"
  began=$(now)
  (cd "$src" && npm ci --engine-strict=false --ignore-scripts --no-audit --no-fund >&2 &&
    npm run build >&2) || die "building the UI in $src failed (see above)"
  [ -f "$src/packages/jaeger-ui/build/index.html" ] || die "the UI's build left no packages/jaeger-ui/build/index.html"
  rm -rf "$dir.tmp"
  cp -R "$src/packages/jaeger-ui/build" "$dir.tmp"
  mv "$dir.tmp" "$dir"
  log "built the UI into $dir in $(since "$began")"
}

free_port() {
  local port
  for _ in $(seq 20); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  return 1
}

start() {
  command -v curl >/dev/null || die "no curl to see that jaeger answers: apt-get install -y curl"
  find_jaeger
  find_ui
  local otlp grpc ui query dir pid ui_config=""
  otlp=$(free_port) && grpc=$(free_port) && ui=$(free_port) && query=$(free_port) || die "no free port"
  mkdir -p "$base"
  dir=$(mktemp -d "$base/XXXXXX")
  if [ -n "$ui_assets" ]; then
    ui_config="
    ui:
      assets_path: $ui_assets"
  fi
  # All-in-one with memory storage, as the binary's own default, but on
  # free ports of 127.0.0.1 and without its other receivers, extensions and
  # metrics port, so that two can run on one machine.
  cat >"$dir/config.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memory_store$ui_config
    http:
      endpoint: 127.0.0.1:$ui
    grpc:
      endpoint: 127.0.0.1:$query
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$otlp
      grpc:
        endpoint: 127.0.0.1:$grpc
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
YAML
  setsid "$jaeger_bin" --config "$dir/config.yaml" >"$dir/jaeger.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/pid"
  for _ in $(seq 300); do # 30 s
    if curl -fsS --max-time 2 "http://127.0.0.1:$ui/api/services" >/dev/null 2>&1; then
      log "jaeger $version (pid $pid): OTLP http://127.0.0.1:$otlp (gRPC :$grpc), query API${ui_assets:+ and UI} http://127.0.0.1:$ui (log $dir/jaeger.log)"
      printf "export OTEL_EXPORTER_OTLP_ENDPOINT='http://127.0.0.1:%s'\n" "$otlp"
      printf "export ARBITER_JAEGER_OTLP='http://127.0.0.1:%s'\n" "$otlp"
      printf "export ARBITER_JAEGER_URL='http://127.0.0.1:%s'\n" "$ui"
      printf "export ARBITER_JAEGER_PID='%s'\n" "$pid"
      return
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  die "jaeger did not answer on port $ui; its log:
$(tail -n 20 "$dir/jaeger.log")"
}

stop() {
  local pid="${1:-${ARBITER_JAEGER_PID:-}}"
  [ -n "$pid" ] || die "no PID given and ARBITER_JAEGER_PID is not set"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  grep -lx "$pid" "$base"/*/pid 2>/dev/null | while read -r f; do rm -rf "$(dirname "$f")"; done
}

case "$mode" in
build) find_jaeger && log "$jaeger_bin" ;;
ui) build_ui "${2:-}" ;;
start) start ;;
stop) stop "${2:-}" ;;
*) die "usage: scripts/jaeger.sh start|build|ui SRC|stop [PID]" ;;
esac
