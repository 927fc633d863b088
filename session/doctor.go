package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
)

// DoctorReport is what Doctor found out about an endpoint: `arbiter
// doctor`'s report.
type DoctorReport struct {
	Endpoint    string   `json:"endpoint"`
	Model       string   `json:"model"`
	Reachable   bool     `json:"reachable"`
	Models      []string `json:"models"`
	ModelServed bool     `json:"model_served"`
	JSONSchema  Probe    `json:"json_schema"`
	Tools       Probe    `json:"tools"`
	// Context is the model's context as the client knows it (Tokens 0:
	// unknown, ContextError says why): llm.context_tokens, else what the
	// server says (Ollama's /api/show).
	Context      llm.Window `json:"context"`
	ContextError string     `json:"context_error,omitempty"`
	Error        string     `json:"error,omitempty"`
}

// Probe is the outcome of one capability check.
type Probe struct {
	OK        bool   `json:"ok"`
	Detail    string `json:"detail"`
	LatencyMS int64  `json:"latency_ms"`
}

// Doctor checks e the way a run uses it: GET /models (reachable? is
// params' model among them?), the model's context (configured, or asked of
// Ollama's /api/show), one strict json_schema call (valid without repair?)
// and one tool call (does the server return tool_calls?). A
// probe's failure is in the report; the error is an *InputError when e is
// no valid endpoint. step, when not nil, is told what each check is about
// to wait for (a call to a busy model can take its whole timeout).
func Doctor(ctx context.Context, e ClientConfig, params Params, step func(waitingFor string)) (*DoctorReport, error) {
	e.RepairAttempts = 0 // a probe wants the first answer as it is
	client, err := llm.New(e)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if step == nil {
		step = func(string) {}
	}
	return doctor(ctx, client, ShownURL(e.BaseURL), params, doctorSteps(ShownURL(e.BaseURL), params.Model, e.Timeout, step)), nil
}

// doctorSteps tells step, check by check, what doctor waits for.
func doctorSteps(endpoint, model string, timeout time.Duration, step func(string)) func(check string) {
	return func(check string) {
		switch check {
		case "models":
			step("GET " + endpoint + "/models")
		case "context":
			step("the context of model " + model)
		case "json_schema":
			step(fmt.Sprintf("a strict json_schema call to model %s (a busy model answers when it is free; at most llm.timeout, %s)", model, timeout))
		case "tools":
			step(fmt.Sprintf("a tool call to model %s (at most llm.timeout, %s, per try)", model, timeout))
		}
	}
}

func doctor(ctx context.Context, client *llm.Client, endpoint string, params Params, step func(check string)) *DoctorReport {
	rep := &DoctorReport{Endpoint: endpoint, Model: params.Model}
	step("models")
	models, err := client.Models(ctx)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Reachable, rep.Models = true, models
	// Ollama lists "name:latest" for a model created as "name".
	rep.ModelServed = slices.Contains(models, params.Model) || slices.Contains(models, params.Model+":latest")
	step("context")
	if rep.Context, err = client.ContextWindow(ctx, "", params.Model); err != nil {
		rep.ContextError = err.Error()
	}
	step("json_schema")
	rep.JSONSchema = probeJSONSchema(ctx, client, params)
	step("tools")
	rep.Tools = probeTools(ctx, client, params)
	return rep
}

// doctorSchema is a small strict schema with an enum, an integer and a
// bounded string: a server that enforces it answers validly at once.
var doctorSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string","enum":["yes","no"]},"count":{"type":"integer"},"note":{"type":"string","maxLength":40}},"required":["answer","count","note"],"additionalProperties":false}`)

func probeJSONSchema(ctx context.Context, client *llm.Client, params llm.Params) Probe {
	params.MaxTokens = 100
	start := time.Now()
	res := client.Complete(ctx, llm.Request{
		EntityKey: "doctor:json_schema", Phase: "doctor", Params: params,
		System:     "You answer with one JSON object and nothing else.",
		User:       `Answer "yes", count 3, and a short note.`,
		SchemaName: "DoctorProbe", Schema: doctorSchema,
	})
	p := Probe{LatencyMS: time.Since(start).Milliseconds()}
	if res.Err != nil {
		p.Detail = res.Err.Error()
		return p
	}
	p.OK = true
	p.Detail = fmt.Sprintf("strict schema answered validly (%d attempt(s), %d completion tokens): %s", res.Attempts, res.Usage.CompletionTokens, res.Output)
	return p
}

// Problem says why the endpoint cannot run simulations; "" when it can.
func (r *DoctorReport) Problem() string {
	switch {
	case !r.Reachable:
		return r.Error
	case !r.JSONSchema.OK:
		return "json_schema: " + r.JSONSchema.Detail
	}
	return ""
}

// doctorTool is the probe's tool: one required enum argument.
var doctorTool = llm.Tool{
	Name:        "report_weather",
	Description: "Report the weather of a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Oslo"]}},"required":["city"],"additionalProperties":false}`),
}

// probeTools asks for a tool call natively, then, if none came, with the
// call's shape forced by a json_schema (what small local models need).
func probeTools(ctx context.Context, client *llm.Client, params llm.Params) Probe {
	params.MaxTokens = 100
	start := time.Now()
	req := llm.ToolRequest{
		EntityKey: "doctor:tools", Phase: "doctor", Params: params,
		Messages: []llm.Message{{Role: "user", Content: "What is the weather in Paris? Use the tool."}},
		Tools:    []llm.Tool{doctorTool}, Choice: "required",
	}
	var notes []string
	for _, force := range []bool{false, true} {
		req.ForceShape = force
		res := client.CompleteTools(ctx, req)
		how := "natively"
		if force {
			how = "with the call's shape forced by json_schema (ForceShape)"
		}
		switch {
		case res.Err != nil:
			notes = append(notes, how+": "+res.Err.Error())
		case len(res.Calls) == 0:
			notes = append(notes, how+": no tool_calls in the answer")
		case res.Calls[0].Invalid != "":
			notes = append(notes, how+": "+res.Calls[0].Invalid)
		default:
			return Probe{OK: true, LatencyMS: time.Since(start).Milliseconds(),
				Detail: fmt.Sprintf("tool_calls returned %s: %s(%s)", how, res.Calls[0].Name, res.Calls[0].Arguments)}
		}
	}
	return Probe{LatencyMS: time.Since(start).Milliseconds(), Detail: fmt.Sprint(notes)}
}
