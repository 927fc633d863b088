package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/arbiter-sim/arbiter/world"
)

// LastTick returns the last committed tick, 0 when none has been.
func (s *Store) LastTick(ctx context.Context) (int, error) {
	var last int
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(tick), 0) FROM ticks").Scan(&last); err != nil {
		return 0, fmt.Errorf("read last tick: %w", err)
	}
	return last, nil
}

// State returns the world state committed at tick. A tick that was not
// committed, tick 0 included (the authored state, see
// world.Simulation.InitialState), gives an error wrapping ErrNoTick.
func (s *Store) State(ctx context.Context, tick int) (*world.State, error) {
	var data string
	err := s.db.QueryRowContext(ctx, "SELECT state_json FROM ticks WHERE tick = ?", tick).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, ErrNoTick)
	}
	if err != nil {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, err)
	}
	var st world.State
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, err)
	}
	if err := s.loadMemories(ctx, &st); err != nil {
		return nil, fmt.Errorf("read memories up to tick %d: %w", tick, err)
	}
	return st.Clone(), nil // non-nil maps and memories even if the JSON had nulls
}

// loadMemories fills every character's memory with its entries of ticks
// 1..st.Tick, in order.
func (s *Store) loadMemories(ctx context.Context, st *world.State) error {
	rows, err := s.db.QueryContext(ctx,
		"SELECT character_id, tick, entry FROM memories WHERE tick <= ? ORDER BY tick, character_id, seq", st.Tick)
	if err != nil {
		return err
	}
	defer rows.Close()
	for id, cs := range st.Characters {
		cs.Memory = nil
		st.Characters[id] = cs
	}
	for rows.Next() {
		var (
			id string
			m  world.MemoryEntry
		)
		if err := rows.Scan(&id, &m.Tick, &m.Entry); err != nil {
			return err
		}
		if cs, ok := st.Characters[id]; ok {
			cs.Memory = append(cs.Memory, m)
			st.Characters[id] = cs
		}
	}
	return rows.Err()
}

// History returns, for every entity key, its last depth exchanges, oldest
// first. depth <= 0 gives an empty map.
func (s *Store) History(ctx context.Context, depth int) (map[string][]HistoryRecord, error) {
	out := make(map[string][]HistoryRecord)
	if depth <= 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT entity_key, user, assistant FROM (
			SELECT entity_key, seq, user, assistant,
				ROW_NUMBER() OVER (PARTITION BY entity_key ORDER BY seq DESC) AS newest
			FROM history)
		WHERE newest <= ?
		ORDER BY entity_key, seq`, depth)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h HistoryRecord
		if err := rows.Scan(&h.EntityKey, &h.User, &h.Assistant); err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		out[h.EntityKey] = append(out[h.EntityKey], h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return out, nil
}

// Events returns the event lines of ticks fromTick to toTick, both included,
// in the order they were emitted.
func (s *Store) Events(ctx context.Context, fromTick, toTick int) ([]Event, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT tick, seq, line FROM events WHERE tick BETWEEN ? AND ? ORDER BY tick, seq", fromTick, toTick)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.Tick, &e.Seq, &e.Line); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return events, nil
}

// Calls returns the model calls of one tick in the order they were recorded.
func (s *Store) Calls(ctx context.Context, tick int) ([]CallRecord, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT id, tick, phase, entity_key, request_json, raw_response, parsed_output, latency_ms,
			prompt_tokens, completion_tokens, cached_tokens, attempts, repairs, error_kind, error, fallback
		FROM calls WHERE tick = ? ORDER BY id`, tick)
	if err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	defer rows.Close()
	var calls []CallRecord
	for rows.Next() {
		var c CallRecord
		if err := rows.Scan(&c.ID, &c.Tick, &c.Phase, &c.EntityKey, &c.Request, &c.Raw, &c.Output, &c.LatencyMS,
			&c.PromptTokens, &c.CompletionTokens, &c.CachedTokens, &c.Attempts, &c.Repairs, &c.ErrorKind, &c.Error, &c.Fallback); err != nil {
			return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
		}
		calls = append(calls, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	return calls, nil
}
