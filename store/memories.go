package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// A tick's memory entries are stored together, one body a tick in
// memory_ticks, compressed (zstd): an export lists every entry written up
// to its tick, and read as a row each (about 1 µs a row, an index entry
// or two beside each) the 200,000 entries of 20 ticks of 10,000
// characters took 200 ms. A body is the number of its entries, then, for
// each character that wrote entries in the tick, in order of its id: the
// id, the number of its entries, then each entry in its order; a string is
// an unsigned varint length and its bytes, a number an unsigned varint.
// The ticks stored before version 11 keep their entries as rows of
// memories, which every reader reads as well (they are the ticks before
// the first body).

// encodeMemories is the stored body of a tick's memory entries.
func encodeMemories(mems []MemoryRecord) []byte {
	sorted := sortedBy(mems, func(m MemoryRecord) string { return m.CharacterID })
	size := binary.MaxVarintLen64
	for _, m := range sorted {
		size += len(m.CharacterID) + len(m.Entry) + 2*binary.MaxVarintLen16
	}
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(len(sorted)))
	for i := 0; i < len(sorted); {
		id := sorted[i].CharacterID
		j := i + 1
		for j < len(sorted) && sorted[j].CharacterID == id {
			j++
		}
		b = appendString(b, id)
		b = binary.AppendUvarint(b, uint64(j-i))
		for _, m := range sorted[i:j] {
			b = appendString(b, m.Entry)
		}
		i = j
	}
	return compress(b)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errMemoryBody is a body encodeMemories did not write.
var errMemoryBody = errors.New("a memory body of unknown form")

// memoryBody is a body decompressed, its number of entries read: n, then
// the entries in rest.
type memoryBody struct {
	tick int
	n    int
	rest []byte
}

// openMemories decompresses the body of tick's entries and reads their
// number.
func openMemories(tick int, body []byte) (memoryBody, error) {
	plain, err := decompress(body)
	if err != nil {
		return memoryBody{}, err
	}
	n, k := binary.Uvarint(plain)
	if k <= 0 || n > uint64(len(plain)) {
		return memoryBody{}, errMemoryBody
	}
	return memoryBody{tick: tick, n: int(n), rest: plain[k:]}, nil
}

// decode appends to out the entries of the body, in order of character
// and entry. The strings are parts of one string the size of the body.
func (b memoryBody) decode(out []MemoryRecord) ([]MemoryRecord, error) {
	all, at := string(b.rest), 0
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b.rest[at:])
		if n <= 0 {
			return 0, false
		}
		at += n
		return v, true
	}
	str := func() (string, bool) {
		n, ok := next()
		if !ok || n > uint64(len(all)-at) {
			return "", false
		}
		at += int(n)
		return all[at-int(n) : at], true
	}
	first := len(out)
	for at < len(all) {
		id, ok := str()
		n, okN := next()
		if !ok || !okN || n == 0 || n > uint64(len(all)-at) {
			return out, errMemoryBody
		}
		for range n {
			entry, ok := str()
			if !ok {
				return out, errMemoryBody
			}
			out = append(out, MemoryRecord{Tick: b.tick, CharacterID: id, Entry: entry})
		}
	}
	if len(out)-first != b.n {
		return out, errMemoryBody
	}
	return out, nil
}

// decodeMemories appends to out the entries of tick that body holds, in
// order of character and entry.
func decodeMemories(tick int, body []byte, out []MemoryRecord) ([]MemoryRecord, error) {
	b, err := openMemories(tick, body)
	if err != nil {
		return out, err
	}
	return b.decode(slices.Grow(out, b.n))
}

// writeMemories writes the tick's memory entries as one body; a tick that
// wrote none has no row.
func writeMemories(w *tickWriter, mems []MemoryRecord) {
	if len(mems) == 0 {
		return
	}
	w.exec("memory_ticks", "INSERT INTO memory_ticks (tick, body) VALUES (?, ?)", w.tick, encodeMemories(mems))
}

// Memories returns every memory entry of ticks 1..upTo, in order of tick,
// character and entry.
func (s *Store) Memories(ctx context.Context, upTo int) (_ []MemoryRecord, err error) {
	defer markDamaged(&err)
	out, err := s.memories(ctx, 1, upTo)
	if err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	return out, nil
}

