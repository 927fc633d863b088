package store

import (
	"bytes"
	stdflate "compress/flate"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// writeV2 builds a version 2 database at path as arbiter wrote it before
// calls named their model: two committed ticks with one call each.
func writeV2(t *testing.T, path string) {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("testdata", "schema_v2.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+escapePath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{string(ddl), "PRAGMA user_version = 2"}
	for tick := 1; tick <= 2; tick++ {
		stmts = append(stmts,
			`INSERT INTO ticks (tick, committed_at, state_json) VALUES (`+strconv.Itoa(tick)+`, '2025-03-01T12:00:00Z', '{"tick":`+strconv.Itoa(tick)+`}')`,
			`INSERT INTO calls (tick, phase, entity_key, request_json, raw_response, parsed_output, latency_ms,
				prompt_tokens, completion_tokens, cached_tokens, attempts, repairs, error_kind, error, fallback)
				VALUES (`+strconv.Itoa(tick)+`, 'intention', 'intention:ada', '[]', '{}', '{}', 10, 100, 20, 0, 1, 0, '', '', 0)`)
	}
	stmts = append(stmts, "INSERT INTO meta (key, value) VALUES ('kind', 'narrative')")
	for _, q := range stmts {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func userVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUpgradeV2: a version 2 database opens as version 4, its calls kept
// with an empty model and counted in the running totals, and takes new
// calls with their model and new runs.
func TestUpgradeV2(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	writeV2(t, path)

	ro, err := OpenReadOnly(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "schema version 2") || !strings.Contains(err.Error(), "a run upgrades it") {
		t.Fatalf("OpenReadOnly of a version 2 database = %v; want the older-arbiter error", err)
	}
	if ro != nil {
		ro.Close()
	}

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of a version 2 database: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s); v != schemaVersion || schemaVersion != 6 {
		t.Fatalf("user_version after the upgrade = %d, want 6", v)
	}
	if sum, err := s.Summary(t.Context()); err != nil || sum.Total.Calls != 2 || sum.Total.PromptTokens != 200 || len(sum.ByEntity) != 1 {
		t.Fatalf("summary after the upgrade = %+v, %v; want the 2 old calls in the totals", sum, err)
	}
	old, err := s.Calls(t.Context(), 2)
	if err != nil || len(old) != 1 || old[0].Model != "" || old[0].PromptTokens != 100 {
		t.Fatalf("a version 2 call after the upgrade = %+v, %v; want it kept with model \"\"", old, err)
	}

	rec := record(3)
	if err := s.StartRun([]byte(`{"models":[{"phase":"intention","model":"small"}]}`)); err != nil {
		t.Fatal(err)
	}
	commit(t, s, rec)
	calls, err := s.Calls(t.Context(), 3)
	if err != nil || len(calls) != 3 || calls[0].Model != "small" || calls[2].Model != "large" {
		t.Fatalf("calls committed after the upgrade = %+v, %v; want their models", calls, err)
	}
	runs, err := s.Runs(t.Context())
	if err != nil || len(runs) != 1 || runs[0].FirstTick != 3 || runs[0].LastTick != 3 {
		t.Fatalf("runs after the upgrade = %+v, %v; want one run of tick 3", runs, err)
	}
	rows, err := s.UsageRows(t.Context())
	if err != nil || len(rows) != 5 || rows[0].Model != "" || rows[0].Tick != 1 {
		t.Fatalf("UsageRows after the upgrade = %+v, %v; want the old calls with model \"\" first", rows, err)
	}
	totals, err := s.Totals(t.Context())
	if err != nil || len(totals) != 4 || totals[0].Model != "" || totals[0].Calls != 2 || totals[0].PromptTokens != 200 {
		t.Fatalf("Totals after the upgrade = %+v, %v; want the old calls summed with model \"\" first", totals, err)
	}

	// Reopened, the upgraded database is read as it is.
	s.Close()
	s2, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly after the upgrade: %v", err)
	}
	defer s2.Close()
	if last, err := s2.LastTick(t.Context()); err != nil || last != 3 {
		t.Errorf("LastTick after the upgrade = %d, %v; want 3", last, err)
	}
}

// TestUpgradeIsOnce: two stores opening the same version 2 database
// upgrade it once (the second finds version 3 inside its transaction).
func TestUpgradeIsOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	writeV2(t, path)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := Open(t.Context(), path)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Open of a version 2 database: %v", err)
		}
	}
}

