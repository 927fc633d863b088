package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

func newValidateCmd(io *IOStreams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate <simulation-dir>",
		Short: "Check a simulation's files and prompt templates; list every problem",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			problems := world.Lint(dir)
			var sim *world.Simulation
			if len(problems) == 0 {
				// Lint found nothing, so Load succeeds; it is read once more
				// only to check what the kind adds.
				var err error
				if sim, err = world.Load(dir); err != nil {
					problems = append(problems, err)
				} else {
					problems = append(problems, lintKind(sim, dir)...)
				}
			}
			if g.json {
				msgs := make([]string, len(problems))
				for i, p := range problems {
					msgs[i] = p.Error()
				}
				if err := writeJSON(io, map[string]any{"ok": len(problems) == 0, "problems": msgs}); err != nil {
					return err
				}
			} else {
				for _, p := range problems {
					fmt.Fprintln(io.Out, p)
				}
			}
			if len(problems) > 0 {
				return usageErrorf("%s: %d problem(s)", dir, len(problems))
			}
			if !g.json {
				if sim.Kind == world.KindNarrative {
					fmt.Fprintf(io.Out, "ok: %s (%d characters, %d locations)\n", sim.ID, len(sim.Characters), len(sim.Locations))
				} else {
					fmt.Fprintf(io.Out, "ok: %s (%s)\n", sim.ID, sim.Kind)
				}
			}
			return nil
		},
	}
}

// lintKind checks what the simulation's kind adds to the common files: the
// prompt templates of a narrative, the saved game of a chronicle.
func lintKind(sim *world.Simulation, dir string) []error {
	switch sim.Kind {
	case world.KindNarrative:
		pr, err := prompts.New(dir)
		if err != nil {
			return []error{err}
		}
		return lintPrompts(sim, pr)
	case world.KindChronicle:
		if _, err := chronicle.Open(dir); err != nil {
			return []error{err}
		}
	}
	return nil
}

// lintPrompts renders every template for every entity of the authored state,
// so a missing key or a broken override shows before a run spends tokens.
func lintPrompts(sim *world.Simulation, pr *prompts.Renderer) []error {
	st := sim.InitialState()
	var errs []error
	for _, c := range sim.Characters {
		if _, _, err := renderIntention(pr, sim, st, c.ID); err != nil {
			errs = append(errs, err)
			break
		}
	}
	intentions := map[string]string{}
	for id, cs := range st.Characters {
		intentions[id] = cs.ExternalIntent
	}
	for _, l := range sim.Locations {
		if _, _, err := renderResolution(pr, sim, st, l.ID, intentions); err != nil {
			errs = append(errs, err)
			break
		}
	}
	return errs
}

func renderIntention(pr *prompts.Renderer, sim *world.Simulation, st *world.State, id string) (system, user string, err error) {
	data, err := prompts.NewIntentionData(sim, st, id)
	if err != nil {
		return "", "", err
	}
	return renderPair(pr, phases.IntentionSystemTemplate, phases.IntentionUserTemplate, data)
}

func renderResolution(pr *prompts.Renderer, sim *world.Simulation, st *world.State, loc string, intentions map[string]string) (system, user string, err error) {
	data, err := prompts.NewResolutionData(sim, st, loc, phases.IntentionsAt(intentions, st.CharactersAt(loc)))
	if err != nil {
		return "", "", err
	}
	return renderPair(pr, phases.ResolutionSystemTemplate, phases.ResolutionUserTemplate, data)
}

func renderPair(pr *prompts.Renderer, systemName, userName string, data any) (string, string, error) {
	system, err1 := pr.Render(systemName, data)
	user, err2 := pr.Render(userName, data)
	return system, user, errors.Join(err1, err2)
}
