#!/usr/bin/env bash
# A local OpenAI-compatible model server for machines with no API key: Ollama
# v0.6.5 (found, or built with `go install`) serving a GGUF file on a free
# 127.0.0.1 port, with its models and HOME in a directory of its own under
# ${TMPDIR:-/tmp}/arbiter-local-model (so that several users or runs of
# scripts/demo.sh on one machine do not share, or stop, one another's server).
#
#   eval "$(scripts/local-model.sh start)"   # prints export lines on stdout
#   scripts/local-model.sh status            # the servers running: pid, URL, model
#   scripts/local-model.sh stop [PID]        # default $ARBITER_LOCAL_MODEL_PID
#
# start prints
#   export OPENAI_BASE_URL=...; export ARBITER_LLM_MODEL=...; export ARBITER_LOCAL_MODEL_PID=...
#   export ARBITER_LLM_DEPTH=0; export ARBITER_LLM_TIMEOUT=5m
# (one per line) and nothing else on stdout; messages go to stderr. The depth
# keeps demo-sim's prompts within the model's window (the Modelfile's num_ctx,
# internal/localmodel.Depth): past exchanges sent back would pass it by
# tick 3. The timeout is for one thread reading a prompt of several thousand
# tokens on a busy machine (config.yaml's 60s is for hosted models). A value
# already set is kept. On failure it
# prints `false`, so that `eval "$(scripts/local-model.sh start)"` fails too.
# Run again in a shell where ARBITER_LOCAL_MODEL_PID names a running server,
# start prints that server's lines again. stop kills the server's process group
# (ollama serve and its runners) and removes its directory.
#
# Environment:
#   ARBITER_GGUF        the model file (default models/stories260K.gguf
#                       next to the repository). Nothing is ever downloaded.
#   ARBITER_OLLAMA_BIN  an ollama binary to use as is (default: ollama on PATH or
#                       in the Go bin directory if it is a source build of v0.6.5,
#                       else `go install github.com/ollama/ollama@v0.6.5`, which
#                       needs cgo and takes a few minutes from empty caches).
#
# The Modelfile is internal/localmodel/testdata/Modelfile.tmpl, the same one the
# Go test harness (internal/localmodel) uses.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
module=github.com/ollama/ollama
version=v0.6.5
base="${TMPDIR:-/tmp}"
base="${base%/}/arbiter-local-model"
dir= # this server's directory under $base
template="$repo/internal/localmodel/testdata/Modelfile.tmpl"
placeholder=@GGUF_PATH@
mode="${1:-}"

log() { printf 'local-model: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  if [ "$mode" = start ]; then echo false; fi
  exit 1
}

now() { # seconds, with a fraction where the shell has one
  if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi
}
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2fs", b - a }'; }

# is_pinned BIN: BIN is a source build of $module at $version (go version -m).
is_pinned() {
  if [ ! -f "$1" ] || [ ! -x "$1" ]; then return 1; fi
  local v
  v=$(go version -m "$1" 2>/dev/null | awk -v m="$module" '$1 == "mod" && $2 == m { print $3 }')
  [ "$v" = "$version" ]
}

# find_ollama sets ollama_bin.
find_ollama() {
  if [ -n "${ARBITER_OLLAMA_BIN:-}" ]; then
    if [ ! -f "$ARBITER_OLLAMA_BIN" ] || [ ! -x "$ARBITER_OLLAMA_BIN" ]; then
      die "ARBITER_OLLAMA_BIN=$ARBITER_OLLAMA_BIN is not an executable file"
    fi
    ollama_bin=$ARBITER_OLLAMA_BIN
    return
  fi
  command -v go >/dev/null ||
    die "no go tool to find or build ollama $version: install Go, or set ARBITER_OLLAMA_BIN to an ollama binary"
  local gobin on_path
  gobin=$(go env GOBIN)
  if [ -z "$gobin" ]; then gobin="$(go env GOPATH | cut -d: -f1)/bin"; fi
  on_path=$(command -v ollama || true)
  for ollama_bin in "$on_path" "$gobin/ollama"; do
    if [ -n "$ollama_bin" ] && is_pinned "$ollama_bin"; then return; fi
  done
  log "building ollama $version: go install $module@$version (a few minutes from empty caches; needs gcc)"
  local began
  began=$(now)
  go install "$module@$version" >&2 || die "go install $module@$version failed (see above)"
  ollama_bin="$gobin/ollama"
  is_pinned "$ollama_bin" || die "go install $module@$version did not leave a $version build at $ollama_bin"
  log "built $ollama_bin in $(since "$began")"
}

