package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CommitTick stores everything of one tick in a single transaction: either
// all of it is written or none of it. It refuses, with ErrTickOrder, a tick
// that is not the last committed tick plus one.
//
// A cancelled ctx rolls the transaction back; a caller that wants a tick in
// flight to land despite Ctrl-C passes context.WithoutCancel(ctx).
func (s *Store) CommitTick(ctx context.Context, rec *TickRecord) (err error) {
	defer markDamaged(&err)
	if rec == nil || len(rec.State) == 0 {
		return errors.New("commit tick: record has no state")
	}
	if !json.Valid(rec.State) {
		return fmt.Errorf("commit tick %d: the state is not JSON", rec.Tick)
	}
	if err := s.checkWAL(ctx); err != nil {
		return fmt.Errorf("commit tick %d: %w", rec.Tick, err)
	}
	if err := s.commit(ctx, rec); err != nil {
		return fmt.Errorf("commit tick %d: %w", rec.Tick, err)
	}
	s.checkpoint(ctx)
	// A WAL lost during this very commit: the tick went into the lost file
	// and, once copied into state.db with the rest, stands; the next commit
	// fails. If the copy failed, this tick is not safe either.
	if err := s.checkWAL(ctx); err != nil && !s.walSaved() {
		return fmt.Errorf("commit tick %d: %w", rec.Tick, err)
	}
	return nil
}

func (s *Store) commit(ctx context.Context, rec *TickRecord) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed

	last, err := checkTick(ctx, tx, rec)
	if err != nil {
		return err
	}
	w := &tickWriter{ctx: ctx, tx: tx, tick: rec.Tick, cold: !s.texts.warm(), chunk: cmp.Or(s.textChunk, textChunk)}
	used := keySet{} // the keys of the texts this tick references
	state := s.writeState(w, rec.State, last)
	w.texts = make([]blockItem, 0, min(textsAbout(rec), w.chunk))
	s.writeRows(w, rec, used)
	s.writeCalls(w, rec.Calls, used)
	writeTotals(w, rec)
	s.writeEvents(w, rec)
	next, err := s.historySeqs(ctx, tx, last)
	if err != nil {
		return err
	}
	s.writeHistory(w, rec.History, next, used)
	writeTexts(w)
	writeCallRows(w)
	done := s.writeRun(w)
	if w.err != nil {
		return w.err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	done()
	s.texts.replace(used)
	s.keepState(rec.Tick, state)
	s.seqsMu.Lock()
	s.seqs = historySeqs{tick: rec.Tick, last: next}
	s.seqsMu.Unlock()
	return nil
}

// textsAbout is about how many texts and requests the commit of rec
// writes, so that its list is made once: a request and the new texts of
// each call, the answer of each past exchange (its prompt is its call's),
// and each output.
func textsAbout(rec *TickRecord) int {
	n := len(rec.History) + len(rec.Outputs)
	for _, c := range rec.Calls {
		n++
		if p := c.Prepared; p != nil {
			n += len(p.texts) + len(p.spooled)
		}
	}
	return n
}

// checkTick returns the last committed tick, refusing a record that does
// not follow it (ErrTickOrder) or whose kind is not the run's (ErrKind); the
// first tick with a kind records it as the run's.
func checkTick(ctx context.Context, tx *sql.Tx, rec *TickRecord) (last int, err error) {
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(tick), 0) FROM ticks").Scan(&last); err != nil {
		return 0, fmt.Errorf("read last tick: %w", err)
	}
	if rec.Tick != last+1 {
		return 0, fmt.Errorf("the last committed tick is %d: %w", last, ErrTickOrder)
	}
	if rec.Kind == "" {
		return last, nil
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('kind', ?) ON CONFLICT (key) DO NOTHING", rec.Kind); err != nil {
		return 0, fmt.Errorf("write meta: %w", err)
	}
	var kind string
	if err := tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'kind'").Scan(&kind); err != nil {
		return 0, fmt.Errorf("read meta: %w", err)
	}
	if kind != rec.Kind {
		return 0, fmt.Errorf("the run state is of a %s simulation, not %s: %w", kind, rec.Kind, ErrKind)
	}
	return last, nil
}

