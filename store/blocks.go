package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"
)

// A commit's new texts are written one after the other into blocks of
// about blockSize bytes, each compressed whole: the prompts of a tick share
// their templates and most names, which compressing each text alone cannot
// use (measured on a bench run of 1,000 characters: 577 bytes a text with
// S2 alone, 102 with zstd over 256 KiB blocks). A text's row in texts then
// says where in its block it is (bodyBlock). Reading a text decompresses its
// block, so a block is kept small enough to read in a fraction of a
// millisecond, and readers of many texts read each block once (textsOf).
const blockSize = 128 << 10

// zstdWindow is the encoder's window: a power of two, a block or more.
const zstdWindow = 256 << 10

// bodyBlock is the form byte of a text kept in a block: it is followed by
// the block's id, the text's offset in the block and its length, as
// unsigned varints.
const bodyBlock = 3

// zstd's encoder and decoder, made on first use; both are safe for
// concurrent use (EncodeAll, DecodeAll).
var (
	zstdOnce sync.Once
	zEnc     *zstd.Encoder
	zDec     *zstd.Decoder
)

func zstdCodec() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		// Neither fails with these options.
		// A window of a block: a block is compressed alone, and a state
		// past it finds its repeats nearby (a character's fields); the
		// default 8 MiB window kept 8 MiB of history per encoder.
		zEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true),
			zstd.WithWindowSize(zstdWindow))
		zDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	})
	return zEnc, zDec
}

func compress(b []byte) []byte {
	enc, _ := zstdCodec()
	return enc.EncodeAll(b, make([]byte, 0, len(b)/4))
}

func decompress(b []byte) ([]byte, error) {
	_, dec := zstdCodec()
	return dec.DecodeAll(b, nil)
}

// blockRef is a texts body saying where a text is: block id, offset, length.
func blockRef(id int64, off, n int) []byte {
	b := []byte{bodyBlock}
	b = binary.AppendUvarint(b, uint64(id))
	b = binary.AppendUvarint(b, uint64(off))
	return binary.AppendUvarint(b, uint64(n))
}

// parseBlockRef reads a body written by blockRef.
func parseBlockRef(body []byte) (id int64, off, n int, err error) {
	rest := body[1:]
	var v [3]uint64
	for i := range v {
		x, k := binary.Uvarint(rest)
		if k <= 0 {
			return 0, 0, 0, errors.New("a block reference cut short")
		}
		v[i], rest = x, rest[k:]
	}
	if len(rest) != 0 || v[0] > 1<<62 || v[1] > 1<<40 || v[2] > 1<<40 {
		return 0, 0, 0, errors.New("a block reference of unknown form")
	}
	return int64(v[0]), int(v[1]), int(v[2]), nil
}

// writeTexts writes the texts writeText was given and the requests
// writeCalls added that are not written yet (flushTexts), then the rows of
// texts, in the order of their keys: a key is a hash, so in the order they
// came each insert went to a page of the key's index anywhere in it, which
// grows every tick; in order, each page is visited once.
func writeTexts(w *tickWriter) {
	w.flushTexts()
	placed := w.placed
	w.placed = nil
	// In the order of their ids, which is that of their keys.
	slices.SortFunc(placed, func(a, b placedText) int { return bytes.Compare(a.id[:], b.id[:]) })
	for _, p := range placed {
		w.exec("texts", insertText, p.id.key(), blockRef(p.block, p.off, p.n))
	}
}

const insertText = "INSERT INTO texts (key, body) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"

// textChunk is how many of a commit's texts are held before they are
// written to their blocks: a tick at 100,000 characters writes about
// 440,000, and holding each until the last was read (its item, the start
// it is ordered by, what reads it) was tens of megabytes of the commit's
// memory. A chunk is larger than the texts of a tick at 10,000 characters,
// and enough alike texts for the blocks to compress as well as a whole
// tick's do.
const textChunk = 1 << 16

