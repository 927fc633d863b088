package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// LastTick returns the last committed tick, 0 when none has been.
func (s *Store) LastTick(ctx context.Context) (int, error) {
	var last int
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(tick), 0) FROM ticks").Scan(&last); err != nil {
		return 0, fmt.Errorf("read last tick: %w", err)
	}
	return last, nil
}

// State returns the state JSON committed at tick, as the kind wrote it. A
// tick that was not committed, tick 0 included (the authored state), gives
// an error wrapping ErrNoTick.
func (s *Store) State(ctx context.Context, tick int) (json.RawMessage, error) {
	var data string
	err := s.db.QueryRowContext(ctx, "SELECT state_json FROM ticks WHERE tick = ?", tick).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, ErrNoTick)
	}
	if err != nil {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, err)
	}
	return json.RawMessage(data), nil
}

// Kind returns the simulation kind of the stored ticks, "" before the first.
func (s *Store) Kind(ctx context.Context) (string, error) {
	var kind string
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'kind'").Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read kind: %w", err)
	}
	return kind, nil
}

// Memories returns the memory entries of ticks 1..upTo, in order of tick,
// character and entry: with last > 0 only each character's latest last
// entries (what prompts show), else all of them.
func (s *Store) Memories(ctx context.Context, upTo, last int) ([]MemoryRecord, error) {
	query, args := "SELECT tick, character_id, entry FROM memories WHERE tick <= ? ORDER BY tick, character_id, seq", []any{upTo}
	if last > 0 {
		query = `SELECT tick, character_id, entry FROM (
			SELECT tick, character_id, seq, entry,
				ROW_NUMBER() OVER (PARTITION BY character_id ORDER BY tick DESC, seq DESC) AS newest
			FROM memories WHERE tick <= ?)
		WHERE newest <= ? ORDER BY tick, character_id, seq`
		args = append(args, last)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	defer rows.Close()
	var out []MemoryRecord
	for rows.Next() {
		var m MemoryRecord
		if err := rows.Scan(&m.Tick, &m.CharacterID, &m.Entry); err != nil {
			return nil, fmt.Errorf("read memories: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	return out, nil
}

// Records returns rows 1..n of stream as they stood at tick upTo: for each
// row, its version with the largest tick <= upTo. Rows never written are
// left out; the result is in order of N.
func (s *Store) Records(ctx context.Context, stream string, n, upTo int) ([]Record, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT n, tick, body FROM (
			SELECT n, tick, body, ROW_NUMBER() OVER (PARTITION BY n ORDER BY tick DESC) AS newest
			FROM records WHERE stream = ? AND n <= ? AND tick <= ?)
		WHERE newest = 1 ORDER BY n`, stream, n, upTo)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", stream, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r := Record{Stream: stream}
		var body string
		if err := rows.Scan(&r.N, &r.Tick, &body); err != nil {
			return nil, fmt.Errorf("read %s: %w", stream, err)
		}
		r.Body = json.RawMessage(body)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", stream, err)
	}
	return out, nil
}

// History returns, for every entity key, its last depth exchanges of ticks
// 1..upTo, oldest first: what a call of tick upTo+1 sends back. depth <= 0
// gives an empty map.
func (s *Store) History(ctx context.Context, depth, upTo int) (map[string][]HistoryRecord, error) {
	out := make(map[string][]HistoryRecord)
	if depth <= 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT entity_key, user, assistant, user_ref, assistant_ref FROM (
			SELECT entity_key, seq, user, assistant, user_ref, assistant_ref,
				ROW_NUMBER() OVER (PARTITION BY entity_key ORDER BY seq DESC) AS newest
			FROM history WHERE tick <= ?)
		WHERE newest <= ?
		ORDER BY entity_key, seq`, upTo, depth)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	type stored struct {
		HistoryRecord
		userRef, assistantRef string
	}
	var all []stored
	for rows.Next() {
		var h stored
		if err := rows.Scan(&h.EntityKey, &h.User, &h.Assistant, &h.userRef, &h.assistantRef); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read history: %w", err)
		}
		all = append(all, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	for _, h := range all {
		for _, f := range []struct {
			ref  string
			text *string
		}{{h.userRef, &h.User}, {h.assistantRef, &h.Assistant}} {
			if f.ref == "" {
				continue
			}
			text, err := s.getText(ctx, f.ref)
			if err != nil {
				return nil, fmt.Errorf("read history of %s: %w", h.EntityKey, err)
			}
			*f.text = text
		}
		out[h.EntityKey] = append(out[h.EntityKey], h.HistoryRecord)
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
		SELECT id, tick, phase, entity_key, model, request_json, raw_response, parsed_output, latency_ms,
			prompt_tokens, completion_tokens, cached_tokens, attempts, repairs, error_kind, error, fallback
		FROM calls WHERE tick = ? ORDER BY id`, tick)
	if err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	defer rows.Close()
	var calls []CallRecord
	for rows.Next() {
		var c CallRecord
		if err := rows.Scan(&c.ID, &c.Tick, &c.Phase, &c.EntityKey, &c.Model, &c.Request, &c.Raw, &c.Output, &c.LatencyMS,
			&c.PromptTokens, &c.CompletionTokens, &c.CachedTokens, &c.Attempts, &c.Repairs, &c.ErrorKind, &c.Error, &c.Fallback); err != nil {
			return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
		}
		calls = append(calls, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	rows.Close()
	for i := range calls {
		req, err := s.expandRequest(ctx, calls[i].Request)
		if err != nil {
			return nil, fmt.Errorf("read calls of tick %d: call %d: %w", tick, calls[i].ID, err)
		}
		calls[i].Request = req
	}
	return calls, nil
}