# find_gguf sets gguf (absolute) and model.
find_gguf() {
  local given="${ARBITER_GGUF:-}"
  if [ -n "$given" ]; then
    [ -f "$given" ] || die "ARBITER_GGUF=$given is not a file: set ARBITER_GGUF to a .gguf file path"
    gguf=$given
  else
    gguf="$repo/models/stories260K.gguf"
    [ -f "$gguf" ] || die "no model file at $gguf: set ARBITER_GGUF to a .gguf file path"
  fi
  gguf="$(cd "$(dirname "$gguf")" && pwd)/$(basename "$gguf")"
  case "$gguf" in
  *'"'* | *$'\n'*) die "the model file path $gguf has a quote or a newline, which a Modelfile cannot hold" ;;
  esac
  # The same name internal/localmodel.ModelName gives.
  model=$(basename "$gguf" .gguf | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_.-]/-/g; s/^[-_.]*//' | cut -c1-64)
  model=${model:-arbiter-local}
}

# http_get PATH: the body of GET http://$addr/PATH; fails unless 200.
http_get() {
  if command -v curl >/dev/null; then
    curl -fsS --max-time 5 "http://$addr$1"
    return
  fi
  local status
  exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$1" "$addr" >&3
  IFS= read -r status <&3 || status=
  if [[ $status != *" 200 "* ]]; then
    exec 3<&-
    return 1
  fi
  awk 'body { print } /^\r?$/ { body = 1 }' <&3
  exec 3<&-
}

# ollama_env CMD...: CMD in the server's environment. Not for `&`: a function
# in the background is a subshell, and $! would be that subshell.
ollama_env() {
  env OLLAMA_HOST="$addr" OLLAMA_MODELS="$dir/models" OLLAMA_NO_CLOUD=1 OLLAMA_NOHISTORY=1 OLLAMA_NUM_PARALLEL="${OLLAMA_NUM_PARALLEL:-1}" HOME="$dir/home" "$@"
}

# alive PID: PID exists, is not a zombie, and is an ollama process (guards
# against a reused PID).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local comm='' stat=''
  if [ -r "/proc/$1/stat" ]; then
    stat=$(cat "/proc/$1/stat" 2>/dev/null || true)
    stat=${stat##*) }
    if [ "${stat%% *}" = Z ]; then return 1; fi
  fi
  if [ -r "/proc/$1/comm" ]; then
    comm=$(cat "/proc/$1/comm")
  elif command -v ps >/dev/null; then
    comm=$(ps -o comm= -p "$1" 2>/dev/null || true)
  else
    return 0
  fi
  [[ $comm == *ollama* ]]
}

print_exports() {
  printf "export OPENAI_BASE_URL='http://%s/v1'\n" "$addr"
  printf "export ARBITER_LLM_MODEL='%s'\n" "$model"
  printf "export ARBITER_LOCAL_MODEL_PID='%s'\n" "$pid"
  local depth="${ARBITER_LLM_DEPTH:-0}" timeout="${ARBITER_LLM_TIMEOUT:-5m}"
  case "$depth" in '' | *[!0-9]*) depth=0 ;; esac
  case "$timeout" in '' | *[!0-9a-z.]*) timeout=5m ;; esac
  printf "export ARBITER_LLM_DEPTH='%s'\n" "$depth"
  printf "export ARBITER_LLM_TIMEOUT='%s'\n" "$timeout"
}

# serve_on_free_port starts ollama serve in its own process group and sets pid
# and addr once it answers; it tries a few random ports.
serve_on_free_port() {
  local try port
  for try in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 30000))
    addr="127.0.0.1:$port"
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi # taken
    # env and setsid exec in place (a background job is not a process group
    # leader, so setsid does not fork): $! is ollama serve, which leads its
    # own process group.
    if command -v setsid >/dev/null; then
      env OLLAMA_HOST="$addr" OLLAMA_MODELS="$dir/models" OLLAMA_NO_CLOUD=1 OLLAMA_NOHISTORY=1 OLLAMA_NUM_PARALLEL="${OLLAMA_NUM_PARALLEL:-1}" HOME="$dir/home" \
        setsid "$ollama_bin" serve >"$dir/serve.log" 2>&1 </dev/null &
      pid=$!
    else
      set -m # no setsid (macOS): a job of its own process group
      env OLLAMA_HOST="$addr" OLLAMA_MODELS="$dir/models" OLLAMA_NO_CLOUD=1 OLLAMA_NOHISTORY=1 OLLAMA_NUM_PARALLEL="${OLLAMA_NUM_PARALLEL:-1}" HOME="$dir/home" \
        "$ollama_bin" serve >"$dir/serve.log" 2>&1 </dev/null &
      pid=$!
      set +m
    fi
    for _ in $(seq 600); do # 60 s
      if http_get /api/version >/dev/null 2>&1; then return 0; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL -- "-$pid" 2>/dev/null || true
      local tail
      tail=$(tail -n 20 "$dir/serve.log")
      rm -rf "$dir"
      die "ollama serve on $addr did not answer within 60 s; its log:
$tail"
    fi
    log "ollama serve on $addr exited before answering (try $try); its log ends:
$(tail -n 5 "$dir/serve.log")"
  done
  rm -rf "$dir"
  die "ollama serve did not start on any of 5 ports"
}

