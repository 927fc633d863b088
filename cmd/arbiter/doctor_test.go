package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
	"github.com/arbiter-sim/arbiter/session"
)

func TestDoctor(t *testing.T) {
	tool := openaitest.ToolCalls(openaitest.Tool("c1", "report_weather", map[string]any{"city": "Paris"}))
	tests := []struct {
		name    string
		handler openaitest.Handler
		code    int
		want    []string
	}{
		{"capable server", func(c *openaitest.Call) openaitest.Reply {
			if len(c.Request.Tools) > 0 {
				return tool
			}
			return openaitest.FromSchema(nil)(c)
		}, 0, []string{"ok   reachable", `model "test-model" is served`, "ok   json_schema", "ok   tools: tool_calls returned natively"}},
		{"tools only with a forced shape", func(c *openaitest.Call) openaitest.Reply {
			if len(c.Request.Tools) > 0 && c.Request.ResponseFormat == nil {
				return openaitest.Content("It is sunny.")
			}
			if len(c.Request.Tools) > 0 {
				return tool
			}
			return openaitest.FromSchema(nil)(c)
		}, 0, []string{"ok   tools: tool_calls returned with the call's shape forced"}},
		{"schema ignored", openaitest.Always(openaitest.Content("sure, here you go")), ExitModel,
			[]string{"FAIL json_schema: answer is not valid JSON", "FAIL tools"}},
		{"unauthorised", openaitest.Always(openaitest.Status(401, "invalid_request_error", "invalid_api_key", "bad key")), ExitModel, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			var opts []openaitest.Option
			if tc.name == "unauthorised" {
				opts = append(opts, openaitest.WithAPIKey("the-right-key"))
			}
			srv := openaitest.New(t, tc.handler, opts...)
			t.Setenv("OPENAI_BASE_URL", srv.URL)
			t.Setenv("OPENAI_API_KEY", "wrong-key")
			t.Setenv("ARBITER_LLM_MODEL", "test-model")
			code, out, errOut := arbiter(t, "doctor")
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.name == "unauthorised" && (!strings.Contains(out, "FAIL reachable") || !strings.Contains(errOut, "401")) {
				t.Errorf("unauthorised: stdout\n%s\nstderr\n%s", out, errOut)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		cleanEnv(t)
		fakeModel(t, nil)
		code, out, _ := arbiter(t, "doctor", "--json")
		var rep session.DoctorReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Reachable || !rep.JSONSchema.OK || rep.Tools.OK {
			t.Errorf("exit %d err %v report %+v", code, err, rep)
		}
	})
}

// TestDoctorContext: doctor reports the model's context: Ollama's num_ctx
// from /api/show, llm.context_tokens over it without asking, and why it is
// unknown on a server that does not say.
func TestDoctorContext(t *testing.T) {
	capable := func(c *openaitest.Call) openaitest.Reply {
		if len(c.Request.Tools) > 0 {
			return openaitest.ToolCalls(openaitest.Tool("c1", "report_weather", map[string]any{"city": "Paris"}))
		}
		return openaitest.FromSchema(nil)(c)
	}
	show := map[string]any{"parameters": "num_ctx 2048", "model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 4096}}
	for _, tc := range []struct {
		name    string
		ollama  bool
		setting string
		want    string
		shows   int
	}{
		{"ollama", true, "", "ok   context: 2048 tokens (the model's num_ctx (Ollama /api/show))", 1},
		{"configured", true, "8192", "ok   context: 8192 tokens (llm.context_tokens)", 0},
		{"not ollama", false, "", "info context: unknown (the server does not say (POST /api/show answered 404: not Ollama)); set llm.context_tokens", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			var opts []openaitest.Option
			if tc.ollama {
				opts = append(opts, openaitest.Ollama(show))
			}
			srv := openaitest.New(t, capable, opts...)
			t.Setenv("OPENAI_BASE_URL", srv.URL)
			t.Setenv("ARBITER_LLM_MODEL", "test-model")
			if tc.setting != "" {
				t.Setenv("ARBITER_LLM_CONTEXT_TOKENS", tc.setting)
			}
			code, out, errOut := arbiter(t, "doctor")
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, output lacks %q:\n%s%s", code, tc.want, out, errOut)
			}
			if n := len(srv.Shows()); n != tc.shows {
				t.Errorf("/api/show asked %d times, want %d", n, tc.shows)
			}
			code, out, _ = arbiter(t, "doctor", "--json")
			var rep session.DoctorReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || (rep.Context.Tokens > 0) == (rep.ContextError != "") {
				t.Errorf("--json: exit %d, %v, context %+v, error %q", code, err, rep.Context, rep.ContextError)
			}
		})
	}
}

