package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/world"
)

func newPromptsCmd(io *IOStreams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "Work with prompt templates",
	}
	var (
		phase, entity, part string
		tick                int
	)
	render := &cobra.Command{
		Use:   "render <simulation-dir> --phase intention|resolution --entity ID",
		Short: "Render the prompts a phase would send for one character or location",
		Long: `Render the system and user prompts that a phase would send for one entity
(a character for intention, a location for resolution) at the latest committed
tick, or --tick N. The simulation's prompts/ overrides apply. For resolution, the
characters' current external_intent stands in for this tick's intentions.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			sim, pr, err := openWorld(dir)
			if err != nil {
				return err
			}
			if part != "system" && part != "user" && part != "both" {
				return usageErrorf("--part %q: must be system, user or both", part)
			}
			st, err := stateAt(cmd.Context(), sim, dir, tick, cmd.Flags().Changed("tick"))
			if err != nil {
				return err
			}

			var system, user string
			switch phase {
			case phases.PhaseIntention:
				if sim.Character(entity) == nil {
					return usageErrorf("--entity %q: no such character in %s (characters: %s)", entity, sim.ID, joinIDs(sim.Characters, func(c *world.Character) string { return c.ID }))
				}
				system, user, err = renderIntention(pr, sim, st, entity)
			case phases.PhaseResolution:
				if sim.Location(entity) == nil {
					return usageErrorf("--entity %q: no such location in %s (locations: %s)", entity, sim.ID, joinIDs(sim.Locations, func(l *world.Location) string { return l.ID }))
				}
				intentions := map[string]string{}
				for id, cs := range st.Characters {
					intentions[id] = cs.ExternalIntent
				}
				system, user, err = renderResolution(pr, sim, st, entity, intentions)
			default:
				return usageErrorf("--phase %q: must be intention or resolution", phase)
			}
			if err != nil {
				return usageError(err)
			}
			if g.json {
				return writeJSON(io, map[string]string{"system": system, "user": user})
			}
			if part != "user" {
				if part == "both" {
					fmt.Fprintln(io.Out, "===== system =====")
				}
				fmt.Fprintln(io.Out, system)
			}
			if part != "system" {
				if part == "both" {
					fmt.Fprintln(io.Out, "===== user =====")
				}
				fmt.Fprintln(io.Out, user)
			}
			return nil
		},
	}
	render.Flags().StringVar(&phase, "phase", "", "intention or resolution")
	render.Flags().StringVar(&entity, "entity", "", "character id (intention) or location id (resolution)")
	render.Flags().StringVar(&part, "part", "both", "system, user or both")
	render.Flags().IntVar(&tick, "tick", 0, "state to render from (default: the latest committed)")
	_ = render.MarkFlagRequired("phase")
	_ = render.MarkFlagRequired("entity")
	cmd.AddCommand(render)
	return cmd
}

// joinIDs lists the ids of items for an error message, e.g. "hall, garden".
func joinIDs[T any](items []T, id func(T) string) string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = id(it)
	}
	return strings.Join(ids, ", ")
}
