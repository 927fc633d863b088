package session

import (
	"context"
	"fmt"
)

// GameReport is the report part of a game whose Story tells turns: each
// turn's log, the board after it (board draws a turn's state), and each
// of players' errors over the game, with its seat (seat: model, bot or
// person).
func (s *Session) GameReport(ctx context.Context, players []string, seat func(player string) string,
	board func(ctx context.Context, state any) (Board, error)) (*ReportPart, error) {
	story, err := s.Story(ctx, StoryQuery{})
	if err != nil {
		return nil, err
	}
	part := &ReportPart{Unit: "turn"}
	errs := map[string][]TurnError{}
	for _, t := range story.Turns {
		state, err := s.StateAt(ctx, t.Turn, false)
		if err != nil {
			return nil, err
		}
		b, err := board(ctx, state)
		if err != nil {
			return nil, fmt.Errorf("board of turn %d: %w", t.Turn, err)
		}
		part.Turns = append(part.Turns, ReportTurn{N: t.Turn, Lines: t.Lines, Errors: t.Errors, Board: b})
		for _, e := range t.Errors {
			errs[e.Player] = append(errs[e.Player], TurnError{Turn: t.Turn, Error: e.Error})
		}
	}
	for _, p := range players {
		part.Players = append(part.Players, PlayerErrors{Player: p, Seat: seat(p), Errors: errs[p]})
	}
	return part, nil
}
