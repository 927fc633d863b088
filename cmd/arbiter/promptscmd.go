package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// RenderOptions are the inputs of `arbiter prompts render`.
type RenderOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
	Phase   string
	Entity  string
	Part    string // system, user, both or all
	Tick    int
	Latest  bool // --tick not given
}

func newPromptsCmd(io *IOStreams, g *globals, runF func(context.Context, *RenderOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "Work with prompt templates: start an override, render a call",
		Long: `Prompt templates decide what each model call says. The defaults are
compiled into arbiter; a simulation overrides any of them with a file of the
same name in its prompts/ folder, and sets the length and the description of
each of its answers' text fields in simulation.yaml (settings.answer), which
the templates and the schema sent beside them both use. prompts/README.md
lists every template and the data each one sees.

Authoring a template, in a loop:
  arbiter prompts init SIM --phase P                 write the defaults into SIM/prompts/ to edit
  arbiter prompts render SIM --phase P --entity E    what a call sends now: messages and schema
  arbiter validate SIM                               every problem at once, and which templates are overridden
  arbiter prompts try SIM --phase P --entity E       send that one call and see the answer; nothing is committed
  arbiter prompts try SIM ... --variant NAME         the same call as a variant of SIM/evals.yaml makes it
  arbiter eval SIM                                   compare template versions on situations from real runs
  arbiter eval SIM --compare 1,latest --html F       two stored evals side by side: before and after an edit

The templates of each kind, by phase:
` + session.TemplateHelp(),
	}
	opts := &RenderOptions{IO: io, Globals: g}
	render := &cobra.Command{
		Use:   "render <simulation-dir> --phase P [--entity ID]",
		Short: "Show what a call of a phase sends: its messages and its schema",
		Long: `Render the call that a phase would make for one entity (the phases and
their entities below) at the tick after the latest committed one, or after
--tick N: the system prompt, the entity's past exchanges as of that tick
(llm.depth of them), the user prompt, and the JSON Schema the answer must
satisfy. The simulation's prompts/ overrides apply.

--part system|user prints only that prompt's text; both prints the two;
all (the default) prints every message and the schema.

The phases of each kind, and whom a call is for (--entity):
` + session.PhaseHelp() + session.Help("prompts render"),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Part {
			case "system", "user", "both", "all":
			default:
				return usageErrorf("--part %q: must be system, user, both or all", opts.Part)
			}
			cfg, err := g.loadConfig(cmd.Flags(), map[string]string{"depth": "llm.depth", "model": "llm.model"})
			if err != nil {
				return err
			}
			opts.Config, opts.Dir, opts.Latest = cfg, args[0], !cmd.Flags().Changed("tick")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRender(cmd.Context(), opts)
		},
	}
	f := render.Flags()
	f.StringVar(&opts.Phase, "phase", "", "the phase of the call: "+strings.Join(session.AllPhases(), ", "))
	f.StringVar(&opts.Entity, "entity", "", "whom the call is for, as its phase says (below)")
	f.StringVar(&opts.Part, "part", "all", "system, user, both or all")
	f.IntVar(&opts.Tick, "tick", 0, "state to render from (default: the latest committed)")
	f.Int("depth", 0, "past exchanges of the entity sent back (llm.depth)")
	f.String("model", "", "model for every phase without its own (llm.model), as arbiter run --model sets it")
	_ = render.MarkFlagRequired("phase")
	cmd.AddCommand(render, newTryCmd(io, g, nil))
	cmd.AddCommand(newPromptsInitCmd(io, g, nil))
	return cmd
}

func runRender(ctx context.Context, opts *RenderOptions) error {
	set, err := opts.Config.settings(false, "")
	if err != nil {
		return err
	}
	s, err := session.Open(ctx, opts.Dir, set, session.ReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	req, err := s.Request(ctx, opts.Phase, opts.Entity, opts.Tick, opts.Latest)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, req)
	}
	out := opts.IO.Out
	system, user := "", ""
	if len(req.Messages) > 0 {
		if req.Messages[0].Role == "system" {
			system = req.Messages[0].Content
		}
		user = req.Messages[len(req.Messages)-1].Content
	}
	switch opts.Part {
	case "system":
		fmt.Fprintln(out, system)
	case "user":
		fmt.Fprintln(out, user)
	case "both":
		fmt.Fprintf(out, "===== system =====\n%s\n===== user =====\n%s\n", system, user)
	default:
		fmt.Fprintf(out, "# %s call %s at tick %d (model %s, max_tokens %d)\n", req.Phase, req.EntityKey, req.Tick, req.Model, req.MaxTokens)
		for i, m := range req.Messages {
			label := m.Role
			switch {
			case i == len(req.Messages)-1:
			case m.Role == "user" || m.Role == "assistant":
				label += " (earlier)"
			}
			fmt.Fprintf(out, "===== %s =====\n%s\n", label, m.Content)
		}
		if req.SchemaName != "" {
			var schema bytes.Buffer
			if err := json.Indent(&schema, req.Schema, "", "  "); err != nil {
				return err
			}
			fmt.Fprintf(out, "===== schema %s (strict) =====\n%s\n", req.SchemaName, schema.String())
		}
	}
	return nil
}
