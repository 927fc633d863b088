// Package conquest is the space strategy game of seed 000: stars, fleets in
// flight, combat, rebellion and production, played by model agents (tool
// calls), people at the terminal and bots. Orders are validated exactly as
// the seed says: over-commitment rejects a player's whole order set; any
// other invalid order is skipped with its error recorded, and the rest
// execute. Nothing a model writes can crash a turn.
//
// The rules are in RULES.md. Every random draw comes from the game's seed,
// kept in the state, so a game replays exactly and a resumed game continues
// the same random sequence. Each turn is one tick of the runner and commits
// whole to state.db.
package conquest
