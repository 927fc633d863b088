package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// Compacted is what Compact did.
type Compacted struct {
	// DroppedThrough is the last tick whose prompt and answer texts are
	// gone (by this compaction or an earlier one); 0 when none are.
	DroppedThrough int   `json:"texts_dropped_through"`
	Calls          int   `json:"calls"` // the calls whose texts this compaction dropped
	BytesBefore    int64 `json:"bytes_before"`
	BytesAfter     int64 `json:"bytes_after"`
}

// Compact drops the prompt and answer texts of the calls of every tick
// but the last keep (their requests, raw answers and parsed outputs), and
// the past exchanges of those ticks except each entity's last depth (what
// a resumed run sends back), then every text and block nothing refers to
// any more. Every count, token, latency, cost, state, intention, output,
// memory and event is kept. It runs in one transaction, so a compaction
// interrupted at any point leaves the run as it was; the file is then
// rewritten without the freed pages (VACUUM, atomic too).
func (s *Store) Compact(ctx context.Context, keep, depth int) (_ Compacted, err error) {
	defer markDamaged(&err)
	if keep < 0 || depth < 0 {
		return Compacted{}, errors.New("compact: --keep-texts and the history depth must be 0 or more")
	}
	var c Compacted
	if c.BytesBefore, err = s.fileBytes(ctx); err != nil {
		return c, fmt.Errorf("compact: %w", err)
	}
	if err := s.compact(ctx, keep, depth, &c); err != nil {
		return c, fmt.Errorf("compact: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM"); err != nil {
		return c, fmt.Errorf("compact: rewrite the file: %w", err)
	}
	s.texts.keys.Store(nil) // the texts the last commit referred to may be gone
	if c.BytesAfter, err = s.fileBytes(ctx); err != nil {
		return c, fmt.Errorf("compact: %w", err)
	}
	return c, nil
}

func (s *Store) compact(ctx context.Context, keep, depth int, c *Compacted) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var last int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(tick), 0) FROM ticks").Scan(&last); err != nil {
		return err
	}
	through, err := droppedThrough(ctx, tx)
	if err != nil {
		return err
	}
	c.DroppedThrough = max(through, last-keep)
	touched := map[int64]bool{} // the blocks that lose a text or a request
	if err := blocksOf(ctx, tx, touched, "SELECT request_at FROM calls WHERE request_at IS NOT NULL AND tick <= ?", c.DroppedThrough); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE calls SET request_json = '[]', request_at = NULL, raw_response = '', answer_ref = '',
		parsed_output = '', parsed_same = 0, texts_dropped = 1 WHERE tick <= ? AND NOT texts_dropped`, c.DroppedThrough)
	if err != nil {
		return fmt.Errorf("drop the texts of calls: %w", err)
	}
	n, _ := res.RowsAffected()
	c.Calls = int(n)
	if _, err := tx.ExecContext(ctx, `DELETE FROM history WHERE tick <= ? AND seq <= (SELECT MAX(seq) FROM history h
		WHERE h.entity_key = history.entity_key) - ?`, c.DroppedThrough, depth); err != nil {
		return fmt.Errorf("drop past exchanges: %w", err)
	}
	if err := dropUnreferenced(ctx, tx, touched); err != nil {
		return err
	}
	if err := repack(ctx, tx, touched); err != nil {
		return fmt.Errorf("repack blocks: %w", err)
	}
	if c.DroppedThrough > 0 {
		if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('texts_dropped_through', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
			strconv.Itoa(c.DroppedThrough)); err != nil {
			return err
		}
	}
	if compactHook != nil {
		compactHook()
	}
	return tx.Commit()
}

// blocksOf adds to ids the block of each block reference query returns.
func blocksOf(ctx context.Context, tx *sql.Tx, ids map[int64]bool, query string, args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return err
		}
		if id, _, _, err := parseBlockRef(b); err == nil {
			ids[id] = true
		}
	}
	return rows.Err()
}

// compactHook, when set (by a test), runs inside the compaction's
// transaction just before it commits.
var compactHook func()

// dropUnreferenced deletes the texts no call, past exchange or output
// refers to (adding their blocks to touched), then the blocks no text or
// request is in.
func dropUnreferenced(ctx context.Context, tx *sql.Tx, touched map[int64]bool) error {
	live := map[string]bool{}
	add := func(query string, read func(string) []string) error {
		rows, err := tx.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				return err
			}
			for _, k := range read(v) {
				live[k] = true
			}
		}
		return rows.Err()
	}
	self := func(k string) []string { return []string{k} }
	for _, q := range []string{
		"SELECT answer_ref FROM calls WHERE answer_ref <> ''",
		"SELECT user_ref FROM history WHERE user_ref <> ''",
		"SELECT assistant_ref FROM history WHERE assistant_ref <> ''",
		"SELECT output_ref FROM outputs WHERE output_ref <> ''",
	} {
		if err := add(q, self); err != nil {
			return fmt.Errorf("read the texts in use: %w", err)
		}
	}
	if err := add("SELECT request_json FROM calls WHERE request_json <> '' AND NOT texts_dropped", requestRefs); err != nil {
		return fmt.Errorf("read the texts in use: %w", err)
	}
	if err := addBlockRequests(ctx, tx, live); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "CREATE TEMP TABLE IF NOT EXISTS live_texts (key TEXT PRIMARY KEY); DELETE FROM live_texts"); err != nil {
		return err
	}
	defer tx.ExecContext(ctx, "DROP TABLE IF EXISTS temp.live_texts")
	for k := range live {
		if _, err := tx.ExecContext(ctx, "INSERT INTO live_texts (key) VALUES (?)", k); err != nil {
			return err
		}
	}
	if err := blocksOf(ctx, tx, touched, "SELECT body FROM texts WHERE substr(body, 1, 1) = x'03' AND key NOT IN (SELECT key FROM live_texts)"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM texts WHERE key NOT IN (SELECT key FROM live_texts)"); err != nil {
		return fmt.Errorf("drop texts: %w", err)
	}
	return dropBlocks(ctx, tx)
}

// addBlockRequests adds to live the texts the requests kept in blocks
// refer to.
func addBlockRequests(ctx context.Context, tx *sql.Tx, live map[string]bool) error {
	rows, err := tx.QueryContext(ctx, "SELECT request_at FROM calls WHERE request_at IS NOT NULL")
	if err != nil {
		return err
	}
	var refs [][]byte
	for rows.Next() {
		var at []byte
		if err := rows.Scan(&at); err != nil {
			rows.Close()
			return err
		}
		refs = append(refs, at)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	blocks := map[int64][]byte{}
	for _, at := range refs {
		id, off, n, err := parseBlockRef(at)
		if err != nil {
			return err
		}
		if _, ok := blocks[id]; !ok {
			if blocks[id], err = readBlock(ctx, tx, id); err != nil {
				return err
			}
		}
		if b := blocks[id]; off+n <= len(b) {
			for _, k := range requestRefs(string(b[off : off+n])) {
				live[k] = true
			}
		}
	}
	return nil
}

// dropBlocks deletes the blocks no text or request is in.
func dropBlocks(ctx context.Context, tx *sql.Tx) error {
	live := map[int64]bool{}
	for _, q := range []string{"SELECT body FROM texts WHERE substr(body, 1, 1) = x'03'", "SELECT request_at FROM calls WHERE request_at IS NOT NULL"} {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				rows.Close()
				return err
			}
			if id, _, _, err := parseBlockRef(b); err == nil {
				live[id] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	var ids []int64
	rows, err := tx.QueryContext(ctx, "SELECT id FROM blocks")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		if !live[id] {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, "DELETE FROM blocks WHERE id = ?", id); err != nil {
			return fmt.Errorf("drop blocks: %w", err)
		}
	}
	return rows.Err()
}

// droppedThrough is the last tick a compaction dropped the texts of, 0
// when none did.
func droppedThrough(ctx context.Context, q querier) (int, error) {
	var v string
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'texts_dropped_through'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("meta texts_dropped_through %q: %w", v, err)
	}
	return n, nil
}

// TextsDroppedThrough returns the last tick whose prompt and answer texts
// a compaction dropped, 0 when none did.
func (s *Store) TextsDroppedThrough(ctx context.Context) (_ int, err error) {
	defer markDamaged(&err)
	return droppedThrough(ctx, s.db)
}

// fileBytes is the database's size: its pages in use and free.
func (s *Store) fileBytes(ctx context.Context) (int64, error) {
	var pages, size int64
	if err := s.db.QueryRowContext(ctx, "SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()").Scan(&pages, &size); err != nil {
		return 0, err
	}
	return pages * size, nil
}

// repack writes what is left in the blocks of touched (texts and requests
// still referred to) into new blocks, and deletes them: a block keeps no
// bytes nothing reads.
func repack(ctx context.Context, tx *sql.Tx, touched map[int64]bool) error {
	type owner struct {
		key    string // a text's, or "" for a call's request
		call   int64
		off, n int
	}
	in := map[int64][]owner{}
	for _, q := range []string{"SELECT key, 0, body FROM texts WHERE substr(body, 1, 1) = x'03'",
		"SELECT '', id, request_at FROM calls WHERE request_at IS NOT NULL"} {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		for rows.Next() {
			var o owner
			var at []byte
			if err := rows.Scan(&o.key, &o.call, &at); err != nil {
				rows.Close()
				return err
			}
			id, off, n, err := parseBlockRef(at)
			if err == nil && touched[id] {
				o.off, o.n = off, n
				in[id] = append(in[id], o)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	var items []blockItem
	var owners []owner
	for id, os := range in {
		block, err := readBlock(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, o := range os {
			if o.off+o.n > len(block) {
				return fmt.Errorf("block %d: a text past its end", id)
			}
			text := string(block[o.off : o.off+o.n])
			items = append(items, blockItem{pendingText: pendingText{key: o.key, text: func() (string, error) { return text, nil }}, n: o.n})
			owners = append(owners, o)
		}
	}
	if err := writeBlocks(ctx, tx, planBlocks(items)); err != nil {
		return err
	}
	for i, o := range owners {
		q, arg := "UPDATE texts SET body = ? WHERE key = ?", any(o.key)
		if o.key == "" {
			q, arg = "UPDATE calls SET request_at = ? WHERE id = ?", o.call
		}
		if _, err := tx.ExecContext(ctx, q, items[i].ref(), arg); err != nil {
			return err
		}
	}
	for id := range touched {
		if _, err := tx.ExecContext(ctx, "DELETE FROM blocks WHERE id = ?", id); err != nil {
			return err
		}
	}
	return nil
}
