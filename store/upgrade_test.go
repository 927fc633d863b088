package store

import (
	"bytes"
	"cmp"
	stdflate "compress/flate"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	if v := userVersion(t, s); v != schemaVersion || schemaVersion != 11 {
		t.Fatalf("user_version after the upgrade = %d, want 11", v)
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
	if a, b := columns(fresh), columns(up); a != b || !strings.HasSuffix(a, "model TEXT 1, endpoint TEXT 1, batch_prompt_tokens INTEGER 1, batch_completion_tokens INTEGER 1, prompt_truncated INTEGER 1, answer_ref TEXT 1, parsed_same INTEGER 1, texts_dropped INTEGER 1, request_at BLOB 0") {
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
	// Make it what version 4 wrote: whole rows, DEFLATE bodies.
	toWhole(t, s)
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
	// What versions 6 and 7 added, a version 4 database lacks.
	if _, err := s.db.ExecContext(t.Context(), dropV7+"ALTER TABLE calls DROP COLUMN endpoint; DROP TABLE endpoint_totals; DROP TABLE batch_jobs"); err != nil {
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

// dropV9 takes from a database what version 9 added: calls'
// prompt_truncated, and its count.
const dropV9 = `ALTER TABLE calls DROP COLUMN prompt_truncated; DELETE FROM counts WHERE name = 'truncated_prompts';`

// dropV7 takes from a database what versions 7 and 9 added: the batch
// token columns and prompt_truncated.
const dropV7 = dropV9 + `ALTER TABLE calls DROP COLUMN batch_prompt_tokens; ALTER TABLE calls DROP COLUMN batch_completion_tokens;
	ALTER TABLE totals DROP COLUMN batch_prompt_tokens; ALTER TABLE totals DROP COLUMN batch_completion_tokens;
	ALTER TABLE endpoint_totals DROP COLUMN batch_prompt_tokens; ALTER TABLE endpoint_totals DROP COLUMN batch_completion_tokens;`

// TestUpgradeV6: a version 6 database (calls and totals without batch
// tokens) reads as it is, every call live; opened for a run it becomes
// version 7, its calls and totals kept with 0 batch tokens, and the ticks
// after it count theirs in the calls, the totals and the endpoint totals.
func TestUpgradeV6(t *testing.T) {
	s, path := openTemp(t)
	old := record(1)
	old.Calls[0].Endpoint = "east"
	commit(t, s, old)
	if _, err := s.db.ExecContext(t.Context(), dropV7+"PRAGMA user_version = 6"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a version 6 database: %v", err)
	}
	sum, err := ro.Summary(t.Context())
	rows, rerr := ro.UsageRows(t.Context())
	ro.Close()
	if err != nil || sum.Total.PromptTokens != 400 || sum.Total.BatchPromptTokens != 0 || len(sum.ByEndpoint) != 1 {
		t.Fatalf("read-only, the summary of a version 6 database = %+v, %v", sum, err)
	}
	if rerr != nil || len(rows) != 3 || rows[0].BatchPromptTokens != 0 {
		t.Fatalf("read-only, UsageRows of a version 6 database = %+v, %v", rows, rerr)
	}

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of a version 6 database: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s); v != schemaVersion {
		t.Fatalf("user_version after the upgrade = %d, want %d", v, schemaVersion)
	}
	rec := record(2)
	rec.Calls[0].Endpoint = "east"
	rec.Calls[0].BatchPromptTokens, rec.Calls[0].BatchCompletionTokens = 100, 20
	rec.Calls[2].BatchPromptTokens, rec.Calls[2].BatchCompletionTokens = 200, 50 // a repair's tokens were live
	commit(t, s, rec)

	sum, err = s.Summary(t.Context())
	if err != nil || sum.Total.PromptTokens != 800 || sum.Total.BatchPromptTokens != 300 || sum.Total.BatchCompletionTokens != 70 {
		t.Fatalf("summary after the upgrade = %+v, %v; want tick 2's 300+70 batch tokens of 800 prompt", sum.Total, err)
	}
	if len(sum.ByEndpoint) != 1 || sum.ByEndpoint[0].BatchPromptTokens != 100 || sum.ByEndpoint[0].PromptTokens != 200 {
		t.Errorf("endpoint totals after the upgrade = %+v; want east's 100 batch prompt tokens of 200", sum.ByEndpoint)
	}
	rows, err = s.UsageRows(t.Context())
	if err != nil || len(rows) != 6 {
		t.Fatalf("UsageRows after the upgrade = %+v, %v", rows, err)
	}
	for _, r := range rows {
		want := 0
		switch {
		case r.Tick == 2 && r.EntityKey == "intention:ada":
			want = 100
		case r.Tick == 2 && r.EntityKey == "resolution:hall":
			want = 200
		}
		if r.BatchPromptTokens != want {
			t.Errorf("tick %d %s: %d batch prompt tokens, want %d", r.Tick, r.EntityKey, r.BatchPromptTokens, want)
		}
	}
	totals, err := s.Totals(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tot := range totals {
		if tot.EntityKey == "resolution:hall" && (tot.BatchCompletionTokens != 50 || tot.CompletionTokens != 160) {
			t.Errorf("totals of resolution:hall = %+v; want 50 batch completion tokens of 160", tot.Usage)
		}
	}
}

// TestUpgradeV7: a version 7 database (endpoint totals without the
// attempts each endpoint failed) reads as it is, with no failures; opened
// for a run it becomes version 8, and the ticks after it count the
// attempts each endpoint failed, an endpoint that answered none included.
func TestUpgradeV7(t *testing.T) {
	s, path := openTemp(t)
	old := record(1)
	old.Calls[0].Endpoint = "east"
	commit(t, s, old)
	if _, err := s.db.ExecContext(t.Context(), dropV9+"ALTER TABLE endpoint_totals DROP COLUMN endpoint_failures; PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a version 7 database: %v", err)
	}
	sum, err := ro.Summary(t.Context())
	ro.Close()
	if err != nil || len(sum.ByEndpoint) != 1 || sum.ByEndpoint[0].Calls != 1 || sum.ByEndpoint[0].EndpointFailures != 0 {
		t.Fatalf("read-only, the endpoints of a version 7 database = %+v, %v", sum.ByEndpoint, err)
	}

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of a version 7 database: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s); v != schemaVersion {
		t.Fatalf("user_version after the upgrade = %d, want %d", v, schemaVersion)
	}
	rec := record(2)
	rec.Calls[0].Endpoint, rec.Calls[0].EndpointFailures = "east", []string{"west", "west"}
	rec.Calls[1].EndpointFailures = []string{"west", "east"} // a call every endpoint failed, stored without one
	commit(t, s, rec)
	sum, err = s.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []GroupUsage{
		{Key: "east", Usage: Usage{Calls: 2, PromptTokens: 200, CompletionTokens: 40, CachedTokens: 100, LatencyMS: 240, EndpointFailures: 1}},
		{Key: "west", Usage: Usage{EndpointFailures: 3}},
	}
	if !reflect.DeepEqual(sum.ByEndpoint, want) {
		t.Errorf("endpoints after the upgrade = %+v, want %+v", sum.ByEndpoint, want)
	}
}

// TestUpgradeV8: a version 8 database (calls without prompt_truncated)
// reads as it is, no prompt truncated; opened for a run it becomes
// version 9, and the ticks after it store and count theirs.
func TestUpgradeV8(t *testing.T) {
	s, path := openTemp(t)
	commit(t, s, record(1))
	if _, err := s.db.ExecContext(t.Context(), dropV9+"PRAGMA user_version = 8"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a version 8 database: %v", err)
	}
	sum, err := ro.Summary(t.Context())
	calls, cerr := ro.Calls(t.Context(), 1)
	ro.Close()
	if err != nil || sum.TruncatedPrompts != 0 || sum.Total.Calls != 3 {
		t.Fatalf("read-only, the summary of a version 8 database = %+v, %v", sum, err)
	}
	if cerr != nil || len(calls) != 3 || calls[0].PromptTruncated {
		t.Fatalf("read-only, the calls of a version 8 database = %+v, %v", calls, cerr)
	}

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of a version 8 database: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s); v != 11 {
		t.Fatalf("user_version after the upgrade = %d, want 11", v)
	}
	rec := record(2)
	rec.Calls[0].PromptTruncated, rec.Calls[2].PromptTruncated = true, true
	commit(t, s, rec)
	rec = record(3)
	rec.Calls[2].PromptTruncated = true
	commit(t, s, rec)
	if sum, err := s.Summary(t.Context()); err != nil || sum.TruncatedPrompts != 3 {
		t.Fatalf("summary after two ticks with 2 and 1 truncated prompts = %d, %v; want 3", sum.TruncatedPrompts, err)
	}
	for tick, want := range map[int][]bool{1: {false, false, false}, 2: {true, false, true}, 3: {false, false, true}} {
		calls, err := s.Calls(t.Context(), tick)
		if err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, c := range calls {
			got = append(got, c.PromptTruncated)
		}
		if !slices.Equal(got, want) {
			t.Errorf("tick %d: calls' PromptTruncated %v, want %v", tick, got, want)
		}
	}
}

// schema9DB is a state.db written by the arbiter of schema version 9 (a
// run of demo-sim: see cmd/arbiter/testdata/v9run/README.md).
var schema9DB = filepath.Join("..", "cmd", "arbiter", "testdata", "v9run", "demo-sim", FileName)

// TestUpgradeSchema9File: a state.db the schema 9 arbiter wrote upgrades to
// version 10 and reads the same; an upgrade killed (SIGKILL) inside its
// transaction leaves it as it was, version 9, which then upgrades.
func TestUpgradeSchema9File(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	copyFile(t, schema9DB, path)
	before := readSnapshot(t, path, false)

	s := upgradeKilledThenDone(t, path, 9, before)
	defer s.Close()
	rec := longRecord(6)
	commit(t, s, rec)
	if st, err := s.State(t.Context(), 6); err != nil || string(st) != string(rec.State) {
		t.Errorf("tick 6 on the upgraded file: %s, %v", st, err)
	}
	if got, want := ticksOnly(snapshotThrough(t, s, 5)), ticksOnly(before); got != want {
		t.Errorf("after a tick on the upgraded file, ticks 1..5 read otherwise:%s", firstDifference(got, want))
	}
}

// upgradeKilledThenDone kills an upgrade of the file at path, of schema
// version from, inside its transaction (SIGKILL) and checks it is as it
// was, reading as before; then upgrades it, checks it reads as before and
// is of this schema version, and returns it open.
func upgradeKilledThenDone(t *testing.T, path string, from int, before string) *Store {
	t.Helper()
	cmd := helper(t, "upgrade", path, "1")
	cmd.Process.Kill()
	cmd.Wait()
	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, ro); v != from {
		t.Errorf("killed mid-upgrade, user_version = %d, want %d", v, from)
	}
	ro.Close()
	if got := readSnapshot(t, path, false); got != before {
		t.Errorf("killed mid-upgrade, the run reads otherwise:%s", firstDifference(got, before))
	}

	if got := readSnapshot(t, path, true); got != before {
		t.Errorf("upgraded, the run reads otherwise:%s", firstDifference(got, before))
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, s); v != schemaVersion {
		t.Errorf("user_version = %d, want %d", v, schemaVersion)
	}
	return s
}