// memories returns the memory entries of ticks from..to, in order of tick,
// character and entry: the rows of the ticks stored before version 11,
// then the bodies of those after.
func (s *Store) memories(ctx context.Context, from, to int) ([]MemoryRecord, error) {
	var out []MemoryRecord
	err := s.scan(ctx, func(scan func(...any) error) error {
		var m MemoryRecord
		if err := scan(&m.Tick, &m.CharacterID, &m.Entry); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	}, "SELECT tick, character_id, entry FROM memories WHERE tick BETWEEN ? AND ? ORDER BY tick, character_id, seq", from, to)
	if err != nil || s.version < 11 {
		return out, err
	}
	// Every body is opened first, so that the entries are decoded into
	// one array of their number (hundreds of thousands in an export).
	var bodies []memoryBody
	n := len(out)
	err = s.scan(ctx, func(scan func(...any) error) error {
		var (
			tick int
			body []byte
		)
		if err := scan(&tick, &body); err != nil {
			return err
		}
		b, err := openMemories(tick, body)
		if err != nil {
			return damagedMemories(tick, err)
		}
		bodies, n = append(bodies, b), n+b.n
		return nil
	}, "SELECT tick, body FROM memory_ticks WHERE tick BETWEEN ? AND ? ORDER BY tick", from, to)
	if err != nil {
		return nil, err
	}
	out = slices.Grow(out, n-len(out))
	for _, b := range bodies {
		if out, err = b.decode(out); err != nil {
			return nil, damagedMemories(b.tick, err)
		}
	}
	return out, nil
}

func damagedMemories(tick int, err error) error {
	return fmt.Errorf("%w: the memories of tick %d cannot be read (%v); %s", ErrDamaged, tick, err, recovery)
}

// LatestMemories returns each given character's latest last memory entries
// of ticks 1..upTo (what prompts show; last > 0), in order of tick,
// character and entry. It reads the ticks' bodies newest first and stops once every
// character has its last entries, so its time does not grow with the
// number of ticks stored (unless a character wrote fewer than last).
func (s *Store) LatestMemories(ctx context.Context, upTo, last int, characterIDs []string) (_ []MemoryRecord, err error) {
	defer markDamaged(&err)
	need := make(map[string]int, len(characterIDs))
	for _, id := range characterIDs {
		need[id] = last
	}
	var out []MemoryRecord
	if s.version >= 11 && last > 0 {
		if out, err = s.latestBodies(ctx, upTo, need); err != nil {
			return nil, fmt.Errorf("read memories: %w", err)
		}
	}
	if out, err = s.latestRows(ctx, upTo, need, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b MemoryRecord) int {
		return cmp.Or(cmp.Compare(a.Tick, b.Tick), cmp.Compare(a.CharacterID, b.CharacterID))
	})
	return out, nil
}

// latestBodies reads the bodies of ticks upTo and before, newest first,
// taking each character's latest entries while need says it lacks some
// (and counting them off), until none lacks any.
func (s *Store) latestBodies(ctx context.Context, upTo int, need map[string]int) ([]MemoryRecord, error) {
	short := len(need)
	rows, err := s.db.QueryContext(ctx, "SELECT tick, body FROM memory_ticks WHERE tick <= ? ORDER BY tick DESC", upTo)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out, tick []MemoryRecord
	for short > 0 && rows.Next() {
		var (
			t    int
			body []byte
		)
		if err := rows.Scan(&t, &body); err != nil {
			return nil, err
		}
		if tick, err = decodeMemories(t, body, tick[:0]); err != nil {
			return nil, damagedMemories(t, err)
		}
		for i := 0; i < len(tick); {
			id := tick[i].CharacterID
			j := i + 1
			for j < len(tick) && tick[j].CharacterID == id {
				j++
			}
			if n := need[id]; n > 0 {
				out = append(out, tick[max(i, j-n):j]...) // its latest of the tick
				need[id] = max(0, n-(j-i))
				if need[id] == 0 {
					short--
				}
			}
			i = j
		}
	}
	return out, rows.Err()
}

// latestRows appends to out, for each character need says lacks entries,
// its latest of those stored as rows (the ticks before version 11), up to
// tick upTo.
func (s *Store) latestRows(ctx context.Context, upTo int, need map[string]int, out []MemoryRecord) ([]MemoryRecord, error) {
	var rowsUpTo sql.NullInt64 // the last tick stored as rows
	if err := s.db.QueryRowContext(ctx, "SELECT MAX(tick) FROM memories").Scan(&rowsUpTo); err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	if !rowsUpTo.Valid {
		return out, nil
	}
	st, err := s.db.PrepareContext(ctx, `SELECT tick, entry FROM memories WHERE character_id = ? AND tick <= ?
		ORDER BY tick DESC, seq DESC LIMIT ?`)
	if err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	defer st.Close()
	for id, n := range need {
		if n <= 0 {
			continue
		}
		rows, err := st.QueryContext(ctx, id, min(int64(upTo), rowsUpTo.Int64), n)
		if err != nil {
			return nil, fmt.Errorf("read memories of %s: %w", id, err)
		}
		first := len(out)
		for rows.Next() {
			m := MemoryRecord{CharacterID: id}
			if err := rows.Scan(&m.Tick, &m.Entry); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read memories of %s: %w", id, err)
			}
			out = append(out, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read memories of %s: %w", id, err)
		}
		slices.Reverse(out[first:]) // oldest first
	}
	return out, nil
}
