#!/usr/bin/env bash
# The main job: build arbiter, run ticks of the demo simulation and tell
# what happened in the last one.
#   scripts/demo.sh [TICKS]       (default 3)
# Uses OPENAI_API_KEY / OPENAI_BASE_URL when set (OpenAI, or your Ollama, vLLM,
# llama.cpp). Otherwise it starts a local model server with scripts/local-model.sh
# from the GGUF file named by ARBITER_GGUF (default models/stories260K.gguf),
# and stops it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
ticks="${1:-3}"
sim=simulations/demo-sim

echo "building bin/arbiter" >&2
go build -o bin/arbiter ./cmd/arbiter

if [ -z "${OPENAI_API_KEY:-}" ] && [ -z "${OPENAI_BASE_URL:-}" ]; then
  echo "no OPENAI_API_KEY or OPENAI_BASE_URL: starting a local model server" >&2
  eval "$(scripts/local-model.sh start)"
  trap 'scripts/local-model.sh stop' EXIT
fi

bin/arbiter run "$sim" --ticks "$ticks"
# What happened, not the bookkeeping: the last tick's story (each location's
# moment, who intended what, who moved), then where to read on.
echo
bin/arbiter story "$sim" --last
echo
echo "More: bin/arbiter story $sim (every tick), bin/arbiter report $sim -o report.html (a page of the run), bin/arbiter status $sim (calls, tokens, what the run ran with)"