// ticksOnly is a snapshot without the run's figures (which later ticks
// change): the ticks' own rows.
func ticksOnly(snap string) string {
	lines := strings.Split(snap, "\n")
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "summary: ") || strings.HasPrefix(l, "runs: ") || strings.HasPrefix(l, "usage: ")
	}), "\n")
}

// schema10DB is a state.db written by the arbiter of schema version 10 (the
// run of schema9DB made again: see cmd/arbiter/testdata/v10run/README.md).
var schema10DB = filepath.Join("..", "cmd", "arbiter", "testdata", "v10run", FileName)

// TestUpgradeSchema10File: a state.db the schema 10 arbiter wrote, its
// memory entries rows, upgrades to version 11 and reads the same; an
// upgrade killed (SIGKILL) inside its transaction leaves it as it was,
// version 10, which then upgrades. The ticks committed after it store
// their memory entries as bodies, and every reader reads the rows and the
// bodies as one run.
func TestUpgradeSchema10File(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	copyFile(t, schema10DB, path)
	before := readSnapshot(t, path, false)
	if !strings.Contains(before, `memories: [{"Tick":1,`) {
		t.Fatal("the schema 10 file reads no memories of tick 1")
	}

	s := upgradeKilledThenDone(t, path, 10, before)
	defer s.Close()
	old, err := s.Memories(t.Context(), 5)
	if err != nil || len(old) == 0 {
		t.Fatalf("the memories of ticks 1..5: %d, %v", len(old), err)
	}
	commit(t, s, memoryRecord(6, 2))
	var bodies int
	if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM memory_ticks").Scan(&bodies); err != nil || bodies != 1 {
		t.Errorf("memory bodies after tick 6: %d, %v; want 1", bodies, err)
	}
	all, err := s.Memories(t.Context(), 6)
	if want := append(slices.Clone(old), wantMemories(6, 6, 2, 0)...); err != nil || !reflect.DeepEqual(all, want) {
		t.Errorf("Memories(6) on the upgraded file = %v, %v\nwant %v", all, err, want)
	}
	// Each character's latest 4: the rows of ticks 1..5 for those of the
	// fixture, the body of tick 6 for the others.
	var ids []string
	per := map[string][]MemoryRecord{}
	for _, m := range all {
		if len(per[m.CharacterID]) == 0 {
			ids = append(ids, m.CharacterID)
		}
		per[m.CharacterID] = append(per[m.CharacterID], m)
	}
	var want []MemoryRecord
	for _, id := range ids {
		want = append(want, per[id][max(0, len(per[id])-4):]...)
	}
	slices.SortStableFunc(want, func(a, b MemoryRecord) int {
		return cmp.Or(cmp.Compare(a.Tick, b.Tick), strings.Compare(a.CharacterID, b.CharacterID))
	})
	if latest, err := s.LatestMemories(t.Context(), 6, 4, ids); err != nil || !reflect.DeepEqual(latest, want) || len(ids) < 6 {
		t.Errorf("LatestMemories(6, 4) of %v on the upgraded file = %v, %v\nwant %v", ids, latest, err, want)
	}
	if got, want := ticksOnly(snapshotThrough(t, s, 5)), ticksOnly(before); got != want {
		t.Errorf("after a tick on the upgraded file, ticks 1..5 read otherwise:%s", firstDifference(got, want))
	}
}

// TestNewDatabaseKeepsKeysOnce: in a new database texts, history and
// intentions are WITHOUT ROWID tables, with no index beside them holding
// their keys again; one upgraded from version 10 keeps its rowid tables
// (TestUpgradeSchema10File commits onto them).
func TestNewDatabaseKeepsKeysOnce(t *testing.T) {
	t.Parallel()
	indexes := func(s *Store) int {
		var n int
		if err := s.db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM sqlite_schema
			WHERE type = 'index' AND tbl_name IN ('texts', 'history', 'intentions')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	fresh, _ := openTemp(t)
	commit(t, fresh, longRecord(1))
	if n := indexes(fresh); n != 0 {
		t.Errorf("a new database has %d indexes on texts, history and intentions, want 0", n)
	}
	path := filepath.Join(t.TempDir(), FileName)
	copyFile(t, schema10DB, path)
	up, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if n := indexes(up); n != 3 {
		t.Errorf("an upgraded database has %d indexes on texts, history and intentions, want its 3", n)
	}
}
