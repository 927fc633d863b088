package store

import (
	"bytes"
	"strings"
	"testing"
)

// TestDeltaRoundTrip: a delta reads back as the state it was made from,
// byte for byte, and a state that changed little makes a small delta.
func TestDeltaRoundTrip(t *testing.T) {
	t.Parallel()
	base := []byte(`{"tick":1,"characters":{"ada":{"location":"hall","mood":"calm, \"quiet\" {x}"},"bo":{"location":"yard","mood":"calm"}},"list":[1,2,3]}`)
	for _, next := range [][]byte{
		[]byte(`{"tick":2,"characters":{"ada":{"location":"hall","mood":"calm, \"quiet\" {x}"},"bo":{"location":"hall","mood":"calm"}},"list":[1,2,3]}`),
		base,
		[]byte(`{}`),
		[]byte(``),
		[]byte(`[1,2,3,"hall","calm",{"tick":1,"characters":{}}]`),
	} {
		d := makeDelta(base, next)
		got, err := applyDelta(base, d)
		if err != nil || !bytes.Equal(got, next) {
			t.Errorf("delta of %s read back as %s, %v", next, got, err)
		}
	}
	big := bytes.Repeat([]byte(`{"location":"hall","mood":"calm and quiet"},`), 200)
	next := bytes.Replace(big, []byte("hall"), []byte("yard"), 1)
	if d := makeDelta(big, next); len(d) > 100 {
		t.Errorf("one field changed in %d bytes: a delta of %d bytes", len(big), len(d))
	}
}

// TestDeltaDamaged: a delta that does not fit its base is an error, never
// a state.
func TestDeltaDamaged(t *testing.T) {
	t.Parallel()
	base := []byte(`{"a":1}`)
	for _, d := range [][]byte{{0x80}, {0x03, 0x20}, {0x09}, {0x20, 'x'}} {
		if got, err := applyDelta(base, d); err == nil {
			t.Errorf("applyDelta(%x) = %q, want an error", d, got)
		}
	}
}

// FuzzDelta: any delta of any two texts reads back as the second, and
// applyDelta on any bytes fails cleanly or reads something, never panics.
func FuzzDelta(f *testing.F) {
	f.Add([]byte(`{"a":[1,2],"b":"x,y"}`), []byte(`{"a":[1,3],"b":"x,y"}`))
	f.Add([]byte(`"\\"`), []byte(`{"\"":{}}`))
	f.Fuzz(func(t *testing.T, base, next []byte) {
		got, err := applyDelta(base, makeDelta(base, next))
		if err != nil || !bytes.Equal(got, next) {
			t.Fatalf("delta read back as %q, %v; want %q", got, err, next)
		}
		applyDelta(base, next) // next as a delta: an error or a state, no panic
	})
}

// TestStateBeforeLetGoAndReadBack: a commit lets go of the state before
// once its delta is made, so a commit that then fails leaves the store
// without it; the tick committed again reads it back and is stored as a
// delta all the same.
func TestStateBeforeLetGoAndReadBack(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	commit(t, s, longRecord(1))
	if s.last.tick != 1 || s.last.state == nil {
		t.Fatalf("after tick 1 the store holds the state of tick %d (%d bytes); want tick 1's", s.last.tick, len(s.last.state))
	}
	if _, err := s.db.ExecContext(t.Context(), `CREATE TRIGGER fail_history BEFORE INSERT ON history
		BEGIN SELECT RAISE(ABORT, 'disk full'); END`); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitTick(t.Context(), longRecord(2)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("commit with its history refused = %v, want the failure", err)
	}
	if s.last.state != nil {
		t.Errorf("a commit that made its delta still holds the state before (%d bytes)", len(s.last.state))
	}
	if _, err := s.db.ExecContext(t.Context(), "DROP TRIGGER fail_history"); err != nil {
		t.Fatal(err)
	}
	rec := longRecord(2)
	commit(t, s, rec)
	var base int
	if err := s.db.QueryRowContext(t.Context(), "SELECT base FROM states WHERE tick = 2").Scan(&base); err != nil || base != 1 {
		t.Errorf("tick 2 stored over base %d (%v); want a delta over tick 1", base, err)
	}
	if got, err := s.State(t.Context(), 2); err != nil || string(got) != string(rec.State) {
		t.Errorf("State(2) = %.80s, %v; want %.80s", got, err, rec.State)
	}
}
