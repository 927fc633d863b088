package conquest

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/arbiter-sim/arbiter/session"
)

// commands are `arbiter conquest check-orders`.
var commands = session.Tools{
	Short: "Tools for conquest games: orders checked as the game checks them",
	List: []session.Tool{{
		Name: "check-orders", Usage: "--game FILE.json --player p1 < orders.json",
		Short: "Validate an order list (JSON array of {from,to,ships} on stdin) as propose_orders does",
		Long: `check-orders reads a game state (the JSON that arbiter export writes for a
conquest; a file with turn, players and stars is enough) and an order list on
stdin, and prints propose_orders' answer: {"ok":true} or {"ok":false,"errors":[...]},
each error starting "Order {index}: ". It exits 0 either way; a file or an
order list it cannot read is a usage error (exit 2).`,
		Flags: []session.ToolFlag{
			{Name: "game", Usage: "game state JSON (arbiter export --format json of a conquest)"},
			{Name: "player", Usage: "the player whose orders these are, e.g. p1"},
		},
		Run: runCheckOrders,
	}},
}

// maxGameFile bounds the game state check-orders reads.
const maxGameFile = 64 << 20

// runCheckOrders answers the order list on stdin as propose_orders would, for
// the player of --player in the game of --game.
func runCheckOrders(_ context.Context, call session.ToolCall) (*session.ToolOutput, error) {
	game, player := call.Flags["game"], call.Flags["player"]
	if game == "" || player == "" {
		return nil, inputErrorf("conquest check-orders: --game and --player are required (see arbiter conquest check-orders --help)")
	}
	st, err := readGameFile(game)
	if err != nil {
		return nil, err
	}
	if !st.HasPlayer(player) {
		return nil, inputErrorf("--player %s: not a player of %s (players: %v)", player, game, st.Players)
	}
	in, err := io.ReadAll(io.LimitReader(call.In, maxGameFile+1))
	if err != nil {
		return nil, fmt.Errorf("read orders from stdin: %w", err)
	}
	if len(in) > maxGameFile {
		// Cut, the list would read as broken JSON, or worse as a shorter list.
		return nil, inputErrorf("stdin: more than %d MiB of orders; check-orders reads at most that", maxGameFile>>20)
	}
	orders, err := ParseOrders(in)
	if err != nil {
		return nil, inputErrorf("stdin: %v", err)
	}
	return &session.ToolOutput{Data: Propose(st, player, orders)}, nil
}

// readGameFile reads the game state of --game: a regular file of at most
// maxGameFile bytes.
func readGameFile(path string) (*State, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, inputErrorf("--game: %v", err)
	} else if !fi.Mode().IsRegular() || fi.Size() > maxGameFile {
		return nil, inputErrorf("--game %s: want a regular file of at most %d MiB (a game state JSON)", path, maxGameFile>>20)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, inputErrorf("--game: %v", err)
	}
	st, err := ReadState(data)
	if err != nil {
		return nil, inputErrorf("--game %s: %v", path, err)
	}
	return st, nil
}

func inputErrorf(format string, args ...any) error {
	return &session.InputError{Err: fmt.Errorf(format, args...)}
}
