package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
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