// writeRows writes the kind's own rows of the tick: memories (one body),
// records, intentions and outputs (a long output in texts, its key in used).
func (s *Store) writeRows(w *tickWriter, rec *TickRecord, used keySet) {
	writeMemories(w, rec.Memories)
	for _, r := range rec.Records {
		w.exec("records", "INSERT INTO records (tick, stream, n, body) VALUES (?, ?, ?, ?)",
			rec.Tick, r.Stream, r.N, string(r.Body))
	}
	for _, in := range rec.Intentions {
		w.exec("intentions", "INSERT INTO intentions (tick, character_id, intention, fallback) VALUES (?, ?, ?, ?)",
			rec.Tick, in.CharacterID, in.Intention, in.Fallback)
	}
	for _, out := range rec.Outputs {
		output, ref := out.Output, ""
		if len(output) >= minSharedText { // most often the answer itself, in texts already
			output, ref = "null", s.putText(w, output, used)
		}
		w.exec("outputs", "INSERT INTO outputs (tick, location_id, output_json, fallback, output_ref) VALUES (?, ?, ?, ?, ?)",
			rec.Tick, out.LocationID, output, out.Fallback, ref)
	}
}

// writeCalls has the commit write the tick's model calls (writeCallRows),
// each request with its long texts stored once in the texts table (their
// keys added to used) when the caller handed its messages, else as given,
// scrubbed and bounded; the request itself goes into a block with the
// commit's texts.
func (s *Store) writeCalls(w *tickWriter, calls []CallRecord, used keySet) {
	for i, c := range calls {
		var request func() (string, error)
		switch {
		case c.Prepared != nil:
			request = s.writePrepared(w, c.Prepared, used)
		case c.Messages != nil:
			request = s.writePrepared(w, s.prepare(c.Messages), used)
		default:
			json := bounded(s.clean(c.Request), MaxStoredRequest)
			request = func() (string, error) { return json, nil }
		}
		if request == nil {
			return // the spool could not be read: w.err says why
		}
		// The answer is kept once: a long one in texts (where the entity's
		// history, which holds it too, finds it), and the parsed output
		// only where it is not the answer itself.
		raw, answerRef := bounded(s.clean(c.Raw), MaxStoredRaw), ""
		parsed, same := c.Output, c.Output != "" && c.Output == raw
		if same {
			parsed = ""
		}
		if len(raw) >= minSharedText {
			raw, answerRef = "", s.putText(w, raw, used)
		}
		p := &pendingCall{call: &calls[i], raw: raw, parsed: parsed, err: s.clean(c.Error), answerRef: answerRef, same: same}
		w.calls = append(w.calls, p)
		w.addText(pendingText{text: request, at: &p.at})
	}
}

// pendingCall is a calls row to write once its request is in a block
// (at): the call (the record's) and its stored forms. A row of a tick's
// thousands of calls is held as fields, its arguments made as it is
// written.
type pendingCall struct {
	call             *CallRecord
	raw, parsed, err string
	answerRef        string
	same             bool
	at               []byte
}