# instance PID: the directory of the server whose pid is PID.
instance() {
  local d
  for d in "$base"/server.*; do
    if [ -f "$d/pid" ] && [ "$(cat "$d/pid")" = "$1" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

# load DIR: pid, addr, model and dir of the server in DIR.
load() {
  dir=$1
  pid=$(cat "$dir/pid") addr=$(cat "$dir/addr") model=$(cat "$dir/model")
}

# sweep removes the directories of servers that are gone (killed without stop,
# machine rebooted without clearing TMPDIR).
sweep() {
  local d p
  for d in "$base"/server.*; do
    [ -d "$d" ] || continue
    p=$(cat "$d/pid" 2>/dev/null || true)
    if [ -n "$p" ]; then
      alive "$p" || rm -rf "$d"
    elif [ -n "$(find "$d" -maxdepth 0 -mmin +10)" ]; then
      rm -rf "$d" # never got as far as a pid
    fi
  done
}

start() {
  local d
  if [ -n "${ARBITER_LOCAL_MODEL_PID:-}" ] && d=$(instance "$ARBITER_LOCAL_MODEL_PID"); then
    load "$d"
    if alive "$pid" && http_get /api/version >/dev/null 2>&1; then
      log "already running: pid $pid on $addr, model $model"
      print_exports
      return
    fi
  fi
  mkdir -p "$base"
  sweep

  find_gguf
  [ -f "$template" ] || die "no Modelfile template at $template"
  local content
  content=$(<"$template")
  [[ $content == *"$placeholder"* ]] || die "$template has no $placeholder"
  find_ollama

  dir=$(mktemp -d "$base/server.XXXXXX")
  mkdir "$dir/models" "$dir/home"
  # Plain substitution: the TEMPLATE is Go template syntax, and the path may hold & or \.
  printf '%s%s%s\n' "${content%%"$placeholder"*}" "$gguf" "${content#*"$placeholder"}" >"$dir/Modelfile"

  local began
  began=$(now)
  serve_on_free_port
  echo "$pid" >"$dir/pid"
  echo "$addr" >"$dir/addr"
  echo "$model" >"$dir/model"
  ollama_env "$ollama_bin" create "$model" -f "$dir/Modelfile" >>"$dir/serve.log" 2>&1 || {
    stop_server "$pid" >/dev/null 2>&1 || true
    die "ollama create $model failed"
  }
  local models
  models=$(http_get /v1/models || true)
  [[ $models == *"\"id\":\"$model:latest\""* ]] || {
    stop_server "$pid" >/dev/null 2>&1 || true
    die "model $model is not listed by http://$addr/v1/models after create"
  }
  log "serving $model ($gguf) at http://$addr/v1, pid $pid; ready in $(since "$began")"
  print_exports
}

# stop_server [PID]: default $ARBITER_LOCAL_MODEL_PID, else the only server.
stop_server() {
  local pid="${1:-${ARBITER_LOCAL_MODEL_PID:-}}" d
  if [ -z "$pid" ]; then
    local pids=()
    for d in "$base"/server.*; do
      if [ -f "$d/pid" ]; then pids+=("$(cat "$d/pid")"); fi
    done
    case ${#pids[@]} in
    0)
      log "no local model server in $base: nothing to stop"
      return 0
      ;;
    1) pid=${pids[0]} ;;
    *) die "${#pids[@]} servers in $base (pids ${pids[*]}): say which, $0 stop PID" ;;
    esac
  fi
  if alive "$pid"; then
    # The runner processes ollama starts are in its process group.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do # 5 s to shut down
      kill -0 -- "-$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
    log "stopped ollama serve (pid $pid)"
  elif kill -0 "$pid" 2>/dev/null; then
    log "pid $pid is not ollama: not killing it"
  else
    log "ollama serve (pid $pid) was not running"
  fi
  if d=$(instance "$pid"); then rm -rf "$d"; fi
  # Left by the first version of this script, which had one server in $base.
  if [ -f "$base/pid" ] && [ "$(cat "$base/pid")" = "$pid" ]; then
    rm -rf "${base:?}/pid" "${base:?}/addr" "${base:?}/model" "${base:?}/Modelfile" "${base:?}/serve.log" "${base:?}/models" "${base:?}/home"
  fi
}

status() {
  local d n=0
  for d in "$base"/server.*; do
    [ -f "$d/pid" ] || continue
    load "$d"
    alive "$pid" || continue
    printf '%s\thttp://%s/v1\t%s\n' "$pid" "$addr" "$model"
    n=$((n + 1))
  done
  if [ "$n" = 0 ]; then
    log "no local model server running"
    return 1
  fi
}

case "$mode" in
start) start ;;
stop) stop_server "${2:-}" ;;
status) status ;;
*)
  echo "usage: $0 start | status | stop [PID]   (eval \"\$($0 start)\" sets OPENAI_BASE_URL and ARBITER_LLM_MODEL)" >&2
  exit 2
  ;;
esac
