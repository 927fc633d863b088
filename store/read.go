package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// LastTick returns the last committed tick, 0 when none has been.
func (s *Store) LastTick(ctx context.Context) (_ int, err error) {
	defer markDamaged(&err)
	var last int
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(tick), 0) FROM ticks").Scan(&last); err != nil {
		return 0, fmt.Errorf("read last tick: %w", err)
	}
	return last, nil
}

// Kind returns the simulation kind of the stored ticks, "" before the first.
func (s *Store) Kind(ctx context.Context) (_ string, err error) {
	defer markDamaged(&err)
	var kind string
	err = s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'kind'").Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read kind: %w", err)
	}
	return kind, nil
}

// Records returns rows 1..n of stream as they stood at tick upTo: for each
// row, its version with the largest tick <= upTo. Rows never written are
// left out; the result is in order of N.
func (s *Store) Records(ctx context.Context, stream string, n, upTo int) (_ []Record, err error) {
	defer markDamaged(&err)
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
func (s *Store) History(ctx context.Context, depth, upTo int) (_ map[string][]HistoryRecord, err error) {
	defer markDamaged(&err)
	out := make(map[string][]HistoryRecord)
	if depth <= 0 {
		return out, nil
	}
	// One entity at a time, newest first from its index: the time does not
	// grow with the number of ticks stored. The entities are those with
	// calls, from the running totals (an exchange is a call's).
	keys, err := s.historyKeys(ctx)
	if err != nil {
		return nil, err
	}
	stmt, err := s.db.PrepareContext(ctx, `SELECT user, assistant, user_ref, assistant_ref FROM history
		WHERE entity_key = ? AND tick <= ? ORDER BY seq DESC LIMIT ?`)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer stmt.Close()
	type stored struct {
		HistoryRecord
		userRef, assistantRef string
	}
	var all []stored
	for _, key := range keys {
		rows, err := stmt.QueryContext(ctx, key, upTo, depth)
		if err != nil {
			return nil, fmt.Errorf("read history of %s: %w", key, err)
		}
		first := len(all)
		for rows.Next() {
			h := stored{HistoryRecord: HistoryRecord{EntityKey: key}}
			if err := rows.Scan(&h.User, &h.Assistant, &h.userRef, &h.assistantRef); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read history of %s: %w", key, err)
			}
			all = append(all, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read history of %s: %w", key, err)
		}
		slices.Reverse(all[first:]) // oldest first
	}
	var refs []string
	for _, h := range all {
		refs = append(refs, h.userRef, h.assistantRef)
	}
	texts, err := s.textsOf(ctx, slices.DeleteFunc(refs, func(r string) bool { return r == "" }))
	if err != nil {
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
			text, ok := texts[f.ref]
			if !ok {
				return nil, fmt.Errorf("read history of %s: text %s is missing", h.EntityKey, f.ref)
			}
			*f.text = text
		}
		out[h.EntityKey] = append(out[h.EntityKey], h.HistoryRecord)
	}
	return out, nil
}

// historyKeys lists the entity keys that made calls, from the totals.
func (s *Store) historyKeys(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT DISTINCT entity_key FROM totals ORDER BY entity_key")
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// Events returns the event lines of ticks fromTick to toTick, both included,
// in the order they were emitted.
func (s *Store) Events(ctx context.Context, fromTick, toTick int) (_ []Event, err error) {
	defer markDamaged(&err)
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
func (s *Store) Calls(ctx context.Context, tick int) (_ []CallRecord, err error) {
	defer markDamaged(&err)
	calls, refs, err := s.callRows(ctx, tick)
	if err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	if err := s.requestsOf(ctx, calls); err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	for _, c := range calls {
		refs = append(refs, requestRefs(c.Request)...)
	}
	texts, err := s.textsOf(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("read calls of tick %d: %w", tick, err)
	}
	for i := range calls {
		c := &calls[i]
		if c.answerRef != "" {
			var ok bool
			if c.Raw, ok = texts[c.answerRef]; !ok {
				return nil, fmt.Errorf("read calls of tick %d: call %d: the answer's text %s is missing", tick, c.ID, c.answerRef)
			}
		}
		if c.parsedSame {
			c.Output = c.Raw
		}
		if c.Request, err = expandRequest(c.Request, texts); err != nil {
			return nil, fmt.Errorf("read calls of tick %d: call %d: %w", tick, c.ID, err)
		}
	}
	out := make([]CallRecord, len(calls))
	for i, c := range calls {
		out[i] = c.CallRecord
	}
	return out, nil
}

// storedCall is a calls row as stored: its answer may be in texts, its
// parsed output the answer itself.
type storedCall struct {
	CallRecord
	answerRef  string
	parsedSame bool
	requestAt  []byte // where the request is, in a block; nil when in Request
}

// callRows reads the rows of a tick's calls, and the keys of the answers
// they keep in texts.
func (s *Store) callRows(ctx context.Context, tick int) ([]storedCall, []string, error) {
	newer := "'', 0, NULL"
	if s.version >= 10 {
		newer = "answer_ref, parsed_same, request_at"
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT id, tick, phase, entity_key, model, request_json, raw_response, parsed_output, latency_ms,
			prompt_tokens, completion_tokens, cached_tokens, attempts, repairs, error_kind, error, fallback, `+s.truncatedColumn()+`, `+newer+`
		FROM calls WHERE tick = ? ORDER BY id`, tick)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		calls []storedCall
		refs  []string
	)
	for rows.Next() {
		var c storedCall
		if err := rows.Scan(&c.ID, &c.Tick, &c.Phase, &c.EntityKey, &c.Model, &c.Request, &c.Raw, &c.Output, &c.LatencyMS,
			&c.PromptTokens, &c.CompletionTokens, &c.CachedTokens, &c.Attempts, &c.Repairs, &c.ErrorKind, &c.Error, &c.Fallback, &c.PromptTruncated,
			&c.answerRef, &c.parsedSame, &c.requestAt); err != nil {
			return nil, nil, err
		}
		if c.answerRef != "" {
			refs = append(refs, c.answerRef)
		}
		calls = append(calls, c)
	}
	return calls, refs, rows.Err()
}

// requestsOf reads into each call the request kept in a block.
func (s *Store) requestsOf(ctx context.Context, calls []storedCall) error {
	blocks := map[int64][]byte{}
	for i := range calls {
		c := &calls[i]
		if c.requestAt == nil {
			continue
		}
		id, off, n, err := parseBlockRef(c.requestAt)
		if err != nil {
			return fmt.Errorf("call %d: the request: %w", c.ID, err)
		}
		block, ok := blocks[id]
		if !ok {
			if block, err = s.block(ctx, id); err != nil {
				return fmt.Errorf("call %d: the request: %w", c.ID, err)
			}
			blocks[id] = block
		}
		if off+n > len(block) {
			return fmt.Errorf("call %d: the request is past the end of block %d", c.ID, id)
		}
		c.Request = string(block[off : off+n])
	}
	return nil
}
