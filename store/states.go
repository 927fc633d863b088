package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// snapshotEvery is how many ticks apart whole states are stored: the ticks
// between are deltas over the tick before (delta.go), so reading a tick
// reads one whole state and at most snapshotEvery-1 deltas. At 10,000
// characters a state is about 1.6 MB and a delta takes a few milliseconds
// to read back.
const snapshotEvery = 8

// lastState is the state this store last committed, which the next commit
// writes its delta over.
type lastState struct {
	mu    sync.Mutex
	tick  int
	state []byte
}

// keepState remembers the state of tick, just committed.
func (s *Store) keepState(tick int, state []byte) {
	s.last.mu.Lock()
	s.last.tick, s.last.state = tick, state
	s.last.mu.Unlock()
}

// writeState writes the tick row and its state: whole every snapshotEvery
// ticks and whenever the state before is not at hand as a states row,
// else as a delta over the tick before. It returns the state as stored.
func (s *Store) writeState(w *tickWriter, state json.RawMessage, last int) []byte {
	w.exec("ticks", "INSERT INTO ticks (tick, committed_at, state_json) VALUES (?, ?, 'null')",
		w.tick, s.now().UTC().Format(time.RFC3339Nano))
	base, plain := 0, []byte(state)
	if (w.tick-1)%snapshotEvery != 0 && w.err == nil {
		if prev, ok := s.stateBefore(w, last); ok {
			base, plain = last, makeDelta(prev, state)
		}
	}
	body := compress(plain)
	w.exec("states", "INSERT INTO states (tick, base, body) VALUES (?, ?, ?)", w.tick, base, body)
	return state
}

// stateBefore is the state of tick last when it is stored in states: the
// one this store committed, else read back. The store lets go of the one
// it committed as it hands it over: the delta is made at the start of the
// commit, and the rest of the commit, the largest heap of a large world's
// tick, need not hold a whole state besides its own (a commit that fails
// reads it back).
func (s *Store) stateBefore(w *tickWriter, last int) ([]byte, bool) {
	s.last.mu.Lock()
	tick, state := s.last.tick, s.last.state
	s.last.state = nil
	s.last.mu.Unlock()
	if tick == last && state != nil {
		return state, true
	}
	var n int
	if err := w.tx.QueryRowContext(w.ctx, "SELECT COUNT(*) FROM states WHERE tick = ?", last).Scan(&n); err != nil || n == 0 {
		return nil, false // stored whole in ticks by an earlier arbiter: this tick is whole
	}
	prev, err := s.readState(w.ctx, w.tx, last)
	if err != nil {
		w.err = fmt.Errorf("read state of tick %d: %w", last, err)
		return nil, false
	}
	return prev, true
}

// State returns the state JSON committed at tick, as the kind wrote it. A
// tick that was not committed, tick 0 included (the authored state), gives
// an error wrapping ErrNoTick.
func (s *Store) State(ctx context.Context, tick int) (_ json.RawMessage, err error) {
	defer markDamaged(&err)
	state, err := s.readState(ctx, s.db, tick)
	if err != nil {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, err)
	}
	return state, nil
}

type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// readState reads the state of tick: from ticks when stored whole there,
// else from the last whole state in states at or before it and the deltas
// after it.
func (s *Store) readState(ctx context.Context, q querier, tick int) ([]byte, error) {
	var data string
	err := q.QueryRowContext(ctx, "SELECT state_json FROM ticks WHERE tick = ?", tick).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoTick
	}
	if err != nil || s.version < 10 || data != "null" {
		return []byte(data), err
	}
	rows, err := q.QueryContext(ctx, `SELECT tick, base, body FROM states
		WHERE tick <= ? AND tick >= (SELECT MAX(tick) FROM states WHERE tick <= ? AND base = 0) ORDER BY tick`, tick, tick)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var state []byte
	want := 0 // the tick of the next row; 0 before the whole state
	for rows.Next() {
		var (
			t, base int
			body    []byte
		)
		if err := rows.Scan(&t, &base, &body); err != nil {
			return nil, err
		}
		plain, err := decompress(body)
		if err != nil {
			return nil, fmt.Errorf("%w: the state of tick %d cannot be read (%v); %s", ErrDamaged, t, err, recovery)
		}
		switch {
		case want == 0 && base == 0:
			state = plain
		case t == want && base == t-1:
			if state, err = applyDelta(state, plain); err != nil {
				return nil, fmt.Errorf("%w: the state of tick %d: %v; %s", ErrDamaged, t, err, recovery)
			}
		default:
			return nil, fmt.Errorf("%w: the states before tick %d are missing; %s", ErrDamaged, t, recovery)
		}
		want = t + 1
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if want == 0 {
		return []byte(data), nil // a state the kind wrote as null, stored whole
	}
	if want != tick+1 {
		return nil, fmt.Errorf("%w: the state of tick %d is missing; %s", ErrDamaged, tick, recovery)
	}
	return state, nil
}