// addText adds a text or request to the commit's blocks, writing those
// held once there are textChunk of them.
func (w *tickWriter) addText(t pendingText) {
	w.texts = append(w.texts, blockItem{pendingText: t})
	if len(w.texts) >= w.chunk {
		w.flushTexts()
	}
}

// placedText is where a text of the commit is in its block: the row of
// texts that writeTexts writes for it, under its key's id.
type placedText struct {
	id     textID
	block  int64
	off, n int
}

// flushTexts writes the texts held to blocks: ordered by their content, so
// that texts alike (the prompts of characters in one place, say) share a
// block and compress together; the blocks are compressed in parallel. A
// request's place is written to its call (at), a text's kept for its row
// of texts (placed).
func (w *tickWriter) flushTexts() {
	items := w.texts
	defer func() {
		clear(items) // what reads each text, let go
		w.texts = items[:0]
	}()
	if w.err != nil || len(items) == 0 {
		return
	}
	if w.cold && !w.flushed {
		w.cold = w.anyTexts() // before this commit's own texts are in
	}
	w.flushed = true
	if w.cold {
		items = slices.DeleteFunc(items, func(it blockItem) bool { return it.key != "" && w.stored(it.key) })
	}
	// Only the start of each text is held to order them: the texts are read
	// again, a block at a time, as it is made (a tick's texts at once
	// were most of the commit's memory at 10,000 characters).
	for i := range items {
		it := &items[i]
		text, err := it.text()
		if err != nil {
			w.err = fmt.Errorf("write texts: text %s: %w", it.key, err)
			return
		}
		it.n, it.start = len(text), strings.Clone(text[:min(len(text), orderedBy)])
	}
	slices.SortStableFunc(items, func(a, b blockItem) int {
		return cmp.Or(cmp.Compare(len(a.key), len(b.key)), strings.Compare(a.start, b.start)) // requests first
	})
	if err := writeBlocks(w.ctx, w.tx, planBlocks(items)); err != nil {
		w.err = fmt.Errorf("write %w", err)
		return
	}
	for _, it := range items {
		if it.key == "" {
			continue
		}
		if id, ok := idOf(it.key); ok {
			w.placed = append(w.placed, placedText{id: id, block: it.block, off: it.off, n: it.n})
		} else { // not a key textKey made: its row now, as it is
			w.exec("texts", insertText, it.key, it.ref())
		}
	}
}

// anyTexts reports whether texts holds any text (not in a new database).
func (w *tickWriter) anyTexts() bool {
	var n int
	if err := w.tx.QueryRowContext(w.ctx, "SELECT EXISTS (SELECT 1 FROM texts)").Scan(&n); err != nil && w.err == nil {
		w.err = fmt.Errorf("read texts: %w", err)
	}
	return n > 0
}

// stored reports whether texts holds key already.
func (w *tickWriter) stored(key string) bool {
	var n int
	if err := w.tx.QueryRowContext(w.ctx, "SELECT COUNT(*) FROM texts WHERE key = ?", key).Scan(&n); err != nil && w.err == nil {
		w.err = fmt.Errorf("read texts: %w", err)
	}
	return n > 0
}

// orderedBy is how much of the start of each text orders a commit's texts
// in its blocks.
const orderedBy = 64

// blockItem is a text or request to write, of n bytes once read, with its
// start, and where it is once its block is written: a commit holds one a
// text, hundreds of thousands at 100,000 characters.
type blockItem struct {
	pendingText
	n     int
	start string
	block int64 // the block it is in, once written
	off   int   // its offset there
}

// ref is the texts body saying where it is.
func (it *blockItem) ref() []byte { return blockRef(it.block, it.off, it.n) }

// blockPlan is a block to write: the texts it holds, in order, and its
// compressed body.
type blockPlan struct {
	items []*blockItem
	body  []byte
}

// planBlocks groups items, in their order, in blocks of about blockSize.
func planBlocks(items []blockItem) []*blockPlan {
	var plans []*blockPlan
	cur, size := &blockPlan{}, 0
	for i := range items {
		cur.items = append(cur.items, &items[i])
		if size += items[i].n; size >= blockSize {
			plans, cur, size = append(plans, cur), &blockPlan{}, 0
		}
	}
	if len(cur.items) > 0 {
		plans = append(plans, cur)
	}
	return plans
}

