package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ApplyErrorCounts returns how many apply errors (skipped updates, a
// game's order errors or refused choices) each character or player had
// over every committed tick.
func (s *Store) ApplyErrorCounts(ctx context.Context) (_ map[string]int, err error) {
	defer markDamaged(&err)
	out, err := countsBy(ctx, s.db, "SELECT character_id, COUNT(*) FROM apply_errors GROUP BY character_id")
	if err != nil {
		return nil, fmt.Errorf("count apply errors: %w", err)
	}
	return out, nil
}

// countsBy reads the rows of query, each a key and a number, into a map.
func countsBy(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			return nil, err
		}
		out[key] = n
	}
	return out, rows.Err()
}
