package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// usageColumns sums a set of calls into the fields of Usage, in order.
func (s *Store) usageColumns() string {
	return `COUNT(*),
	COALESCE(SUM(error <> '' OR error_kind <> ''), 0),
	COALESCE(SUM(repairs), 0),
	COALESCE(SUM(prompt_tokens), 0),
	COALESCE(SUM(completion_tokens), 0),
	COALESCE(SUM(cached_tokens), 0),
	COALESCE(SUM(latency_ms), 0), ` + s.batchSums()
}

// batchSums sums the batch token columns, the last two fields of Usage:
// 0 in a database older than version 7 read as it is, which has none.
func (s *Store) batchSums() string {
	if s.live {
		return "0, 0"
	}
	return "COALESCE(SUM(batch_prompt_tokens), 0), COALESCE(SUM(batch_completion_tokens), 0)"
}

// truncatedColumn is calls' prompt_truncated: 0 in a database older than
// version 9 read as it is, which has none.
func (s *Store) truncatedColumn() string {
	if s.untruncated {
		return "0"
	}
	return "prompt_truncated"
}

// add counts call c in u.
func (u *Usage) add(c CallRecord) {
	u.Calls++
	if c.Failed() {
		u.FailedCalls++
	}
	u.Repairs += c.Repairs
	u.PromptTokens += c.PromptTokens
	u.CompletionTokens += c.CompletionTokens
	u.CachedTokens += c.CachedTokens
	u.LatencyMS += c.LatencyMS
	u.BatchPromptTokens += c.BatchPromptTokens
	u.BatchCompletionTokens += c.BatchCompletionTokens
}

func (u *Usage) scanArgs() []any {
	return []any{&u.Calls, &u.FailedCalls, &u.Repairs, &u.PromptTokens, &u.CompletionTokens, &u.CachedTokens, &u.LatencyMS,
		&u.BatchPromptTokens, &u.BatchCompletionTokens}
}

// Summary returns the figures of the whole run so far.
func (s *Store) Summary(ctx context.Context) (_ Summary, err error) {
	defer markDamaged(&err)
	sum, err := s.summary(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("read summary: %w", err)
	}
	return sum, nil
}

// RecordStop stores why a run stopped short, in a transaction of its own.
func (s *Store) RecordStop(ctx context.Context, st Stop) (err error) {
	defer markDamaged(&err)
	lines := make([]string, len(st.Events))
	for i, l := range st.Events {
		lines[i] = s.clean(l)
	}
	events, err := json.Marshal(lines)
	if err != nil {
		return err
	}
	if st.StoppedAt.IsZero() {
		st.StoppedAt = s.now()
	}
	_, err = s.db.ExecContext(ctx, "INSERT INTO stops (tick, reason, error, events, stopped_at) VALUES (?, ?, ?, ?, ?)",
		st.Tick, st.Reason, s.clean(st.Error), string(events), st.StoppedAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("record stop at tick %d: %w", st.Tick, err)
	}
	return nil
}

