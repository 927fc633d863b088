package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

func newDoctorCmd(io *IOStreams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the model endpoint: reachable, which models it serves, the model's context, json_schema and tool support",
		Long: `doctor checks the configured endpoint the way a run would use it: GET /models
(reachable? which models? is llm.model among them?), the model's context in
tokens (llm.context_tokens, else what the server says: Ollama's /api/show), one
strict json_schema call (is the answer valid without repair?) and one tool call
(does the server return tool_calls?). Exit 0 when the endpoint can run
simulations, 3 when it cannot, 2 when the configuration names no endpoint.
With --json, stdout is one JSON document whatever the outcome: "ok", the
"problems" that make it fail, "warnings", and what each check found. On a
terminal, stderr shows what each check is waiting for.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := runDoctor(cmd, io, g)
			if ex := g.exporter(); ex != nil {
				// One document whatever the outcome; the exit code says pass or fail.
				if werr := ex.Write(io, newDoctorVerdict(rep, err)); werr != nil && err == nil {
					err = werr
				}
			} else if rep != nil {
				writeDoctor(io, rep)
			}
			return err
		},
	}
	addLLMFlags(cmd)
	return cmd
}

// runDoctor probes the configured endpoint: the report, and the error
// that sets the exit code (a config problem, or an endpoint that cannot
// run simulations, whose report is returned too).
func runDoctor(cmd *cobra.Command, io *IOStreams, g *globals) (*session.DoctorReport, error) {
	cfg, err := g.loadConfig(cmd.Flags(), llmFlags)
	if err != nil {
		return nil, err
	}
	e, err := cfg.clientConfig()
	if err != nil {
		return nil, err
	}
	var step func(string)
	if io.ErrTTY {
		step = func(what string) {
			writeControl(io.ErrOut, "\r\033[K")
			fmt.Fprintf(io.ErrOut, "doctor: waiting for %s …", escapedLine(what))
		}
		defer writeControl(io.ErrOut, "\r\033[K")
	}
	rep, err := session.Doctor(cmd.Context(), e, cfg.params(cfg.longestPhase()), step)
	if err != nil {
		return nil, err
	}
	if !rep.Reachable || !rep.JSONSchema.OK {
		return rep, &exitError{code: ExitModel, err: errors.New("the endpoint cannot run simulations: " + rep.Problem())}
	}
	return rep, nil
}

// doctorVerdict is doctor's --json document: the verdict, the problems
// that make it fail and the warnings, then the report's fields (none when
// the configuration stopped doctor before a probe).
type doctorVerdict struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings"`
	*session.DoctorReport
}

func newDoctorVerdict(rep *session.DoctorReport, err error) doctorVerdict {
	v := doctorVerdict{OK: err == nil, Problems: []string{}, Warnings: []string{}, DoctorReport: rep}
	switch {
	case rep == nil && err != nil:
		v.Problems = append(v.Problems, err.Error())
	case rep != nil && err != nil:
		v.Problems = append(v.Problems, rep.Problem())
	}
	if rep == nil || !rep.Reachable {
		return v
	}
	if !rep.ModelServed {
		v.Warnings = append(v.Warnings, fmt.Sprintf("model %q is not listed by GET /models", rep.Model))
	}
	if rep.Context.Tokens == 0 {
		v.Warnings = append(v.Warnings, "context unknown: "+rep.ContextError)
	}
	if !rep.Tools.OK {
		v.Warnings = append(v.Warnings, "tools: "+rep.Tools.Detail)
	}
	return v
}

func writeDoctor(io *IOStreams, r *session.DoctorReport) {
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
	if r.Context.Tokens > 0 {
		fmt.Fprintf(io.Out, "ok   context: %d tokens (%s); a prompt that fills it is cut by the server, and warned about\n", r.Context.Tokens, r.Context.Source)
	} else {
		fmt.Fprintf(io.Out, "info context: unknown (%s); set llm.context_tokens to the model's context so that truncated prompts are found\n", r.ContextError)
	}
	fmt.Fprintf(io.Out, "%s json_schema: %s (%dms)\n", mark(r.JSONSchema.OK), r.JSONSchema.Detail, r.JSONSchema.LatencyMS)
	fmt.Fprintf(io.Out, "%s tools: %s (%dms)\n", mark(r.Tools.OK), r.Tools.Detail, r.Tools.LatencyMS)
}
