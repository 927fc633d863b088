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
simulations, 3 when it cannot.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig(cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			e, err := cfg.clientConfig()
			if err != nil {
				return err
			}
			rep, err := session.Doctor(cmd.Context(), e, cfg.params(cfg.longestPhase()))
			if err != nil {
				return err
			}
			if ex := g.exporter(); ex != nil {
				if err := ex.Write(io, rep); err != nil {
					return err
				}
			} else {
				writeDoctor(io, rep)
			}
			if !rep.Reachable || !rep.JSONSchema.OK {
				return &exitError{code: ExitModel, err: errors.New("the endpoint cannot run simulations: " + rep.Problem())}
			}
			return nil
		},
	}
	addLLMFlags(cmd)
	return cmd
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
