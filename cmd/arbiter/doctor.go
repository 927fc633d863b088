package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/llm"
)

// doctorReport is what `arbiter doctor` found out about the endpoint.
type doctorReport struct {
	Endpoint    string   `json:"endpoint"`
	Model       string   `json:"model"`
	Reachable   bool     `json:"reachable"`
	Models      []string `json:"models"`
	ModelServed bool     `json:"model_served"`
	JSONSchema  probe    `json:"json_schema"`
	Tools       probe    `json:"tools"`
	Error       string   `json:"error,omitempty"`
}

// probe is the outcome of one capability check.
type probe struct {
	OK        bool   `json:"ok"`
	Detail    string `json:"detail"`
	LatencyMS int64  `json:"latency_ms"`
}

func newDoctorCmd(io *IOStreams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the model endpoint: reachable, which models it serves, json_schema and tool support",
		Long: `doctor checks the configured endpoint the way a run would use it: GET /models
(reachable? which models? is llm.model among them?), one strict json_schema call
(is the answer valid without repair?) and one tool call (does the server return
tool_calls?). Exit 0 when the endpoint can run simulations, 3 when it cannot.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig(cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			ccfg, err := cfg.clientConfig()
			if err != nil {
				return err
			}
			ccfg.RepairAttempts = 0 // a probe wants the first answer as it is
			client, err := llm.New(ccfg)
			if err != nil {
				return usageError(err)
			}
			rep := runDoctor(cmd.Context(), client, llm.RedactURL(ccfg.BaseURL), cfg.params(cfg.Phases.Resolution.PhaseConfig))
			if ex := g.exporter(); ex != nil {
				if err := ex.Write(io, rep); err != nil {
					return err
				}
			} else {
				writeDoctor(io, rep)
			}
			if !rep.Reachable || !rep.JSONSchema.OK {
				return &exitError{code: ExitModel, err: errors.New("the endpoint cannot run simulations: " + rep.problem())}
			}
			return nil
		},
	}
	addLLMFlags(cmd)
	return cmd
}

func runDoctor(ctx context.Context, client *llm.Client, endpoint string, params llm.Params) *doctorReport {
	rep := &doctorReport{Endpoint: endpoint, Model: params.Model}
	models, err := client.Models(ctx)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Reachable, rep.Models = true, models
	// Ollama lists "name:latest" for a model created as "name".
	rep.ModelServed = slices.Contains(models, params.Model) || slices.Contains(models, params.Model+":latest")
	rep.JSONSchema = probeJSONSchema(ctx, client, params)
	rep.Tools = probeTools(ctx, client, params)
	return rep
}

// doctorSchema is a small strict schema with an enum, an integer and a
// bounded string: a server that enforces it answers validly at once.
var doctorSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string","enum":["yes","no"]},"count":{"type":"integer"},"note":{"type":"string","maxLength":40}},"required":["answer","count","note"],"additionalProperties":false}`)

func probeJSONSchema(ctx context.Context, client *llm.Client, params llm.Params) probe {
	params.MaxTokens = 100
	start := time.Now()
	res := client.Complete(ctx, llm.Request{
		EntityKey: "doctor:json_schema", Phase: "doctor", Params: params,
		System:     "You answer with one JSON object and nothing else.",
		User:       `Answer "yes", count 3, and a short note.`,
		SchemaName: "DoctorProbe", Schema: doctorSchema,
	})
	p := probe{LatencyMS: time.Since(start).Milliseconds()}
	if res.Err != nil {
		p.Detail = res.Err.Error()
		return p
	}
	p.OK = true
	p.Detail = fmt.Sprintf("strict schema answered validly (%d attempt(s), %d completion tokens): %s", res.Attempts, res.Usage.CompletionTokens, res.Output)
	return p
}

func (r *doctorReport) problem() string {
	switch {
	case !r.Reachable:
		return r.Error
	case !r.JSONSchema.OK:
		return "json_schema: " + r.JSONSchema.Detail
	}
	return ""
}

func writeDoctor(io *IOStreams, r *doctorReport) {
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "FAIL"
	}
	fmt.Fprintf(io.Out, "endpoint     %s\n", r.Endpoint)
	if !r.Reachable {
		fmt.Fprintf(io.Out, "%s reachable: %s\n", mark(false), r.Error)
		return
	}
	fmt.Fprintf(io.Out, "%s reachable: GET /models lists %d model(s): %v\n", mark(true), len(r.Models), r.Models)
	if r.ModelServed {
		fmt.Fprintf(io.Out, "%s model %q is served\n", mark(true), r.Model)
	} else {
		fmt.Fprintf(io.Out, "warn model %q is not listed (set llm.model / ARBITER_LLM_MODEL / --model to one of the above)\n", r.Model)
	}
	fmt.Fprintf(io.Out, "%s json_schema: %s (%dms)\n", mark(r.JSONSchema.OK), r.JSONSchema.Detail, r.JSONSchema.LatencyMS)
	fmt.Fprintf(io.Out, "%s tools: %s (%dms)\n", mark(r.Tools.OK), r.Tools.Detail, r.Tools.LatencyMS)
}

// doctorTool is the probe's tool: one required enum argument.
var doctorTool = llm.Tool{
	Name:        "report_weather",
	Description: "Report the weather of a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Oslo"]}},"required":["city"],"additionalProperties":false}`),
}

// probeTools asks for a tool call natively, then, if none came, with the
// call's shape forced by a json_schema (what small local models need).
func probeTools(ctx context.Context, client *llm.Client, params llm.Params) probe {
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
			return probe{OK: true, LatencyMS: time.Since(start).Milliseconds(),
				Detail: fmt.Sprintf("tool_calls returned %s: %s(%s)", how, res.Calls[0].Name, res.Calls[0].Arguments)}
		}
	}
	return probe{LatencyMS: time.Since(start).Milliseconds(), Detail: fmt.Sprint(notes)}
}