// writeCallRows writes the calls writeCalls was given, in their order.
func writeCallRows(w *tickWriter) {
	for _, p := range w.calls {
		c := p.call
		w.exec("calls", `INSERT INTO calls (tick, phase, entity_key, model, endpoint, request_json, raw_response, parsed_output,
			latency_ms, prompt_tokens, completion_tokens, cached_tokens, attempts, repairs, error_kind, error, fallback,
			batch_prompt_tokens, batch_completion_tokens, prompt_truncated, answer_ref, parsed_same, request_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.tick, c.Phase, c.EntityKey, c.Model, c.Endpoint, "", p.raw, p.parsed,
			c.LatencyMS, c.PromptTokens, c.CompletionTokens, c.CachedTokens, c.Attempts, c.Repairs, c.ErrorKind, p.err, c.Fallback,
			c.BatchPromptTokens, c.BatchCompletionTokens, c.PromptTruncated, p.answerRef, p.same, p.at)
	}
}

// writeEvents writes the tick's event lines and apply errors, each numbered
// in its order.
func (s *Store) writeEvents(w *tickWriter, rec *TickRecord) {
	for i, line := range rec.Events {
		w.exec("events", "INSERT INTO events (tick, seq, line) VALUES (?, ?, ?)", rec.Tick, i+1, s.clean(line))
	}
	for i, e := range rec.ApplyErrors {
		w.exec("apply_errors", "INSERT INTO apply_errors (tick, seq, location_id, character_id, reason) VALUES (?, ?, ?, ?, ?)",
			rec.Tick, i+1, e.LocationID, e.CharacterID, s.clean(e.Reason))
	}
}

// writeHistory writes the tick's exchanges, each numbered after its
// entity's last (next, which it advances); a long text goes to the texts
// table and the row keeps its key.
func (s *Store) writeHistory(w *tickWriter, history []HistoryRecord, next map[string]int, used keySet) {
	// In the order of their keys, which leaves the order of each entity's
	// own exchanges as it was: the table's index on them grows with every
	// tick, and in the order the calls ended each insert went to a page
	// anywhere in it.
	for _, h := range sortedBy(history, func(h HistoryRecord) string { return h.EntityKey }) {
		texts := [2]string{s.clean(h.User), s.clean(h.Assistant)}
		var refs [2]string
		for i, text := range texts {
			if len(text) >= minSharedText {
				refs[i], texts[i] = s.putText(w, text, used), ""
			}
		}
		next[h.EntityKey]++
		w.exec("history", `INSERT INTO history (entity_key, seq, tick, user, assistant, user_ref, assistant_ref)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, h.EntityKey, next[h.EntityKey], w.tick, texts[0], texts[1], refs[0], refs[1])
	}
}

// historySeqs is the last seq of each entity's past exchanges as of the
// commit of tick (0: not read yet), which the next commit numbers its own
// from, so that it need not query each entity's largest seq again.
type historySeqs struct {
	tick int
	last map[string]int
}

// historySeqs is a copy of each entity's last seq when the last committed
// tick is last: the store's own, when it committed that tick, else read
// from the database (another process committed, or none did yet).
func (s *Store) historySeqs(ctx context.Context, tx *sql.Tx, last int) (map[string]int, error) {
	s.seqsMu.Lock()
	known := s.seqs
	s.seqsMu.Unlock()
	if known.tick == last && known.last != nil {
		return maps.Clone(known.last), nil
	}
	next, err := countsBy(ctx, tx, "SELECT entity_key, MAX(seq) FROM history GROUP BY entity_key")
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return next, nil
}

// tickWriter runs the inserts of one tick and keeps the first error, after
// which it does nothing more. Each statement is prepared once per tick: a
// tick writes the same few statements for every call, and need not have
// SQLite parse them again each time.
type tickWriter struct {
	ctx    context.Context
	tx     *sql.Tx
	tick   int
	err    error
	stmts  map[string]*sql.Stmt // prepared on tx: closed when it commits or rolls back
	texts  []blockItem          // to write to blocks, by flushTexts
	placed []placedText         // texts in their blocks, their rows to write by writeTexts
	calls  []*pendingCall       // to write, by writeCallRows
	// cold is set when the store has committed nothing yet: texts its
	// commit writes may be in the database already (the past exchanges a
	// resumed run sends again), so flushTexts looks each up first, when
	// the database holds any text.
	cold    bool
	flushed bool // flushTexts has written texts
	chunk   int  // how many texts are held before flushTexts writes them
}

// sortedBy is a copy of rows stably sorted by key.
func sortedBy[T any](rows []T, key func(T) string) []T {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	return out
}

func (w *tickWriter) exec(table, query string, args ...any) {
	if w.err != nil {
		return
	}
	st, ok := w.stmts[query]
	if !ok {
		var err error
		if st, err = w.tx.PrepareContext(w.ctx, query); err != nil {
			w.err = fmt.Errorf("write %s: %w", table, err)
			return
		}
		if w.stmts == nil {
			w.stmts = map[string]*sql.Stmt{}
		}
		w.stmts[query] = st
	}
	if _, err := st.ExecContext(w.ctx, args...); err != nil {
		w.err = fmt.Errorf("write %s: %w", table, err)
	}
}

