// Package localmodel runs a real model server for integration tests: Ollama
// v0.6.5 (found, or built from the Go module proxy) serving a small GGUF file
// (by default models/stories260K.gguf, shipped in the repository) on a free 127.0.0.1 port, with
// its models and HOME in a temporary directory, stopped by process group.
//
// Integration tests get an endpoint with ForTest, which prefers a configured
// one (OPENAI_BASE_URL, OPENAI_API_KEY, ARBITER_LLM_MODEL) and otherwise
// starts one local server per test binary:
//
//	func TestMain(m *testing.M) { os.Exit(localmodel.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		baseURL, apiKey, model := localmodel.ForTest(t)
//		...
//	}
//
// The model's output is nonsense; it proves the wire protocol, grammar-
// constrained json_schema answers and tool-call plumbing, never wording. The
// Modelfile (testdata/Modelfile.tmpl, shared with scripts/local-model.sh) has
// a template that renders .Tools and .ToolCalls, so a request with tools and a
// response_format forcing {"name": ..., "arguments": {...}} gets real
// tool_calls back.
//
// Nothing here downloads weights: a missing GGUF file is an error that names
// ARBITER_GGUF.
package localmodel
