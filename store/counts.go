package store

import (
	"context"
	"fmt"
)

// ApplyErrorCounts returns how many apply errors (skipped updates, a
// game's order errors or refused choices) each character or player had
// over every committed tick.
func (s *Store) ApplyErrorCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT character_id, COUNT(*) FROM apply_errors GROUP BY character_id")
	if err != nil {
		return nil, fmt.Errorf("count apply errors: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count apply errors: %w", err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count apply errors: %w", err)
	}
	return out, nil
}
