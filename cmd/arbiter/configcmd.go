package main

import (
	"errors"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

func newConfigCmd(io *IOStreams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the configuration",
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (defaults < OPENAI_* < config.yaml < ARBITER_* < flags), key redacted",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig(cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			shown := cfg.redacted()
			endpoint, err := cfg.endpoint()
			endpoint = session.ShownURL(endpoint)
			if errors.Is(err, ErrNoEndpoint) {
				endpoint = "(none configured: set OPENAI_API_KEY or OPENAI_BASE_URL)"
			}
			if ex := g.exporter(); ex != nil {
				return ex.Write(io, map[string]any{"config": shown, "endpoint": endpoint})
			}
			enc := yaml.NewEncoder(io.Out)
			enc.SetIndent(2)
			if err := enc.Encode(map[string]any{"config": shown, "endpoint": endpoint}); err != nil {
				return err
			}
			return enc.Close()
		},
	}
	addLLMFlags(show)
	cmd.AddCommand(show)
	return cmd
}
