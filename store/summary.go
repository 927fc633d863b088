package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// usageColumns sums a set of calls into the fields of Usage, in order.
const usageColumns = `COUNT(*),
	COALESCE(SUM(error <> '' OR error_kind <> ''), 0),
	COALESCE(SUM(repairs), 0),
	COALESCE(SUM(prompt_tokens), 0),
	COALESCE(SUM(completion_tokens), 0),
	COALESCE(SUM(cached_tokens), 0),
	COALESCE(SUM(latency_ms), 0)`

func (u *Usage) scanArgs() []any {
	return []any{&u.Calls, &u.FailedCalls, &u.Repairs, &u.PromptTokens, &u.CompletionTokens, &u.CachedTokens, &u.LatencyMS}
}

// Summary returns the figures of the whole run so far.
func (s *Store) Summary(ctx context.Context) (Summary, error) {
	sum, err := s.summary(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("read summary: %w", err)
	}
	return sum, nil
}

func (s *Store) summary(ctx context.Context) (Summary, error) {
	var sum Summary
	var at string
	err := s.db.QueryRowContext(ctx, "SELECT tick, committed_at FROM ticks ORDER BY tick DESC LIMIT 1").Scan(&sum.LastTick, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return sum, err
	default:
		if sum.LastCommittedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return sum, fmt.Errorf("tick %d: committed_at: %w", sum.LastTick, err)
		}
	}

	if err := s.db.QueryRowContext(ctx, "SELECT "+usageColumns+" FROM calls").Scan(sum.Total.scanArgs()...); err != nil {
		return sum, err
	}
	err = s.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM intentions WHERE fallback) + (SELECT COUNT(*) FROM outputs WHERE fallback),
		(SELECT COUNT(*) FROM apply_errors)`).Scan(&sum.Fallbacks, &sum.ApplyErrors)
	if err != nil {
		return sum, err
	}
	if sum.ByPhase, err = s.groupUsage(ctx, "phase"); err != nil {
		return sum, err
	}
	if sum.ByEntity, err = s.groupUsage(ctx, "entity_key"); err != nil {
		return sum, err
	}
	return sum, nil
}

// groupUsage sums the calls per value of column, which is a trusted column
// name, never user input.
func (s *Store) groupUsage(ctx context.Context, column string) ([]GroupUsage, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT "+column+", "+usageColumns+" FROM calls GROUP BY "+column+" ORDER BY "+column)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	groups := []GroupUsage{}
	for rows.Next() {
		var g GroupUsage
		if err := rows.Scan(append([]any{&g.Key}, g.Usage.scanArgs()...)...); err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, rows.Err()
}
