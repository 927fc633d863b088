package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// tables lists every table that holds per-tick rows.
var tables = []string{"ticks", "memories", "memory_ticks", "records", "intentions", "outputs", "calls", "events", "apply_errors", "history"}

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// stateAt returns a small state of tick as a kind would store it.
func stateAt(tick int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"tick":%d,"locations":{"hall":{"moment":"Tick %d."}}}`, tick, tick))
}

// record returns a complete, valid record of tick.
func record(tick int) *TickRecord {
	return &TickRecord{
		Tick:     tick,
		Kind:     "narrative",
		State:    stateAt(tick),
		Memories: []MemoryRecord{{CharacterID: "ada", Entry: fmt.Sprintf("memory %d", tick)}},
		Intentions: []IntentionRecord{
			{CharacterID: "ada", Intention: "open the clock"},
			{CharacterID: "bo", Intention: "keep cooking", Fallback: true},
		},
		Outputs: []OutputRecord{
			{LocationID: "hall", Output: `{"tick":1,"location_id":"hall"}`},
			{LocationID: "cellar", Output: `{"tick":1,"location_id":"cellar"}`, Fallback: true},
		},
		Calls: []CallRecord{
			{Phase: "intention", EntityKey: "intention:ada", Model: "small", Request: `[{"role":"user","content":"hi"}]`, Raw: `{"i":1}`, Output: `{"i":1}`,
				LatencyMS: 120, PromptTokens: 100, CompletionTokens: 20, CachedTokens: 50, Attempts: 1},
			{Phase: "intention", EntityKey: "intention:bo", Model: "small", Request: `[]`, LatencyMS: 3000, Attempts: 3,
				ErrorKind: "timeout", Error: "context deadline exceeded", Fallback: true},
			{Phase: "resolution", EntityKey: "resolution:hall", Model: "large", Request: `[]`, Raw: `{`, Output: `{"o":1}`,
				LatencyMS: 400, PromptTokens: 300, CompletionTokens: 80, Attempts: 2, Repairs: 1},
		},
		Events: []string{"STATE_ENTRY state=INTENTION", "TOOL_FAILURE tool=intention:bo"},
		ApplyErrors: []ApplyError{
			{LocationID: "hall", CharacterID: "ada", Reason: `destination "yard" is not reachable`},
		},
		History: []HistoryRecord{
			{EntityKey: "intention:ada", User: fmt.Sprintf("u%d", tick), Assistant: fmt.Sprintf("a%d", tick)},
			{EntityKey: "resolution:hall", User: fmt.Sprintf("u%d", tick), Assistant: fmt.Sprintf("a%d", tick)},
		},
	}
}

func commit(t *testing.T, s *Store, recs ...*TickRecord) {
	t.Helper()
	for _, rec := range recs {
		if err := s.CommitTick(t.Context(), rec); err != nil {
			t.Fatalf("CommitTick(%d): %v", rec.Tick, err)
		}
	}
}

// rowCounts returns the number of rows of every table.
func rowCounts(t *testing.T, s *Store) map[string]int {
	t.Helper()
	counts := make(map[string]int)
	for _, table := range tables {
		var n int
		if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	return counts
}

func TestCommitAndReadBack(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := t.Context()
	if last, err := s.LastTick(ctx); err != nil || last != 0 {
		t.Fatalf("LastTick of a new store = %d, %v; want 0", last, err)
	}
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return at }
	commit(t, s, record(1))

	if last, err := s.LastTick(ctx); err != nil || last != 1 {
		t.Errorf("LastTick = %d, %v; want 1", last, err)
	}
	st, err := s.State(ctx, 1)
	if err != nil {
		t.Fatalf("State(1): %v", err)
	}
	if string(st) != string(stateAt(1)) {
		t.Errorf("State(1) = %+v\nwant %+v", st, stateAt(1))
	}

	calls, err := s.Calls(ctx, 1)
	if err != nil || len(calls) != 3 {
		t.Fatalf("Calls(1) = %d calls, %v; want 3", len(calls), err)
	}
	want := record(1).Calls[1]
	want.ID, want.Tick = calls[1].ID, 1
	if !reflect.DeepEqual(calls[1], want) || !calls[1].Failed() || calls[0].Failed() {
		t.Errorf("Calls(1)[1] = %+v\nwant %+v", calls[1], want)
	}
	if calls[0].EntityKey != "intention:ada" || calls[2].EntityKey != "resolution:hall" {
		t.Errorf("calls not in recorded order: %+v", calls)
	}

	events, err := s.Events(ctx, 1, 1)
	wantEvents := []Event{{1, 1, "STATE_ENTRY state=INTENTION"}, {1, 2, "TOOL_FAILURE tool=intention:bo"}}
	if err != nil || !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("Events(1, 1) = %v, %v; want %v", events, err, wantEvents)
	}

	mems, err := s.Memories(ctx, 1)
	if want := []MemoryRecord{{1, "ada", "memory 1"}}; err != nil || !reflect.DeepEqual(mems, want) {
		t.Errorf("Memories(1) = %+v, %v; want %+v", mems, err, want)
	}
	var committedAt string
	if err := s.db.QueryRowContext(ctx, "SELECT committed_at FROM ticks WHERE tick = 1").Scan(&committedAt); err != nil || committedAt != "2025-03-01T12:00:00Z" {
		t.Errorf("committed_at = %q, %v", committedAt, err)
	}
	wantCounts := map[string]int{"ticks": 1, "memories": 0, "memory_ticks": 1, "records": 0, "intentions": 2, "outputs": 2, "calls": 3, "events": 2, "apply_errors": 1, "history": 2}
	if got := rowCounts(t, s); !reflect.DeepEqual(got, wantCounts) {
		t.Errorf("rows = %v, want %v", got, wantCounts)
	}
}

func TestStateOfUncommittedTick(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	commit(t, s, record(1))
	for _, tick := range []int{0, 2, -1} {
		if _, err := s.State(t.Context(), tick); !errors.Is(err, ErrNoTick) {
			t.Errorf("State(%d) = %v, want ErrNoTick", tick, err)
		}
	}
}

func TestCommitRefusesWrongTick(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		committed int // ticks committed before
		tick      int
	}{
		{"skipped first tick", 0, 2},
		{"tick zero", 0, 0},
		{"doubled tick", 2, 2},
		{"earlier tick", 2, 1},
		{"skipped tick", 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openTemp(t)
			for i := 1; i <= tt.committed; i++ {
				commit(t, s, record(i))
			}
			before := rowCounts(t, s)
			err := s.CommitTick(t.Context(), record(tt.tick))
			if !errors.Is(err, ErrTickOrder) {
				t.Fatalf("CommitTick(%d) after %d ticks = %v, want ErrTickOrder", tt.tick, tt.committed, err)
			}
			if after := rowCounts(t, s); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused commit wrote rows: before %v, after %v", before, after)
			}
		})
	}
}

func TestCommitRefusesBadRecord(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	notJSON := record(1)
	notJSON.State = json.RawMessage("{tick")
	for name, rec := range map[string]*TickRecord{
		"nil record":     nil,
		"no state":       {Tick: 1},
		"state not JSON": notJSON,
	} {
		if err := s.CommitTick(t.Context(), rec); err == nil {
			t.Errorf("%s: CommitTick = nil, want an error", name)
		}
	}
	if last, _ := s.LastTick(t.Context()); last != 0 {
		t.Errorf("LastTick = %d after refused commits, want 0", last)
	}
}

func TestCommitIsAtomic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spoil func(*TickRecord)
	}{
		{"duplicate intention", func(r *TickRecord) {
			r.Intentions = append(r.Intentions, IntentionRecord{CharacterID: "ada", Intention: "again"})
		}},
		{"output that is not JSON", func(r *TickRecord) {
			r.Outputs[1].Output = "{not json"
		}},
		{"duplicate output, after calls were written", func(r *TickRecord) {
			r.Outputs = append(r.Outputs, r.Outputs[0])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openTemp(t)
			commit(t, s, record(1))
			before := rowCounts(t, s)

			rec := record(2)
			tt.spoil(rec)
			if err := s.CommitTick(t.Context(), rec); err == nil {
				t.Fatal("CommitTick of a record violating a constraint = nil, want an error")
			}
			if after := rowCounts(t, s); !reflect.DeepEqual(after, before) {
				t.Errorf("a failed commit left rows: before %v, after %v", before, after)
			}
			if last, _ := s.LastTick(t.Context()); last != 1 {
				t.Errorf("LastTick = %d, want 1", last)
			}
			// The tick can then be committed correctly.
			commit(t, s, record(2))
		})
	}
}

func TestCommitCancelled(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.CommitTick(ctx, record(1)); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitTick with a cancelled context = %v, want context.Canceled", err)
	}
	if got := rowCounts(t, s); got["ticks"] != 0 || got["calls"] != 0 {
		t.Errorf("a cancelled commit wrote rows: %v", got)
	}
}

func TestReopenResumes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, record(1), record(2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if last, err := s.LastTick(t.Context()); err != nil || last != 2 {
		t.Fatalf("LastTick after reopen = %d, %v; want 2", last, err)
	}
	if err := s.CommitTick(t.Context(), record(2)); !errors.Is(err, ErrTickOrder) {
		t.Errorf("recommitting tick 2 after reopen = %v, want ErrTickOrder", err)
	}
	commit(t, s, record(3))
	if mems, err := s.Memories(t.Context(), 3); err != nil || len(mems) != 3 {
		t.Errorf("Memories(3) = %+v, %v; want 3 entries", mems, err)
	}
}

func TestConcurrentCommitsOfTheSameTick(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	stores := make([]*Store, 4)
	for i := range stores {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.CommitTick(t.Context(), record(1)) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrTickOrder):
			t.Errorf("losing commit = %v, want ErrTickOrder", err)
		}
	}
	if won != 1 {
		t.Errorf("%d commits of tick 1 succeeded, want exactly 1", won)
	}
	if got := rowCounts(t, stores[0]); got["ticks"] != 1 || got["calls"] != 3 {
		t.Errorf("rows = %v, want one tick's worth", got)
	}
}

func TestHistory(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	r1 := record(1)
	r1.History = []HistoryRecord{
		{EntityKey: "intention:ada", User: "u1", Assistant: "a1"},
		{EntityKey: "resolution:hall", User: "h1", Assistant: "b1"},
	}
	r2 := record(2)
	r2.History = []HistoryRecord{{EntityKey: "intention:ada", User: "u2", Assistant: "a2"}}
	r3 := record(3)
	r3.History = []HistoryRecord{
		{EntityKey: "intention:ada", User: "u3", Assistant: "a3"},
		{EntityKey: "resolution:hall", User: "h3", Assistant: "b3"},
	}
	commit(t, s, r1, r2, r3)

	ada := func(n ...int) []HistoryRecord {
		var out []HistoryRecord
		for _, i := range n {
			out = append(out, HistoryRecord{"intention:ada", fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)})
		}
		return out
	}
	hall := []HistoryRecord{{"resolution:hall", "h1", "b1"}, {"resolution:hall", "h3", "b3"}}
	tests := []struct {
		depth int
		want  map[string][]HistoryRecord
	}{
		{0, map[string][]HistoryRecord{}},
		{1, map[string][]HistoryRecord{"intention:ada": ada(3), "resolution:hall": hall[1:]}},
		{2, map[string][]HistoryRecord{"intention:ada": ada(2, 3), "resolution:hall": hall}},
		{10, map[string][]HistoryRecord{"intention:ada": ada(1, 2, 3), "resolution:hall": hall}},
	}
	for _, tt := range tests {
		got, err := s.History(t.Context(), tt.depth, 3)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("History(%d) = %v, %v\nwant %v", tt.depth, got, err, tt.want)
		}
	}
	// As of tick 2: what a call of tick 3 was sent.
	got, err := s.History(t.Context(), 1, 2)
	if want := map[string][]HistoryRecord{"intention:ada": ada(2), "resolution:hall": hall[:1]}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("History(1, upTo 2) = %v, %v\nwant %v", got, err, want)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	commit(t, s, record(1), record(2), record(3))
	events, err := s.Events(t.Context(), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || events[0].Tick != 2 || events[0].Seq != 1 || events[3].Tick != 3 || events[3].Seq != 2 {
		t.Errorf("Events(2, 3) = %v", events)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	empty, err := s.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if empty.LastTick != 0 || !empty.LastCommittedAt.IsZero() || empty.Total != (Usage{}) || len(empty.ByPhase) != 0 {
		t.Errorf("Summary of a new store = %+v", empty)
	}

	at := time.Date(2025, 3, 1, 12, 0, 0, 500, time.UTC)
	s.now = func() time.Time { return at }
	commit(t, s, record(1), record(2))

	got, err := s.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Each record: 3 calls (1 failed, 1 repair), 2 fallbacks, 1 apply error.
	want := Summary{
		LastTick:        2,
		LastCommittedAt: at,
		Total:           Usage{Calls: 6, FailedCalls: 2, Repairs: 2, PromptTokens: 800, CompletionTokens: 200, CachedTokens: 100, LatencyMS: 7040},
		Fallbacks:       4,
		ApplyErrors:     2,
		ByPhase: []GroupUsage{
			{"intention", Usage{Calls: 4, FailedCalls: 2, PromptTokens: 200, CompletionTokens: 40, CachedTokens: 100, LatencyMS: 6240}},
			{"resolution", Usage{Calls: 2, Repairs: 2, PromptTokens: 600, CompletionTokens: 160, LatencyMS: 800}},
		},
		ByEntity: []GroupUsage{
			{"intention:ada", Usage{Calls: 2, PromptTokens: 200, CompletionTokens: 40, CachedTokens: 100, LatencyMS: 240}},
			{"intention:bo", Usage{Calls: 2, FailedCalls: 2, LatencyMS: 6000}},
			{"resolution:hall", Usage{Calls: 2, Repairs: 2, PromptTokens: 600, CompletionTokens: 160, LatencyMS: 800}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summary =\n %+v\nwant\n %+v", got, want)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if _, err := s.db.ExecContext(t.Context(), "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(t.Context(), path); err == nil {
		s.Close()
		t.Fatal("Open of a database with a newer schema = nil error")
	}
}

func TestOpenIsIdempotent(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commit(t, s, record(1))
	s.Close()
	for range 2 {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		if last, _ := s.LastTick(t.Context()); last != 1 {
			t.Errorf("LastTick = %d, want 1", last)
		}
		s.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(notDB, []byte("this is not a database, just text long enough to matter........."), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{notDB, filepath.Join(dir, "missing", "state.db")} {
		s, err := Open(t.Context(), path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) = nil error", path)
			continue
		}
		if want := "open " + path + ": "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open(%s) = %q, want it to name the file", path, err)
		}
	}
}

func TestPathWithSpecialCharacters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a dir?#%", FileName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	commit(t, s, record(1))
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at %s: %v", path, err)
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commit(t, s, record(1))
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("expected a WAL file while open: %v", err)
	}
	s.Close()
	// Recreate leftovers as a crash would leave them.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.WriteFile(path+suffix, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Reset(path); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !os.IsNotExist(err) {
			t.Errorf("%s still exists after Reset", path+suffix)
		}
	}
	if err := Reset(path); err != nil {
		t.Errorf("Reset of an absent database = %v, want nil", err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if last, _ := s.LastTick(t.Context()); last != 0 {
		t.Errorf("LastTick after Reset = %d, want 0", last)
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	if got, want := Path(filepath.Join("simulations", "demo-sim")), filepath.Join("simulations", "demo-sim", "state.db"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

// TestMemoriesUpToTick: Memories gives the entries of ticks 1..upTo only,
// in order, with the tick each was written at.
func TestMemoriesUpToTick(t *testing.T) {
	s, _ := openTemp(t)
	r2 := record(2)
	r2.Memories = append(r2.Memories, MemoryRecord{CharacterID: "ada", Entry: "memory 2b"}, MemoryRecord{CharacterID: "bo", Entry: "bo 2"})
	commit(t, s, record(1), r2, record(3))
	want := []MemoryRecord{
		{1, "ada", "memory 1"},
		{2, "ada", "memory 2"}, {2, "ada", "memory 2b"}, {2, "bo", "bo 2"},
	}
	got, err := s.Memories(context.Background(), 2)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Memories(2) = %+v, %v\nwant %+v", got, err, want)
	}
	// The latest two per character, in the same order.
	want = []MemoryRecord{{2, "ada", "memory 2"}, {2, "ada", "memory 2b"}, {2, "bo", "bo 2"}}
	got, err = s.LatestMemories(context.Background(), 2, 2, []string{"bo", "ada", "cy"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Memories(2, last 2) = %+v, %v\nwant %+v", got, err, want)
	}
	want = []MemoryRecord{{2, "ada", "memory 2b"}, {2, "bo", "bo 2"}, {3, "ada", "memory 3"}}
	got, err = s.LatestMemories(context.Background(), 3, 2, []string{"ada", "bo"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Memories(3, last 2) = %+v, %v\nwant %+v", got, err, want)
	}
}

// TestRecordsAsOfTick: row n of a stream at tick t is its newest version
// written at or before t; rows beyond n are left out.
func TestRecordsAsOfTick(t *testing.T) {
	s, _ := openTemp(t)
	body := func(v string) json.RawMessage { return json.RawMessage(`"` + v + `"`) }
	r1, r2, r3 := record(1), record(2), record(3)
	r1.Records = []Record{{Stream: "message", N: 1, Body: body("a")}, {Stream: "message", N: 2, Body: body("b")}}
	r2.Records = []Record{{Stream: "message", N: 2, Body: body("b2")}, {Stream: "message", N: 3, Body: body("c")}, {Stream: "other", N: 1, Body: body("x")}}
	r3.Records = []Record{{Stream: "message", N: 1, Body: body("a3")}}
	commit(t, s, r1, r2, r3)
	tests := []struct {
		n, upTo int
		want    string
	}{
		{3, 1, "a b"},
		{3, 2, "a b2 c"},
		{2, 2, "a b2"},
		{3, 3, "a3 b2 c"},
		{0, 3, ""},
	}
	for _, tt := range tests {
		recs, err := s.Records(t.Context(), "message", tt.n, tt.upTo)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			var v string
			if err := json.Unmarshal(r.Body, &v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Records(message, %d, %d) = %q, want %q", tt.n, tt.upTo, got, tt.want)
		}
	}
	bad := record(4)
	bad.Records = []Record{{Stream: "message", N: 1, Body: json.RawMessage("{")}}
	if err := s.CommitTick(t.Context(), bad); err == nil {
		t.Error("CommitTick of a record body that is not JSON = nil, want an error")
	}
	if last, _ := s.LastTick(t.Context()); last != 3 {
		t.Errorf("LastTick = %d, want 3", last)
	}
}

// TestKindIsKept: the first commit fixes the run's kind; a tick of another
// kind is refused with ErrKind and writes nothing.
func TestKindIsKept(t *testing.T) {
	s, _ := openTemp(t)
	if k, err := s.Kind(t.Context()); err != nil || k != "" {
		t.Fatalf("Kind of a new store = %q, %v", k, err)
	}
	commit(t, s, record(1))
	if k, err := s.Kind(t.Context()); err != nil || k != "narrative" {
		t.Fatalf("Kind = %q, %v; want narrative", k, err)
	}
	other := record(2)
	other.Kind = "chronicle"
	if err := s.CommitTick(t.Context(), other); !errors.Is(err, ErrKind) {
		t.Fatalf("CommitTick of another kind = %v, want ErrKind", err)
	}
	if last, _ := s.LastTick(t.Context()); last != 1 {
		t.Errorf("LastTick = %d after a refused commit, want 1", last)
	}
}

// TestRecordStop: a stop after the last commit shows in the summary with its
// events; once a later tick commits past it, it no longer does.
func TestRecordStop(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	commit(t, s, record(1))
	stop := Stop{Tick: 2, Reason: "quorum_failure", Error: "connection refused", Events: []string{"EMIT: STATE_ENTRY state=ERROR error_type=quorum_failure"}}
	if err := s.RecordStop(ctx, stop); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum.LastStop; got == nil || got.Tick != 2 || got.Reason != "quorum_failure" || got.Error != "connection refused" ||
		len(got.Events) != 1 || got.StoppedAt.IsZero() {
		t.Fatalf("LastStop = %+v", got)
	}
	if rowCounts(t, s)["ticks"] != 1 {
		t.Error("recording a stop committed a tick")
	}
	commit(t, s, record(2))
	if sum, _ := s.Summary(ctx); sum.LastStop != nil {
		t.Errorf("LastStop after tick 2 committed = %+v, want nil", sum.LastStop)
	}
}

// TestLatestReadsFail: the per-entity reads of resume say what they could
// not read.
func TestLatestReadsFail(t *testing.T) {
	s, _ := openTemp(t)
	commit(t, s, record(1))
	s.Close()
	if _, err := s.LatestMemories(t.Context(), 1, 10, []string{"ada"}); err == nil || !strings.Contains(err.Error(), "read memories") {
		t.Errorf("LatestMemories on a closed store = %v", err)
	}
	if _, err := s.History(t.Context(), 3, 1); err == nil || !strings.Contains(err.Error(), "read history") {
		t.Errorf("History on a closed store = %v", err)
	}
}

// TestNewDatabasePages: a new database has 16 KiB pages and runs in WAL
// mode; one made with other pages keeps them, and WAL.
func TestNewDatabasePages(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	var size int
	var mode string
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&size); err != nil || size != 16384 {
		t.Errorf("page size %d, %v; want 16384", size, err)
	}
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" || !s.wal.on {
		t.Errorf("journal mode %q (%v), WAL watched %v; want wal", mode, err, s.wal.on)
	}

	path := filepath.Join(t.TempDir(), FileName)
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(4096)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(t.Context(), "CREATE TABLE before (x)"); err != nil {
		t.Fatal(err)
	}
	old.Close()
	s2, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	commit(t, s2, record(1))
	if err := s2.db.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&size); err != nil || size != 4096 {
		t.Errorf("an existing database's page size %d, %v; want its 4096", size, err)
	}
}

// isBusy tells SQLite's "database is locked" by its code, through the
// wrapping Open adds, and nothing else: a write lock another connection
// holds, asked for with no busy wait, is busy; a missing table is not.
func TestIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	holder.SetMaxOpenConns(1)
	if _, err := holder.Exec("CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, busy := other.Exec("BEGIN IMMEDIATE")
	if busy == nil || !isBusy(busy) || !isBusy(fmt.Errorf("open %s: %w", path, busy)) {
		t.Errorf("a write lock held elsewhere: isBusy(%v) = false", busy)
	}
	_, missing := other.Exec("SELECT * FROM nope")
	if missing == nil || isBusy(missing) || isBusy(errors.New("it said SQLITE_BUSY")) {
		t.Errorf("isBusy(%v) = true, or a message naming SQLITE_BUSY was taken for the code", missing)
	}
}