// doctorJSON is doctor --json's document as a reader takes it.
type doctorJSON struct {
	OK         bool
	Problems   []string
	Warnings   []string
	Endpoint   *string
	JSONSchema struct{ OK bool } `json:"json_schema"`
}

// TestDoctorJSONWhateverTheOutcome: doctor --json writes one document on
// stdout when the endpoint passes, when it fails, when none is configured
// and when the configuration is bad; the exit code says which.
func TestDoctorJSONWhateverTheOutcome(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(t *testing.T)
		code      int
		ok        bool
		problem   string
		hasReport bool
	}{
		{"passes", func(t *testing.T) { fakeModel(t, nil) }, 0, true, "", true},
		{"fails", func(t *testing.T) { fakeModel(t, openaitest.Always(openaitest.Content("sure"))) }, ExitModel, false, "json_schema: ", true},
		{"unreachable", func(t *testing.T) {
			t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1") // nothing listens on port 1
			t.Setenv("ARBITER_LLM_MAX_ATTEMPTS", "1")
		}, ExitModel, false, "connection refused", true},
		{"no endpoint", func(t *testing.T) {}, ExitUsage, false, "no model endpoint configured", false},
		{"bad configuration", func(t *testing.T) {
			fakeModel(t, nil)
			t.Setenv("ARBITER_LLM_TIMEOUT", "-1s")
		}, ExitUsage, false, "llm.timeout", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			tc.setup(t)
			code, out, errOut := arbiter(t, "doctor", "--json")
			var got doctorJSON
			err := json.Unmarshal([]byte(out), &got)
			if err != nil || code != tc.code || got.OK != tc.ok || (got.Endpoint != nil) != tc.hasReport {
				t.Fatalf("exit %d (want %d), %v: %+v\nstdout: %s\nstderr: %s", code, tc.code, err, got, out, errOut)
			}
			if tc.ok != (len(got.Problems) == 0) || (!tc.ok && !strings.Contains(got.Problems[0], tc.problem)) || got.Warnings == nil {
				t.Errorf("problems %q, warnings %q; want one naming %q unless it passes", got.Problems, got.Warnings, tc.problem)
			}
		})
	}
}

// TestDoctorSaysWhatItWaitsFor: on a terminal, stderr says what doctor is
// waiting for, before the answer comes (a busy model can take its whole
// timeout), and the line is cleared at the end; off a terminal, nothing.
func TestDoctorSaysWhatItWaitsFor(t *testing.T) {
	cleanEnv(t)
	var errOut texttest.Buffer
	var shownBeforeAnswer atomic.Bool
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if c.SchemaName() == "DoctorProbe" {
			shownBeforeAnswer.Store(strings.Contains(errOut.String(), "doctor: waiting for a strict json_schema call to model test-model (a busy model answers when it is free; at most llm.timeout, 1m0s)"))
		}
		return openaitest.FromSchema(nil)(c)
	})
	io, out, _ := TestStreams("")
	io.ErrOut, io.ErrTTY = &errOut, true
	if code := Execute(context.Background(), io, []string{"doctor"}); code != 0 {
		t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut.String())
	}
	if !shownBeforeAnswer.Load() {
		t.Errorf("the json_schema call came before stderr said doctor waits for it:\n%q", errOut.String())
	}
	texttest.InOrder(t, errOut.String(), "doctor: waiting for GET http://", "/models …", "doctor: waiting for the context of model test-model",
		"doctor: waiting for a strict json_schema call", "doctor: waiting for a tool call to model test-model")
	if !strings.HasSuffix(errOut.String(), "\r\x1b[K") || strings.Contains(out.String(), "waiting") {
		t.Errorf("the waiting line is not cleared at the end, or reached stdout:\nstderr %q\nstdout %q", errOut.String(), out.String())
	}
	_, _, plain := arbiter(t, "doctor")
	if strings.Contains(plain, "waiting") {
		t.Errorf("off a terminal, doctor printed progress: %q", plain)
	}
}
