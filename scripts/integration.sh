#!/usr/bin/env bash
# Integration tests against a real model: OPENAI_BASE_URL / OPENAI_API_KEY /
# ARBITER_LLM_MODEL when set (OpenAI, vLLM, your Ollama), else a local Ollama
# v0.6.5 (built from the Go module proxy when missing) serving the GGUF file
# named by ARBITER_GGUF (default models/stories260K.gguf). Tests skip
# with the reason when neither can be had.
set -euo pipefail
cd "$(dirname "$0")/.."
# With pipefail the pipeline's status is go test's (tee and the filter end
# with 0), so a failing test fails this script. The filter keeps the first
# line of every t.Log/t.Error (file.go:N: ...), so that a failure says why.
# A real Jaeger for TestIntegrationJaegerTrace: built once from the Go
# module proxy and kept in the Go bin directory (scripts/jaeger.sh); when it
# cannot be built or started, that test skips and says so.
if [ -z "${ARBITER_JAEGER_URL:-}" ]; then
  if exports=$(scripts/jaeger.sh start) && eval "$exports"; then
    unset OTEL_EXPORTER_OTLP_ENDPOINT # only the test that reads Jaeger sends to it
    trap 'scripts/jaeger.sh stop "$ARBITER_JAEGER_PID"' EXIT
  else
    echo "jaeger: not available (see above): TestIntegrationJaegerTrace will skip"
  fi
fi
status=0
go test -tags integration -count=1 -timeout 40m -v ./... 2>&1 |
  tee "${ARBITER_INTEGRATION_LOG:-/dev/null}" |
  { grep -E '^(=== RUN|--- |\s+--- |ok |FAIL|PASS|panic:)|^\s+[A-Za-z0-9_]+\.go:[0-9]+: |FIGURES|localmodel:|SKIP|skip' || true; } || status=$?
exit "$status"