// TestNewDatabaseMatchesUpgraded: a new database and an upgraded one have
// the same columns in calls, in the same order.
func TestNewDatabaseMatchesUpgraded(t *testing.T) {
	t.Parallel()
	fresh, _ := openTemp(t)
	path := filepath.Join(t.TempDir(), FileName)
	writeV2(t, path)
	up, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	columns := func(s *Store) string {
		var cols []string
		err := s.scan(t.Context(), func(scan func(...any) error) error {
			var name, typ string
			var notNull int
			if err := scan(&name, &typ, &notNull); err != nil {
				return err
			}
			cols = append(cols, name+" "+typ+" "+strconv.Itoa(notNull))
			return nil
		}, "SELECT name, type, \"notnull\" FROM pragma_table_info('calls') ORDER BY cid")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(cols, ", ")
	}
	if a, b := columns(fresh), columns(up); a != b || !strings.HasSuffix(a, "model TEXT 1, endpoint TEXT 1") {
		t.Errorf("calls columns differ:\n new      %s\n upgraded %s", a, b)
	}
}

// TestVersion4TextsRead: a version 4 database, whose texts are DEFLATE,
// opens as version 5; its requests read back whole, and the ticks after it
// add S2 texts beside the old ones.
func TestVersion4TextsRead(t *testing.T) {
	s, path := openTemp(t)
	rec, msgs := withMessages(1)
	long := strings.Repeat("A long system prompt, packed. ", 60)
	msgs[0].Content = long
	commit(t, s, rec)
	// Make it what version 4 wrote: DEFLATE bodies.
	var body []byte
	key := textKey(long)
	if err := s.db.QueryRowContext(t.Context(), "SELECT body FROM texts WHERE key = ?", key).Scan(&body); err != nil || body[0] != bodyS2 {
		t.Fatalf("body of the long text: form %v, %v; want S2", body[:1], err)
	}
	var old bytes.Buffer
	old.WriteByte(bodyDeflated)
	zw, _ := stdflate.NewWriter(&old, stdflate.BestSpeed)
	io.WriteString(zw, long)
	zw.Close()
	if _, err := s.db.ExecContext(t.Context(), "UPDATE texts SET body = ? WHERE key = ?", old.Bytes(), key); err != nil {
		t.Fatal(err)
	}
	// What version 6 added, a version 4 database lacks.
	if _, err := s.db.ExecContext(t.Context(), "ALTER TABLE calls DROP COLUMN endpoint; DROP TABLE endpoint_totals; DROP TABLE batch_jobs"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(t.Context(), "PRAGMA user_version = 4"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Read-only commands read it as it is: it holds no S2 body.
	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a version 4 database: %v", err)
	}
	calls, err := ro.Calls(t.Context(), 1)
	ro.Close()
	if err != nil || len(calls) == 0 {
		t.Fatalf("read-only, tick 1's calls: %v, %v", calls, err)
	}
	if got := sentMessages(t, 1, calls[0]); !reflect.DeepEqual(got, msgs) {
		t.Fatalf("read-only, tick 1's request read back as %+v", got)
	}

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of a version 4 database: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s); v != schemaVersion {
		t.Fatalf("user_version = %d, want %d", v, schemaVersion)
	}
	rec2, msgs2 := withMessages(2)
	msgs2[len(msgs2)-1].Content = strings.Repeat("A new long user prompt. ", 60)
	commit(t, s, rec2)
	for tick, want := range map[int][]Message{1: msgs, 2: msgs2} {
		calls, err := s.Calls(t.Context(), tick)
		if err != nil {
			t.Fatal(err)
		}
		if got := sentMessages(t, tick, calls[0]); !reflect.DeepEqual(got, want) {
			t.Errorf("tick %d: request read back as %+v", tick, got)
		}
	}
}
