// Package duel is the duel kind of simulation (seed 003): two players roll
// dice for lines, build ships whose powers are data (ships.yaml) and fight
// until one has no health left or the turn limit is reached. The engine
// package plays the phases; this package holds the catalog, the rules of
// victory, the seats (bot, model, person) and the runner's seam. The rules
// are written out in RULES.md.
package duel
