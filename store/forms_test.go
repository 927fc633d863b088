package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// dropV10 takes from a database what version 10 added (run by toWhole
// once every row is back in its whole form).
const dropV10 = `DROP TABLE states; DROP TABLE blocks;
	ALTER TABLE calls DROP COLUMN answer_ref; ALTER TABLE calls DROP COLUMN parsed_same;
	ALTER TABLE calls DROP COLUMN texts_dropped; ALTER TABLE calls DROP COLUMN request_at;
	ALTER TABLE outputs DROP COLUMN output_ref;`

// toRows rewrites a version 11 database in the forms version 10 wrote:
// every memory entry a row of memories; then memory_ticks is dropped and
// user_version is 10. It is how the arbiter of version 10 stores the same
// ticks.
func toRows(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	mems, err := s.Memories(ctx, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	seq := map[string]int{}
	for _, m := range mems {
		key := fmt.Sprint(m.Tick, m.CharacterID)
		seq[key]++
		if _, err := tx.ExecContext(ctx, "INSERT INTO memories (tick, character_id, seq, entry) VALUES (?, ?, ?, ?)",
			m.Tick, m.CharacterID, seq[key], m.Entry); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE memory_ticks; PRAGMA user_version = 10"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	s.version = 10
}

// toWhole rewrites a version 11 database in the forms version 9 wrote:
// every memory entry a row (toRows), every state whole in ticks, every
// request, answer, parsed output and output in its row, every text S2 (or
// plain) in texts; then version 10's tables and columns are dropped and
// user_version is 9. It is how the arbiter of version 9 stores the same
// ticks.
func toWhole(t *testing.T, s *Store) {
	t.Helper()
	toRows(t, s)
	ctx := t.Context()
	last, err := s.LastTick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for tick := 1; tick <= last; tick++ {
		state, err := s.State(ctx, tick)
		if err != nil {
			t.Fatal(err)
		}
		exec("UPDATE ticks SET state_json = ? WHERE tick = ?", string(state), tick)
		calls, _, err := s.callRows(ctx, tick)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.requestsOf(ctx, calls); err != nil {
			t.Fatal(err)
		}
		whole, err := s.Calls(ctx, tick)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range calls {
			exec("UPDATE calls SET request_json = ?, raw_response = ?, parsed_output = ? WHERE id = ?", c.Request, whole[i].Raw, whole[i].Output, c.ID)
		}
		story, err := s.Story(ctx, tick, tick)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range story.Outputs {
			exec("UPDATE outputs SET output_json = ? WHERE tick = ? AND location_id = ?", o.Output, tick, o.LocationID)
		}
	}
	var keys []string
	if err := s.scan(ctx, func(scan func(...any) error) error {
		var k string
		keys = append(keys, k)
		return scan(&keys[len(keys)-1])
	}, "SELECT key FROM texts"); err != nil {
		t.Fatal(err)
	}
	texts, err := s.textsOf(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for key, text := range texts {
		exec("UPDATE texts SET body = ? WHERE key = ?", pack(text), key)
	}
	exec(dropV10 + "PRAGMA user_version = 9")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// snapshot is everything the read commands read of a run, through the
// store's API.
func snapshot(t *testing.T, s *Store) string {
	t.Helper()
	last, err := s.LastTick(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return snapshotThrough(t, s, last)
}

// snapshotThrough is the snapshot of ticks 1..last, and of the run's
// figures.
func snapshotThrough(t *testing.T, s *Store, last int) string {
	t.Helper()
	ctx := t.Context()
	var b strings.Builder
	add := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%s: %s\n", what, j)
	}
	add("last", last, nil)
	for tick := 1; tick <= last; tick++ {
		st, err := s.State(ctx, tick)
		add(fmt.Sprint("state ", tick), string(st), err)
		calls, err := s.Calls(ctx, tick)
		add(fmt.Sprint("calls ", tick), calls, err)
		story, err := s.Story(ctx, tick, tick)
		add(fmt.Sprint("story ", tick), story, err)
		hist, err := s.History(ctx, 3, tick)
		add(fmt.Sprint("history ", tick), hist, err)
	}
	sum, err := s.Summary(ctx)
	if sum.LastTick != last {
		sum = Summary{} // a later tick changed the figures
	}
	add("summary", sum, err)
	rows, err := s.UsageRows(ctx)
	rows = slices.DeleteFunc(rows, func(r CallUsage) bool { return r.Tick > last })
	add("usage", rows, err)
	if sum.LastTick == last {
		runs, err := s.Runs(ctx)
		add("runs", runs, err)
	}
	ev, err := s.Events(ctx, 1, last)
	add("events", ev, err)
	mem, err := s.Memories(ctx, last)
	add("memories", mem, err)
	return b.String()
}

// TestRunStoredBothWays: the same ticks stored in version 10's forms and
// in version 9's (whole) read back the same through every read the
// commands make, read as they are and once the whole ones are upgraded.
func TestRunStoredBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	paths := [2]string{filepath.Join(t.TempDir(), FileName), filepath.Join(t.TempDir(), FileName)}
	for _, path := range paths {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		s.now = fixedNow
		if err := s.StartRun(json.RawMessage(`{"run":1}`)); err != nil {
			t.Fatal(err)
		}
		for tick := 1; tick <= 2*snapshotEvery+3; tick++ {
			commit(t, s, longRecord(tick))
		}
		s.Close()
	}
	checkForms(t, paths[0])
	news := readSnapshot(t, paths[0], false)
	s, err := Open(ctx, paths[1])
	if err != nil {
		t.Fatal(err)
	}
	toWhole(t, s)
	s.Close()
	if whole := readSnapshot(t, paths[1], false); whole != news {
		t.Errorf("stored whole, the run reads otherwise:%s", firstDifference(whole, news))
	}
	if upgraded := readSnapshot(t, paths[1], true); upgraded != news {
		t.Errorf("stored whole and upgraded, the run reads otherwise:%s", firstDifference(upgraded, news))
	}
}

// readSnapshot opens path (to write, upgrading it, or read-only) and
// returns its snapshot.
func readSnapshot(t *testing.T, path string, write bool) string {
	t.Helper()
	open := OpenReadOnly
	if write {
		open = Open
	}
	s, err := open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return snapshot(t, s)
}

func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-100)
	return "\ngot:  …" + got[from:min(len(got), i+100)] + "\nwant: …" + want[from:min(len(want), i+100)]
}

// longRecord is a tick of a small world whose answers and outputs are
// long (kept in texts), whose parsed output is sometimes the answer and
// sometimes not, and whose state changes in part from tick to tick.
func longRecord(tick int) *TickRecord {
	rec, _ := withMessages(tick)
	chars := map[string]any{}
	for i := range 40 {
		loc := "hall"
		if (i+tick)%7 == 0 {
			loc = fmt.Sprintf("room %d", tick)
		}
		chars[fmt.Sprintf("c%02d", i)] = map[string]any{"location": loc, "internal_state": strings.Repeat("calm ", i%5+1)}
	}
	rec.State, _ = json.Marshal(map[string]any{"tick": tick, "characters": chars, "note": "a \"quoted\", {braced} [text]"})
	answer := fmt.Sprintf(`{"tick":%d,"updates":"%s"}`, tick, strings.Repeat("everyone moves ", 20))
	for i := range rec.Calls {
		rec.Calls[i].Raw = answer
		rec.Calls[i].Output = answer
		if i%2 == 1 {
			rec.Calls[i].Output = `{"parsed":"otherwise"}`
		}
	}
	rec.Outputs = []OutputRecord{{LocationID: "hall", Output: answer}, {LocationID: "yard", Output: `{"short":true}`}}
	rec.History = []HistoryRecord{{EntityKey: "resolution:hall", User: strings.Repeat("the hall now ", 20), Assistant: answer}}
	return rec
}

// fixedNow is the clock of both stores of a comparison.
func fixedNow() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }

// checkForms fails unless the database at path holds each of version 10's
// shorter forms: deltas, answers and outputs in texts, parsed outputs left
// out, requests and texts in blocks.
func checkForms(t *testing.T, path string) {
	t.Helper()
	s, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var deltas, wholes, answers, same, requests, outputs, inBlocks, whole int
	err = s.db.QueryRowContext(t.Context(), `SELECT
		(SELECT COUNT(*) FROM states WHERE base > 0), (SELECT COUNT(*) FROM states WHERE base = 0),
		(SELECT COUNT(*) FROM calls WHERE answer_ref <> '' AND raw_response = ''),
		(SELECT COUNT(*) FROM calls WHERE parsed_same AND parsed_output = ''),
		(SELECT COUNT(*) FROM calls WHERE request_at IS NOT NULL AND request_json = ''),
		(SELECT COUNT(*) FROM outputs WHERE output_ref <> ''),
		(SELECT COUNT(*) FROM texts WHERE substr(body, 1, 1) = x'03'),
		(SELECT COUNT(*) FROM ticks WHERE state_json <> 'null')`).Scan(&deltas, &wholes, &answers, &same, &requests, &outputs, &inBlocks, &whole)
	if err != nil {
		t.Fatal(err)
	}
	if deltas == 0 || wholes != 3 || answers == 0 || same == 0 || requests == 0 || outputs == 0 || inBlocks == 0 || whole != 0 {
		t.Errorf("stored forms: %d deltas, %d whole states (want 3), %d answers in texts, %d parsed outputs left out, "+
			"%d requests in blocks, %d outputs in texts, %d texts in blocks, %d states in ticks (want 0)",
			deltas, wholes, answers, same, requests, outputs, inBlocks, whole)
	}
}

// TestResumeWritesNoTextTwice: the first commit after the store is opened
// again (a resumed run) resends the texts of the ticks before, which are
// stored already: they go into no new block.
func TestResumeWritesNoTextTwice(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	compactRun(t, path, 2)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var lastBlock int64
	if err := s.db.QueryRowContext(t.Context(), "SELECT MAX(id) FROM blocks").Scan(&lastBlock); err != nil {
		t.Fatal(err)
	}
	rec, msgs := withMessages(3)
	commit(t, s, rec)
	resent := msgs[1].Content // tick 1's prompt, stored by tick 1
	var n int
	if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM texts WHERE key = ?", textKey(resent)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("tick 1's prompt is not a text of its own (%d, %v)", n, err)
	}
	for id := lastBlock + 1; ; id++ {
		b, err := s.block(t.Context(), id)
		if err != nil {
			break
		}
		if strings.Contains(string(b), resent) {
			t.Errorf("block %d, written by the resumed run's commit, holds tick 1's prompt again", id)
		}
	}
}
