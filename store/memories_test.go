package store

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// memoryRecord is a tick whose characters wrote n memory entries each,
// given out of order (as the calls ended), one character writing none.
func memoryRecord(tick, n int) *TickRecord {
	rec := &TickRecord{Tick: tick, State: stateAt(tick)}
	for i := range n {
		for _, id := range []string{"zoe", "al", "mo"} {
			rec.Memories = append(rec.Memories, MemoryRecord{CharacterID: id, Entry: fmt.Sprintf("%s at tick %d, entry %d", id, tick, i)})
		}
	}
	return rec
}

// wantMemories are the entries memoryRecord wrote in ticks from..to, as
// readers return them: in order of tick, character and entry; each
// character's latest last when last > 0.
func wantMemories(from, to, n, last int) []MemoryRecord {
	var out []MemoryRecord
	for tick := from; tick <= to; tick++ {
		for _, id := range []string{"al", "mo", "zoe"} {
			for i := range n {
				if last > 0 && (to-tick)*n+(n-i) > last {
					continue
				}
				out = append(out, MemoryRecord{tick, id, fmt.Sprintf("%s at tick %d, entry %d", id, tick, i)})
			}
		}
	}
	return out
}

// TestMemoriesInBodies: a tick's memory entries are stored as one body,
// and Memories, Story and LatestMemories read them back in order of tick,
// character and entry, a character's latest from the newest ticks.
func TestMemoriesInBodies(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	for tick := 1; tick <= 6; tick++ {
		commit(t, s, memoryRecord(tick, 2))
	}
	var rows, bodies int
	if err := s.db.QueryRowContext(t.Context(), "SELECT (SELECT COUNT(*) FROM memories), (SELECT COUNT(*) FROM memory_ticks)").Scan(&rows, &bodies); err != nil || rows != 0 || bodies != 6 {
		t.Fatalf("%d memories rows and %d bodies, %v; want 0 and 6", rows, bodies, err)
	}
	checkMemories(t, s, 6, 2)
}

// checkMemories fails unless every reader of memories reads what the
// ticks 1..last of memoryRecord(tick, n) wrote.
func checkMemories(t *testing.T, s *Store, last, n int) {
	t.Helper()
	ctx := t.Context()
	for upTo := 0; upTo <= last; upTo++ {
		got, err := s.Memories(ctx, upTo)
		if want := wantMemories(1, upTo, n, 0); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Memories(%d) = %v, %v\nwant %v", upTo, got, err, want)
		}
	}
	story, err := s.Story(ctx, 2, last)
	if want := wantMemories(2, last, n, 0); err != nil || !reflect.DeepEqual(story.Memories, want) {
		t.Errorf("Story(2, %d).Memories = %v, %v\nwant %v", last, story.Memories, err, want)
	}
	for _, depth := range []int{1, 3, n * last, n*last + 5} {
		ids := []string{"zoe", "mo", "al", "nobody"}
		got, err := s.LatestMemories(ctx, last-1, depth, ids)
		if want := wantMemories(1, last-1, n, depth); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("LatestMemories(%d, %d) = %v, %v\nwant %v", last-1, depth, got, err, want)
		}
	}
	got, err := s.LatestMemories(ctx, last, 3, []string{"mo"})
	want := slices.DeleteFunc(wantMemories(1, last, n, 3), func(m MemoryRecord) bool { return m.CharacterID != "mo" })
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("LatestMemories of mo = %v, %v\nwant %v", got, err, want)
	}
}

// TestMemoriesRowsThenBodies: a version 10 database, its memory entries
// rows, upgrades to version 11; the ticks after it store bodies, and every
// reader reads the rows and the bodies as one run, read-only before the
// upgrade too.
func TestMemoriesRowsThenBodies(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	for tick := 1; tick <= 3; tick++ {
		commit(t, s, memoryRecord(tick, 2))
	}
	toRows(t, s)
	s.Close()
	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	checkMemories(t, ro, 3, 2)
	ro.Close()

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for tick := 4; tick <= 6; tick++ {
		commit(t, s, memoryRecord(tick, 2))
	}
	var rows, bodies int
	if err := s.db.QueryRowContext(t.Context(), "SELECT (SELECT COUNT(*) FROM memories), (SELECT COUNT(*) FROM memory_ticks)").Scan(&rows, &bodies); err != nil || rows != 18 || bodies != 3 {
		t.Fatalf("%d memories rows and %d bodies, %v; want 18 and 3", rows, bodies, err)
	}
	checkMemories(t, s, 6, 2)
}

// TestMemoryBodyDamaged: a memory body that does not decompress, or whose
// decompressed bytes are not a body, is ErrDamaged naming its tick and the
// way out, for every reader.
func TestMemoryBodyDamaged(t *testing.T) {
	t.Parallel()
	for name, body := range map[string][]byte{
		"not zstd":           []byte("junk"),
		"empty":              compress(nil),
		"a count past":       compress([]byte{200, 1}),
		"a bad varint":       compress([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
		"cut short":          compress(append(appendString([]byte{2}, "ada"), 2, 5, 'a')),
		"no entries":         compress(append(appendString([]byte{1}, "ada"), 0)),
		"entries past":       compress(append(appendString([]byte{1}, "ada"), 200)),
		"an id cut off":      compress([]byte{1, 9, 'a'}),
		"fewer than counted": compress(appendString(append(appendString([]byte{2}, "ada"), 1), "one")),
		"more than counted":  compress(appendString(appendString(append(appendString([]byte{1}, "ada"), 2), "one"), "two")),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := openTemp(t)
			commit(t, s, memoryRecord(1, 1))
			commit(t, s, memoryRecord(2, 1))
			if _, err := s.db.ExecContext(t.Context(), "UPDATE memory_ticks SET body = ? WHERE tick = 2", body); err != nil {
				t.Fatal(err)
			}
			_, errAll := s.Memories(t.Context(), 2)
			_, errStory := s.Story(t.Context(), 1, 2)
			_, errLatest := s.LatestMemories(t.Context(), 2, 1, []string{"al"})
			for what, err := range map[string]error{"Memories": errAll, "Story": errStory, "LatestMemories": errLatest} {
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "the memories of tick 2 cannot be read") || !strings.Contains(err.Error(), "arbiter reset") {
					t.Errorf("%s: err = %v; want ErrDamaged naming tick 2", what, err)
				}
			}
			if got, err := s.Memories(t.Context(), 1); err != nil || len(got) != 3 {
				t.Errorf("Memories(1), before the damage: %v, %v", got, err)
			}
		})
	}
}

// FuzzMemoryBody: any entries round-trip through a body, and no bytes
// make the reader panic.
func FuzzMemoryBody(f *testing.F) {
	f.Add("ada", "a memory", "bo", "", []byte{3, 'a', 'd', 'a', 1, 0})
	f.Add("", "\x00\xff", "ada", "ünïcode", []byte{})
	f.Fuzz(func(t *testing.T, id1, entry1, id2, entry2 string, raw []byte) {
		mems := []MemoryRecord{{7, id2, entry2}, {7, id1, entry1}, {7, id2, entry1}}
		got, err := decodeMemories(7, encodeMemories(mems), nil)
		want := sortedBy(mems, func(m MemoryRecord) string { return m.CharacterID })
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip: %+v, %v; want %+v", got, err, want)
		}
		decodeMemories(1, compress(raw), nil)
		decodeMemories(1, raw, nil)
	})
}