// lastStop returns the latest stop when it came after the last commit.
func (s *Store) lastStop(ctx context.Context, lastTick int) (*Stop, error) {
	var (
		st         Stop
		events, at string
	)
	err := s.db.QueryRowContext(ctx, "SELECT tick, reason, error, events, stopped_at FROM stops ORDER BY id DESC LIMIT 1").
		Scan(&st.Tick, &st.Reason, &st.Error, &events, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if st.Tick <= lastTick {
		return nil, nil // a later run got past it
	}
	if err := json.Unmarshal([]byte(events), &st.Events); err != nil {
		return nil, err
	}
	if st.StoppedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return nil, err
	}
	return &st, nil
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

	if err := s.db.QueryRowContext(ctx, "SELECT "+s.totalsColumns()+" FROM totals").Scan(sum.Total.scanArgs()...); err != nil {
		return sum, err
	}
	err = s.db.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT n FROM counts WHERE name = 'fallbacks'), 0),
		COALESCE((SELECT n FROM counts WHERE name = 'apply_errors'), 0),
		COALESCE((SELECT n FROM counts WHERE name = 'truncated_prompts'), 0)`).Scan(&sum.Fallbacks, &sum.ApplyErrors, &sum.TruncatedPrompts)
	if err != nil {
		return sum, err
	}
	if sum.ByPhase, err = s.groupUsage(ctx, "phase"); err != nil {
		return sum, err
	}
	if sum.ByEntity, err = s.groupUsage(ctx, "entity_key"); err != nil {
		return sum, err
	}
	if sum.ByEndpoint, err = s.endpointUsage(ctx); err != nil {
		return sum, err
	}
	if sum.LastStop, err = s.lastStop(ctx, sum.LastTick); err != nil {
		return sum, err
	}
	if sum.TextsDroppedThrough, err = droppedThrough(ctx, s.db); err != nil {
		return sum, err
	}
	return sum, nil
}

// totalsColumns sums rows of totals (or endpoint_totals) into the fields
// of Usage, in order.
func (s *Store) totalsColumns() string {
	return `COALESCE(SUM(calls), 0),
	COALESCE(SUM(failed), 0),
	COALESCE(SUM(repairs), 0),
	COALESCE(SUM(prompt_tokens), 0),
	COALESCE(SUM(completion_tokens), 0),
	COALESCE(SUM(cached_tokens), 0),
	COALESCE(SUM(latency_ms), 0), ` + s.batchSums()
}

// groupUsage sums the running totals per value of column, which is a
// trusted column name, never user input: a row per phase or entity, however
// many ticks the run has.
func (s *Store) groupUsage(ctx context.Context, column string) ([]GroupUsage, error) {
	return s.groups(ctx, "SELECT "+column+", "+s.totalsColumns()+" FROM totals GROUP BY "+column+" ORDER BY "+column)
}

// groups reads the rows of query, a key and the usage summed for it.
func (s *Store) groups(ctx context.Context, query string) ([]GroupUsage, error) {
	groups := []GroupUsage{}
	err := s.scan(ctx, func(scan func(...any) error) error {
		var g GroupUsage
		if err := scan(append([]any{&g.Key}, g.Usage.scanArgs()...)...); err != nil {
			return err
		}
		groups = append(groups, g)
		return nil
	}, query)
	return groups, err
}

// Totals returns the running totals of the run's calls per phase, entity
// and model (Tick is 0): what resume counts as spent, read in time that
// does not grow with the number of ticks.
func (s *Store) Totals(ctx context.Context) (_ []CallUsage, err error) {
	defer markDamaged(&err)
	out := []CallUsage{}
	err = s.scan(ctx, func(scan func(...any) error) error {
		var u CallUsage
		if err := scan(append([]any{&u.Phase, &u.EntityKey, &u.Model}, u.Usage.scanArgs()...)...); err != nil {
			return err
		}
		out = append(out, u)
		return nil
	}, "SELECT phase, entity_key, model, "+s.totalsColumns()+" FROM totals GROUP BY phase, entity_key, model ORDER BY phase, entity_key, model")
	if err != nil {
		return nil, fmt.Errorf("read totals: %w", err)
	}
	return out, nil
}

// endpointUsage sums the calls per endpoint that answered them, and the
// attempts each failed; none in a database older than version 6 read as
// it is, and no failures in one older than version 8.
func (s *Store) endpointUsage(ctx context.Context) ([]GroupUsage, error) {
	var table, failures int
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'endpoint_totals'),
		(SELECT COUNT(*) FROM pragma_table_info('endpoint_totals') WHERE name = 'endpoint_failures')`).Scan(&table, &failures)
	if err != nil || table == 0 {
		return nil, err
	}
	sum := "0"
	if failures > 0 {
		sum = "COALESCE(SUM(endpoint_failures), 0)"
	}
	groups := []GroupUsage{}
	err = s.scan(ctx, func(scan func(...any) error) error {
		var g GroupUsage
		if err := scan(append([]any{&g.Key}, append(g.Usage.scanArgs(), &g.EndpointFailures)...)...); err != nil {
			return err
		}
		groups = append(groups, g)
		return nil
	}, "SELECT endpoint, "+s.totalsColumns()+", "+sum+" FROM endpoint_totals GROUP BY endpoint ORDER BY endpoint")
	if len(groups) == 0 {
		return nil, err // none answered or failed yet: by_endpoint is left out
	}
	return groups, err
}
