package main

// The kinds of simulation this arbiter plays: each registers itself with
// the session layer from its package's init (session.Register), as
// database/sql drivers do.
import (
	_ "github.com/arbiter-sim/arbiter/games/chronicle"
	_ "github.com/arbiter-sim/arbiter/games/conquest"
	_ "github.com/arbiter-sim/arbiter/games/duel"
	_ "github.com/arbiter-sim/arbiter/phases"
)