// writeTotals adds the tick's calls to the running totals and its
// fallbacks, apply errors and truncated prompts to the running counts.
func writeTotals(w *tickWriter, rec *TickRecord) {
	type key struct{ phase, entity, model string }
	sums := map[key]*Usage{}
	var order []key
	for _, c := range rec.Calls {
		k := key{c.Phase, c.EntityKey, c.Model}
		u := sums[k]
		if u == nil {
			u = &Usage{}
			sums[k] = u
			order = append(order, k)
		}
		u.add(c)
	}
	slices.SortFunc(order, func(a, b key) int { // as the rows of the table's index on them
		return cmp.Or(strings.Compare(a.phase, b.phase), strings.Compare(a.entity, b.entity), strings.Compare(a.model, b.model))
	})
	for _, k := range order {
		u := sums[k]
		w.exec("totals", `INSERT INTO totals (phase, entity_key, model, calls, failed, repairs, prompt_tokens, completion_tokens, cached_tokens, latency_ms,
				batch_prompt_tokens, batch_completion_tokens)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (phase, entity_key, model) DO UPDATE SET
				calls = calls + excluded.calls, failed = failed + excluded.failed, repairs = repairs + excluded.repairs,
				prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
				cached_tokens = cached_tokens + excluded.cached_tokens, latency_ms = latency_ms + excluded.latency_ms,
				batch_prompt_tokens = batch_prompt_tokens + excluded.batch_prompt_tokens,
				batch_completion_tokens = batch_completion_tokens + excluded.batch_completion_tokens`,
			k.phase, k.entity, k.model, u.Calls, u.FailedCalls, u.Repairs, u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.LatencyMS,
			u.BatchPromptTokens, u.BatchCompletionTokens)
	}
	writeEndpointTotals(w, rec)
	w.exec("batch_jobs", "DELETE FROM batch_jobs WHERE tick <= ?", rec.Tick)
	fallbacks := 0
	for _, in := range rec.Intentions {
		if in.Fallback {
			fallbacks++
		}
	}
	for _, out := range rec.Outputs {
		if out.Fallback {
			fallbacks++
		}
	}
	truncated := 0
	for _, c := range rec.Calls {
		if c.PromptTruncated {
			truncated++
		}
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"fallbacks", fallbacks}, {"apply_errors", len(rec.ApplyErrors)}, {"truncated_prompts", truncated}} {
		w.exec("counts", "INSERT INTO counts (name, n) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET n = n + excluded.n", c.name, c.n)
	}
}

// writeEndpointTotals adds the tick's calls to the running totals of the
// endpoints that answered them, and the attempts they failed to those of
// the endpoints that failed them.
func writeEndpointTotals(w *tickWriter, rec *TickRecord) {
	sums := map[string]*Usage{}
	of := func(ep string) *Usage {
		u := sums[ep]
		if u == nil {
			u = &Usage{}
			sums[ep] = u
		}
		return u
	}
	for _, c := range rec.Calls {
		for _, ep := range c.EndpointFailures {
			of(ep).EndpointFailures++
		}
		if c.Endpoint != "" {
			of(c.Endpoint).add(c)
		}
	}
	for _, ep := range slices.Sorted(maps.Keys(sums)) {
		u := sums[ep]
		w.exec("endpoint_totals", `INSERT INTO endpoint_totals (endpoint, calls, failed, repairs, prompt_tokens, completion_tokens, cached_tokens, latency_ms,
				batch_prompt_tokens, batch_completion_tokens, endpoint_failures)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (endpoint) DO UPDATE SET
				calls = calls + excluded.calls, failed = failed + excluded.failed, repairs = repairs + excluded.repairs,
				prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
				cached_tokens = cached_tokens + excluded.cached_tokens, latency_ms = latency_ms + excluded.latency_ms,
				batch_prompt_tokens = batch_prompt_tokens + excluded.batch_prompt_tokens,
				batch_completion_tokens = batch_completion_tokens + excluded.batch_completion_tokens,
				endpoint_failures = endpoint_failures + excluded.endpoint_failures`,
			ep, u.Calls, u.FailedCalls, u.Repairs, u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.LatencyMS,
			u.BatchPromptTokens, u.BatchCompletionTokens, u.EndpointFailures)
	}
}
