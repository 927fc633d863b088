package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/games/conquest"
)

// CheckOrdersOptions are the inputs of `arbiter conquest check-orders`.
type CheckOrdersOptions struct {
	IO     *IOStreams
	Game   string // path of the game state JSON
	Player string
}

func newConquestCmd(io *IOStreams, _ *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conquest",
		Short: "Tools for conquest games (seed 000)",
	}
	cmd.AddCommand(newCheckOrdersCmd(io, nil))
	return cmd
}

func newCheckOrdersCmd(io *IOStreams, runF func(context.Context, *CheckOrdersOptions) error) *cobra.Command {
	opts := &CheckOrdersOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "check-orders --game FILE.json --player p1 < orders.json",
		Short: "Validate an order list (JSON array of {from,to,ships} on stdin) as propose_orders does",
		Long: `check-orders reads a game state (the JSON that arbiter export writes for a
conquest; a file with turn, players and stars is enough) and an order list on
stdin, and prints propose_orders' answer: {"ok":true} or {"ok":false,"errors":[...]},
each error starting "Order {index}: ". It exits 0 either way; a file or an
order list it cannot read is a usage error (exit 2).`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Game == "" || opts.Player == "" {
				return usageErrorf("conquest check-orders: --game and --player are required (see arbiter conquest check-orders --help)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCheckOrders(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Game, "game", "", "game state JSON (arbiter export --format json of a conquest)")
	cmd.Flags().StringVar(&opts.Player, "player", "", "the player whose orders these are, e.g. p1")
	return cmd
}

// maxGameFile bounds the game state check-orders reads.
const maxGameFile = 64 << 20

func runCheckOrders(opts *CheckOrdersOptions) error {
	if fi, err := os.Stat(opts.Game); err != nil {
		return usageErrorf("--game: %v", err)
	} else if !fi.Mode().IsRegular() || fi.Size() > maxGameFile {
		return usageErrorf("--game %s: want a regular file of at most %d MiB (a game state JSON)", opts.Game, maxGameFile>>20)
	}
	data, err := os.ReadFile(opts.Game)
	if err != nil {
		return usageErrorf("--game: %v", err)
	}
	st, err := conquest.ReadState(data)
	if err != nil {
		return usageErrorf("--game %s: %v", opts.Game, err)
	}
	if !st.HasPlayer(opts.Player) {
		return usageErrorf("--player %s: not a player of %s (players: %v)", opts.Player, opts.Game, st.Players)
	}
	in, err := io.ReadAll(io.LimitReader(opts.IO.In, maxGameFile))
	if err != nil {
		return fmt.Errorf("read orders from stdin: %w", err)
	}
	orders, err := conquest.ParseOrders(in)
	if err != nil {
		return usageErrorf("stdin: %v", err)
	}
	return exportJSON.Write(opts.IO, conquest.Propose(st, opts.Player, orders))
}