// writeBlocks compresses the blocks on every core, a few at a time, and
// writes each, in order, with where each of its items is (ref; a request's
// also in at, when set). A block's body is let go once written: a tick's blocks at
// once were tens of megabytes of a large world's commit.
func writeBlocks(ctx context.Context, q querier, plans []*blockPlan) error {
	cores := runtime.GOMAXPROCS(0)
	for len(plans) > 0 {
		batch := plans[:min(len(plans), 2*cores)]
		plans = plans[len(batch):]
		var g errgroup.Group
		g.SetLimit(cores)
		for _, p := range batch {
			g.Go(p.compress)
		}
		if err := g.Wait(); err != nil {
			return fmt.Errorf("texts: %w", err)
		}
		for _, p := range batch {
			var id int64
			if err := q.QueryRowContext(ctx, "INSERT INTO blocks (body) VALUES (?) RETURNING id", p.body).Scan(&id); err != nil {
				return fmt.Errorf("blocks: %w", err)
			}
			p.body = nil
			off := 0
			for _, it := range p.items {
				it.block, it.off = id, off
				if it.key == "" && it.at != nil {
					*it.at = it.ref()
				}
				off += it.n
			}
		}
	}
	return nil
}

// compress reads the block's items into its body, compressed.
func (p *blockPlan) compress() error {
	size := 0
	for _, it := range p.items {
		size += it.n
	}
	b := make([]byte, 0, size)
	for _, it := range p.items {
		var text string
		if it.n > 0 {
			var err error
			if text, err = it.text(); err != nil {
				return fmt.Errorf("text %s: %w", it.key, err)
			}
		}
		if len(text) != it.n {
			return fmt.Errorf("text %s changed length", it.key)
		}
		b = append(b, text...)
	}
	p.body = compress(b)
	return nil
}

// textsOf reads the texts stored under keys, reading each block once. A
// key with no text is left out of the map.
func (s *Store) textsOf(ctx context.Context, keys []string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	st, err := s.db.PrepareContext(ctx, "SELECT body FROM texts WHERE key = ?")
	if err != nil {
		return nil, err
	}
	defer st.Close()
	type place struct {
		key    string
		off, n int
	}
	inBlock := map[int64][]place{}
	for _, key := range keys {
		if _, done := out[key]; done {
			continue
		}
		var body []byte
		err := st.QueryRowContext(ctx, key).Scan(&body)
		if errors.Is(err, sql.ErrNoRows) {
			continue // left out: the caller names what it belongs to
		}
		if err != nil {
			return nil, fmt.Errorf("text %s: %w", key, err)
		}
		if len(body) > 0 && body[0] == bodyBlock {
			id, off, n, err := parseBlockRef(body)
			if err != nil {
				return nil, fmt.Errorf("text %s: %w", key, err)
			}
			inBlock[id] = append(inBlock[id], place{key, off, n})
			out[key] = "" // found; filled below
			continue
		}
		if out[key], err = unpack(body); err != nil {
			return nil, fmt.Errorf("text %s: %w", key, err)
		}
	}
	for id, places := range inBlock {
		block, err := s.block(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, p := range places {
			if p.off+p.n > len(block) {
				return nil, fmt.Errorf("text %s: past the end of block %d", p.key, id)
			}
			out[p.key] = string(block[p.off : p.off+p.n])
		}
	}
	return out, nil
}

// block reads and decompresses block id.
func (s *Store) block(ctx context.Context, id int64) ([]byte, error) {
	return readBlock(ctx, s.db, id)
}

func readBlock(ctx context.Context, q querier, id int64) ([]byte, error) {
	var body []byte
	if err := q.QueryRowContext(ctx, "SELECT body FROM blocks WHERE id = ?", id).Scan(&body); err != nil {
		return nil, fmt.Errorf("block %d: %w", id, err)
	}
	b, err := decompress(body)
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", id, err)
	}
	return b, nil
}
