package store

import (
	"bytes"
	stdflate "compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// withMessages gives record(tick)'s first call the messages a call of ada's
// sends at tick: the shared system prompt, her past exchanges (the last
// two ticks' answers) and a new user prompt; a tool turn rides along.
func withMessages(tick int) (*TickRecord, []Message) {
	system := "You play one character. " + strings.Repeat("The instructions every call shares. ", 20)
	msgs := []Message{{Role: "system", Content: system}}
	for past := max(1, tick-2); past < tick; past++ {
		msgs = append(msgs,
			Message{Role: "user", Content: fmt.Sprintf("Tick %d in the hall. %s", past, strings.Repeat("Bo was cooking. ", 10))},
			Message{Role: "assistant", Content: fmt.Sprintf(`{"intention":"at tick %d I %s"}`, past, strings.Repeat("look around ", 12))})
	}
	msgs = append(msgs,
		Message{Role: "assistant", Content: "", ToolCalls: json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"get_state","arguments":"{}"}}]`)},
		Message{Role: "tool", Content: "ok", ToolCallID: "c1"},
		Message{Role: "user", Content: fmt.Sprintf("Tick %d. %s", tick, strings.Repeat("Everything you see now. ", 12))})
	rec := record(tick)
	rec.Calls[0].Messages = msgs
	return rec, msgs
}

// sentMessages reads back the messages of call c of a tick, as Calls
// expands its request.
func sentMessages(t *testing.T, tick int, c CallRecord) []Message {
	t.Helper()
	var got []Message
	if err := json.Unmarshal([]byte(c.Request), &got); err != nil {
		t.Fatalf("tick %d: request %q: %v", tick, c.Request, err)
	}
	return got
}

// TestRequestTextsStoredOnce: a long message content is stored once, however
// many calls and ticks send it, and Calls reads every request back exactly
// as it was sent.
func TestRequestTextsStoredOnce(t *testing.T) {
	s, _ := openTemp(t)
	var sent [][]Message
	for tick := 1; tick <= 4; tick++ {
		rec, msgs := withMessages(tick)
		commit(t, s, rec)
		sent = append(sent, msgs)
	}
	// Long texts: the system prompt, each tick's user prompt and, from
	// tick 2 on, the exchange of the tick before (user and assistant).
	var texts int
	if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM texts").Scan(&texts); err != nil {
		t.Fatal(err)
	}
	if want := 1 + 4 + 2*3; texts != want {
		t.Errorf("%d texts stored, want %d (each once)", texts, want)
	}
	for tick := 1; tick <= 4; tick++ {
		calls, err := s.Calls(t.Context(), tick)
		if err != nil {
			t.Fatal(err)
		}
		if got := sentMessages(t, tick, calls[0]); !reflect.DeepEqual(got, sent[tick-1]) {
			t.Errorf("tick %d: read back\n%+v\nwant\n%+v", tick, got, sent[tick-1])
		}
		var stored string
		if err := s.db.QueryRowContext(t.Context(), "SELECT request_json FROM calls WHERE id = ?", calls[0].ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, "instructions every call shares") {
			t.Errorf("tick %d: the shared system prompt is stored inline: %s", tick, stored)
		}
	}
}

// TestRequestTextsScrubbed: what the store keeps of a message passes through
// its scrubber like everything else it writes.
func TestRequestTextsScrubbed(t *testing.T) {
	s, _ := openTemp(t)
	s.SetScrub(func(text string) string { return strings.ReplaceAll(text, "sk-secret", "[REDACTED]") })
	rec := record(1)
	rec.Calls[0].Messages = []Message{
		{Role: "system", Content: "key sk-secret " + strings.Repeat("long enough to be shared ", 10)},
		{Role: "user", Content: "sk-secret"},
	}
	commit(t, s, rec)
	var n int
	if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM texts WHERE body LIKE '%sk-secret%'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d texts hold the secret, %v", n, err)
	}
	calls, err := s.Calls(t.Context(), 1)
	if err != nil || strings.Contains(calls[0].Request, "sk-secret") || !strings.Contains(calls[0].Request, "[REDACTED]") {
		t.Errorf("request read back %q, %v; want the secret redacted", calls[0].Request, err)
	}
}

// TestRequestTextMissing: a request whose text is gone (a damaged
// database) is an error naming the call, not a silently shorter request.
func TestRequestTextMissing(t *testing.T) {
	s, _ := openTemp(t)
	rec, _ := withMessages(1)
	commit(t, s, rec)
	if _, err := s.db.ExecContext(t.Context(), "DELETE FROM texts"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Calls(t.Context(), 1)
	if err == nil || !strings.Contains(err.Error(), "read calls of tick 1: call 1: message 1: text") {
		t.Errorf("Calls with a text missing = %v; want an error naming the call and text", err)
	}
}

// TestTotalsMatchTheCalls: the running totals status and resume read are
// the sums of the calls stored, failures, repairs and fallbacks included.
func TestTotalsMatchTheCalls(t *testing.T) {
	s, _ := openTemp(t)
	commit(t, s, record(1), record(2), record(3))
	sum, err := s.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var fromCalls Usage
	if err := s.db.QueryRowContext(t.Context(), "SELECT "+s.usageColumns()+" FROM calls").Scan(fromCalls.scanArgs()...); err != nil {
		t.Fatal(err)
	}
	if sum.Total != fromCalls || sum.Total.Calls != 9 || sum.Total.FailedCalls != 3 || sum.Total.Repairs != 3 {
		t.Errorf("totals %+v, the calls sum to %+v", sum.Total, fromCalls)
	}
	if sum.Fallbacks != 6 || sum.ApplyErrors != 3 {
		t.Errorf("fallbacks %d, apply errors %d; want 6 and 3", sum.Fallbacks, sum.ApplyErrors)
	}
	if len(sum.ByEntity) != 3 || len(sum.ByPhase) != 2 || sum.ByPhase[1].Key != "resolution" || sum.ByPhase[1].Usage.PromptTokens != 900 {
		t.Errorf("by phase %+v, by entity %+v", sum.ByPhase, sum.ByEntity)
	}
	// A tick whose commit fails late, after its totals and texts were
	// written (its history, as a full disk would), adds nothing, and the
	// texts it wrote are not taken as stored by the next commit.
	if _, err := s.db.ExecContext(t.Context(), `CREATE TRIGGER fail_history BEFORE INSERT ON history
		BEGIN SELECT RAISE(ABORT, 'disk full'); END`); err != nil {
		t.Fatal(err)
	}
	texts := func() (n int) {
		if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM texts").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := texts()
	failing, msgs := withMessages(4)
	failing.History = append(failing.History, HistoryRecord{EntityKey: "intention:ada", User: msgs[len(msgs)-1].Content, Assistant: "ok"})
	if err := s.CommitTick(t.Context(), failing); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("commit with its history refused = %v, want the failure", err)
	}
	if again, err := s.Summary(t.Context()); err != nil || again.Total != sum.Total || again.Fallbacks != sum.Fallbacks || texts() != before {
		t.Errorf("after a failed commit: %+v, %v, %d texts (had %d)", again.Total, err, texts(), before)
	}
	if _, err := s.db.ExecContext(t.Context(), "DROP TRIGGER fail_history"); err != nil {
		t.Fatal(err)
	}
	retry, _ := withMessages(4)
	retry.Calls[0].Messages = nil
	retry.Calls[0].Prepared = s.PrepareRequest(msgs)
	commit(t, s, retry)
	calls, err := s.Calls(t.Context(), 4)
	if err != nil || !strings.Contains(calls[0].Request, "Everything you see now.") {
		t.Errorf("tick 4 after a failed commit reads back %v; want its texts stored", err)
	}
}

// TestHistoryTextsShared: a long past exchange is kept in texts, read back
// whole by History, and shares its text with the requests that resend it.
func TestHistoryTextsShared(t *testing.T) {
	s, _ := openTemp(t)
	user := "Tick 1 in the hall. " + strings.Repeat("Bo was cooking. ", 12)
	answer := `{"intention":"` + strings.Repeat("I look around. ", 12) + `"}`
	r1 := record(1)
	r1.History = []HistoryRecord{{EntityKey: "intention:ada", User: user, Assistant: answer}, {EntityKey: "intention:bo", User: "short", Assistant: "{}"}}
	r2 := record(2)
	r2.Calls[0].Messages = []Message{{Role: "user", Content: user}, {Role: "assistant", Content: answer}, {Role: "user", Content: "now?"}}
	r2.History = nil
	commit(t, s, r1, r2)

	hist, err := s.History(t.Context(), 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if h := hist["intention:ada"]; len(h) != 1 || h[0].User != user || h[0].Assistant != answer {
		t.Errorf("ada's history read back %+v", h)
	}
	if h := hist["intention:bo"]; len(h) != 1 || h[0].User != "short" || h[0].Assistant != "{}" {
		t.Errorf("bo's history read back %+v", h)
	}
	var texts int
	if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM texts").Scan(&texts); err != nil || texts != 2 {
		t.Errorf("%d texts, %v; want the exchange's two, shared by the request that resends them", texts, err)
	}
	if _, err := s.db.ExecContext(t.Context(), "DELETE FROM texts"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.History(t.Context(), 3, 2); err == nil || !strings.Contains(err.Error(), "read history of intention:ada: text") {
		t.Errorf("History with its text gone = %v; want an error naming the entity", err)
	}
}

// TestTextBodies: a long text is stored compressed and a short one as is,
// both read back whole; a body of no known form is an error, not a text.
func TestTextBodies(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("The lamp room is cold and the oil is low. ", 100)
	for _, text := range []string{long, "short enough to keep as it is"} {
		body := pack(text)
		if got, err := unpack(body); err != nil || got != text {
			t.Errorf("%d bytes: read back %d bytes, %v", len(text), len(got), err)
		}
		if compressed := body[0] == bodyS2; compressed != (len(text) >= minPacked) || (compressed && len(body) >= len(text)/2) {
			t.Errorf("%d bytes stored as form %d in %d bytes", len(text), body[0], len(body))
		}
	}
	for _, body := range [][]byte{nil, {7, 'x'}, {bodyDeflated, 0xff, 0xfe}, {bodyS2, 0xff, 0xfe}} {
		if _, err := unpack(body); err == nil {
			t.Errorf("body %v read as a text", body)
		}
	}
}

// TestTextKeyIsTheTextsHash: a text's key is the first 16 bytes of its
// SHA-256 in hex, whatever its length against the buffer it is hashed
// through, so texts stored by earlier versions keep their keys.
func TestTextKeyIsTheTextsHash(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 511, 512, 513, 1024, 3000} {
		text := strings.Repeat("é.", n)[:n]
		sum := sha256.Sum256([]byte(text))
		if got, want := textKey(text), hex.EncodeToString(sum[:16]); got != want {
			t.Errorf("textKey of %d bytes = %s, want %s", n, got, want)
		}
	}
}

// TestPreparedRequests: a request prepared as soon as its call is over
// (PrepareRequest, concurrently with other calls and with the last commit)
// is stored and read back exactly as its messages would be, each long text
// once, and it carries only the texts the last commit did not refer to.
func TestPreparedRequests(t *testing.T) {
	s, _ := openTemp(t)
	var sent [][]Message
	for tick := 1; tick <= 3; tick++ {
		rec, msgs := withMessages(tick)
		rec.Calls[0].Messages = nil
		rec.Calls[0].Prepared = s.PrepareRequest(msgs)
		if tick > 1 {
			// The system prompt and the older past exchange were in the
			// last commit: only the new texts are carried.
			if got := len(rec.Calls[0].Prepared.spooled); got != 3 {
				t.Errorf("tick %d: %d texts carried, want 3 (this tick's user prompt and the newest past exchange)", tick, got)
			}
		}
		// A second call of the tick sending the same messages: its texts
		// are written once.
		twin := rec.Calls[0]
		twin.EntityKey = "intention:bo"
		twin.Prepared = s.PrepareRequest(msgs)
		rec.Calls[1] = twin
		commit(t, s, rec)
		sent = append(sent, msgs)
	}
	var texts int
	if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM texts").Scan(&texts); err != nil {
		t.Fatal(err)
	}
	if want := 1 + 3 + 2*2; texts != want {
		t.Errorf("%d texts stored, want %d (each once)", texts, want)
	}
	checkSentBack(t, s, sent)
}

// checkSentBack checks that the first two calls of each tick read back
// with the messages sent at that tick, sent[tick-1].
func checkSentBack(t *testing.T, s *Store, sent [][]Message) {
	t.Helper()
	for tick := 1; tick <= len(sent); tick++ {
		calls, err := s.Calls(t.Context(), tick)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls[:2] {
			if got := sentMessages(t, tick, c); !reflect.DeepEqual(got, sent[tick-1]) {
				t.Errorf("tick %d, %s: read back\n%+v\nwant\n%+v", tick, c.EntityKey, got, sent[tick-1])
			}
		}
	}
}

// TestPreparedRequestScrubbed: a prepared request is scrubbed when it is
// prepared, its texts included.
func TestPreparedRequestScrubbed(t *testing.T) {
	s, _ := openTemp(t)
	s.SetScrub(func(text string) string { return strings.ReplaceAll(text, "sk-secret", "[REDACTED]") })
	rec := record(1)
	rec.Calls[0].Prepared = s.PrepareRequest([]Message{
		{Role: "system", Content: "key sk-secret " + strings.Repeat("long enough to be shared ", 10)},
		{Role: "user", Content: "sk-secret"},
	})
	commit(t, s, rec)
	calls, err := s.Calls(t.Context(), 1)
	if err != nil || strings.Contains(calls[0].Request, "sk-secret") || !strings.Contains(calls[0].Request, "[REDACTED]") {
		t.Errorf("request read back %q, %v; want the secret redacted", calls[0].Request, err)
	}
}

// TestDeflatedBodiesRead: bodies the versions before 5 wrote, DEFLATE
// (by the standard library's compressor, then klauspost's), read back.
func TestDeflatedBodiesRead(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("Tick 12: I traded what I knew about the ledger for a rumour. ", 80)
	var old bytes.Buffer
	old.WriteByte(bodyDeflated)
	zw, _ := stdflate.NewWriter(&old, stdflate.BestSpeed)
	io.WriteString(zw, text)
	zw.Close()
	if got, err := unpack(old.Bytes()); err != nil || got != text {
		t.Errorf("a DEFLATE body reads back as %d bytes, %v", len(got), err)
	}
}

// TestCommitKeepsEachOnesOrder: a commit writes memories, past exchanges
// and texts in the order of their keys, and each character's memories
// and each entity's exchanges still read back in the order given.
func TestCommitKeepsEachOnesOrder(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	long := func(who string, n int) string {
		return fmt.Sprintf("%s %d: %s", who, n, strings.Repeat("a long exchange ", 10))
	}
	rec := &TickRecord{Tick: 1, State: stateAt(1),
		Memories: []MemoryRecord{{CharacterID: "zoe", Entry: "z1"}, {CharacterID: "al", Entry: "a1"}, {CharacterID: "zoe", Entry: "z2"}, {CharacterID: "al", Entry: "a2"}},
		Calls:    []CallRecord{{Phase: "intention", EntityKey: "intention:zoe"}, {Phase: "intention", EntityKey: "intention:al"}},
	}
	for n := 1; n <= 2; n++ {
		for _, who := range []string{"intention:zoe", "intention:al"} {
			rec.History = append(rec.History, HistoryRecord{EntityKey: who, User: long(who, n), Assistant: fmt.Sprintf("answer %d", n)})
		}
	}
	if err := s.CommitTick(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	mems, err := s.Memories(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []MemoryRecord{{1, "al", "a1"}, {1, "al", "a2"}, {1, "zoe", "z1"}, {1, "zoe", "z2"}}; !reflect.DeepEqual(mems, want) {
		t.Errorf("memories %+v, want %+v", mems, want)
	}
	hist, err := s.History(t.Context(), 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"intention:zoe", "intention:al"} {
		want := []HistoryRecord{{who, long(who, 1), "answer 1"}, {who, long(who, 2), "answer 2"}}
		if !reflect.DeepEqual(hist[who], want) {
			t.Errorf("history of %s: %+v, want %+v", who, hist[who], want)
		}
	}
}

// TestPreparedScansOnlyNewTexts: preparing a request scans for secrets
// only the texts the last commit did not store (stored scrubbed, they
// have nothing left to find), and a text holding a secret, which hashes
// unlike its stored form, is still scrubbed.
func TestPreparedScansOnlyNewTexts(t *testing.T) {
	s, _ := openTemp(t)
	var mu sync.Mutex
	var scanned []string
	s.SetScrub(func(text string) string {
		mu.Lock()
		scanned = append(scanned, text)
		mu.Unlock()
		return strings.ReplaceAll(text, "sk-secret", "[REDACTED]")
	})
	shared := "The instructions every call shares. " + strings.Repeat("long enough to be stored once ", 10)
	secret := "The key is sk-secret. " + strings.Repeat("long enough to be stored once ", 10)
	rec := record(1)
	rec.Calls[0].Messages = []Message{{Role: "system", Content: shared}, {Role: "user", Content: secret}}
	commit(t, s, rec)

	fresh := "Tick 2. " + strings.Repeat("what is new this tick ", 10)
	mu.Lock()
	scanned = nil
	mu.Unlock()
	p := s.prepare([]Message{{Role: "system", Content: shared}, {Role: "user", Content: secret}, {Role: "user", Content: fresh}})
	if slices.Contains(scanned, shared) {
		t.Error("a text the last commit stored was scanned again")
	}
	if !slices.Contains(scanned, secret) || !slices.Contains(scanned, fresh) {
		t.Errorf("scanned %q; want the text with a secret and the new one", scanned)
	}
	refs := requestRefs(p.json)
	if len(refs) != 3 || len(p.texts) != 1 || p.texts[0].key != textKey(fresh) {
		t.Fatalf("prepared %d refs and %d new texts; want 3 refs and the new text alone", len(refs), len(p.texts))
	}
	if refs[1] != textKey(strings.ReplaceAll(secret, "sk-secret", "[REDACTED]")) {
		t.Errorf("the text with a secret refers to %s, not its scrubbed form", refs[1])
	}
}

// TestHistorySeqsAcrossStores: a store numbers an entity's past exchanges
// after the last one in the database, whoever committed it: its own count
// is used only when it committed the last tick itself.
func TestHistorySeqsAcrossStores(t *testing.T) {
	t.Parallel()
	a, path := openTemp(t)
	b, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	exchange := func(tick int) *TickRecord {
		rec := record(tick)
		rec.Calls = []CallRecord{{Phase: "intention", EntityKey: "intention:ada"}}
		rec.History = []HistoryRecord{{EntityKey: "intention:ada", User: fmt.Sprint("asked at ", tick), Assistant: fmt.Sprint("answered at ", tick)}}
		return rec
	}
	commit(t, a, exchange(1))
	commit(t, b, exchange(2)) // b has not committed: it reads the last seq
	if err := a.CommitTick(t.Context(), exchange(2)); !errors.Is(err, ErrTickOrder) {
		t.Fatalf("a committing tick 2 again: %v, want ErrTickOrder", err)
	}
	commit(t, a, exchange(3), exchange(4)) // a's count is of tick 1: it reads again, then counts
	hist, err := b.History(t.Context(), 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist["intention:ada"] {
		got = append(got, h.User)
	}
	if want := []string{"asked at 1", "asked at 2", "asked at 3", "asked at 4"}; !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
}

// chunkTick is spooledTick with long answers, past exchanges and outputs
// besides, so that the tick's commit writes a text of each kind.
func chunkTick(t *testing.T, s *Store, tick int) (*TickRecord, []Message) {
	t.Helper()
	rec, msgs := spooledTick(t, s, tick)
	long := func(what string) string {
		return fmt.Sprintf("%s of tick %d: %s", what, tick, strings.Repeat("the bell rang twice and no one came. ", 6))
	}
	rec.Calls[0].Raw, rec.Calls[0].Output = long("answer"), long("answer")
	rec.Calls[2].Output = long("output")
	rec.Outputs[0].Output = long("a location's output")
	rec.History[0].Assistant = long("ada's answer")
	rec.History[1].User = long("the hall's record")
	return rec, msgs
}

// blockBytes is how many bytes of texts and requests s holds in its
// blocks, read whole.
func blockBytes(t *testing.T, s *Store) int {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), "SELECT id FROM blocks")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	n := 0
	for _, id := range ids {
		b, err := s.block(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		n += len(b)
	}
	return n
}

// TestCommitInChunksStoredAsWhole: a commit whose texts are written to
// their blocks a few at a time (textChunk) stores what one holding them
// all stores, read back row for row, the same texts and requests in more
// blocks; and so does a resumed run's first commit, which is given again
// texts the database holds already, and writes none of them again.
func TestCommitInChunksStoredAsWhole(t *testing.T) {
	chunked, chunkedPath := openTemp(t)
	whole, _ := openTemp(t)
	var sent [][]Message
	commitBoth := func(tick int) {
		chunked.textChunk = 2
		for _, s := range []*Store{chunked, whole} {
			rec, msgs := chunkTick(t, s, tick)
			commit(t, s, rec)
			if s == whole {
				sent = append(sent, msgs)
			}
		}
	}
	for tick := 1; tick <= 3; tick++ {
		commitBoth(tick)
	}
	// Resumed: a store that has committed nothing yet looks up the texts
	// it is given in the database first (tickWriter.cold), and writes as
	// one that goes on.
	chunked.Close()
	var err error
	if chunked, err = Open(t.Context(), chunkedPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chunked.Close() })
	commitBoth(4)

	for tick := 1; tick <= 4; tick++ {
		sameReadBack(t, fmt.Sprintf("tick %d: calls", tick), chunked, whole, func(s *Store) (any, error) { return s.Calls(t.Context(), tick) })
	}
	checkSentBack(t, chunked, sent)
	sameReadBack(t, "past exchanges", chunked, whole, func(s *Store) (any, error) { return s.History(t.Context(), 4, 4) })
	sameReadBack(t, "story", chunked, whole, func(s *Store) (any, error) { return s.Story(t.Context(), 1, 4) })
	if a, b := rowCounts(t, chunked), rowCounts(t, whole); !reflect.DeepEqual(a, b) {
		t.Errorf("rows %v written in chunks, %v whole", a, b)
	}
	count := func(s *Store, table string) int {
		var n int
		if err := s.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if a, b := count(chunked, "texts"), count(whole, "texts"); a != b {
		t.Errorf("%d texts written in chunks, %d whole", a, b)
	}
	if a, b := count(chunked, "blocks"), count(whole, "blocks"); a <= b {
		t.Errorf("%d blocks written in chunks of 2 texts, %d whole: the commits were not written in chunks", a, b)
	}
	if a, b := blockBytes(t, chunked), blockBytes(t, whole); a != b {
		t.Errorf("%d bytes of texts and requests in blocks written in chunks, %d whole", a, b)
	}
}

// TestKeySetHoldsTextKeys: a set of text keys holds each key textKey
// makes, which its id gives back; a key textKey could not have made is
// never in it.
func TestKeySetHoldsTextKeys(t *testing.T) {
	t.Parallel()
	s := keySet{}
	a, b := textKey("the first text"), textKey("the second text")
	s.add(a)
	if !s.has(a) || s.has(b) {
		t.Errorf("set with %s has it %v, has %s %v", a, s.has(a), b, s.has(b))
	}
	if id, ok := idOf(a); !ok || id.key() != a {
		t.Errorf("idOf(%s) = %v, %v; its key %s", a, id, ok, id.key())
	}
	for _, odd := range []string{"", "odd", strings.Repeat("g", 32), strings.ToUpper(a)[:31], strings.ToUpper(a)} {
		s.add(odd)
		if s.has(odd) || len(s) != 1 {
			t.Errorf("key %q: in the set %v, %d keys", odd, s.has(odd), len(s))
		}
	}
}

// TestTextOfAnOddKeyStored: a prepared request's text under a key
// textKey did not make (a spool read back wrong, say) is stored under it
// all the same, and the request reads back whole.
func TestTextOfAnOddKeyStored(t *testing.T) {
	s, _ := openTemp(t)
	text := strings.Repeat("A text long enough to be shared by reference. ", 5)
	rec := record(1)
	rec.Calls[0].Request = ""
	rec.Calls[0].Prepared = &PreparedRequest{
		json:  `[{"role":"user","ref":"odd-key"}]`,
		texts: []storedText{{key: "odd-key", held: s.dicts.hold(text)}},
	}
	commit(t, s, rec)
	calls, err := s.Calls(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentMessages(t, 1, calls[0]); len(got) != 1 || got[0].Content != text {
		t.Errorf("request read back %+v; want the text under its odd key", got)
	}
}

// sameReadBack checks that read gives the same of chunked as of whole.
func sameReadBack(t *testing.T, what string, chunked, whole *Store, read func(*Store) (any, error)) {
	t.Helper()
	a, err := read(chunked)
	if err != nil {
		t.Fatal(err)
	}
	b, err := read(whole)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s written in chunks read back\n%+v\nwritten whole\n%+v", what, a, b)
	}
}
