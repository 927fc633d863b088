package report_test

// The kinds the tests open register themselves with the session layer, as
// in the CLI.
import (
	_ "github.com/arbiter-sim/arbiter/games/chronicle"
	_ "github.com/arbiter-sim/arbiter/games/conquest"
	_ "github.com/arbiter-sim/arbiter/games/duel"
	_ "github.com/arbiter-sim/arbiter/phases"
)
