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
		Short: "Print the effective configuration (defaults < OPENAI_* < config.yaml < ARBITER_* < flags), key redacted, and where each value came from",
		Long: `config show prints the effective configuration, the API key redacted, each
key with where its value came from, as git config --show-origin does: a flag
(flag --model), an environment variable (env ARBITER_LLM_MODEL, or
OPENAI_BASE_URL / OPENAI_API_KEY for the endpoint), a line of the config file
(config.yaml:14), or the built-in default. --json gives the same, the origins
under "origins" by key.`,
		Args: exactArgs(0),
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
			origins := configOrigins(cfg, cmd.Flags(), llmFlags)
			if ex := g.exporter(); ex != nil {
				return ex.Write(io, map[string]any{"config": shown, "endpoint": endpoint, "origins": origins})
			}
			annotated, err := withOrigins(shown, origins)
			if err != nil {
				return err
			}
			enc := yaml.NewEncoder(io.Out)
			enc.SetIndent(2)
			if err := enc.Encode(map[string]any{"config": annotated, "endpoint": endpoint}); err != nil {
				return err
			}
			return enc.Close()
		},
	}
	addLLMFlags(show)
	cmd.AddCommand(show)
	return cmd
}
