package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/klauspost/compress/s2"
)

// A tick's calls wait for its commit with their requests prepared
// (PrepareRequest): about 0.9 KB a call at 100,000 characters, most of what
// a tick holds of its calls, and a tick is held beside the one committing.
// A store writes each prepared request to a spool, files beside state.db,
// and keeps in memory only where it is; the commit reads each text back as
// it writes it, so neither the tick in flight nor the one committing holds
// its requests.
//
// Each spool file is removed from its folder as soon as it is made (where
// the system allows it): the process keeps it open, and nothing of it
// outlasts the process, a crash included. A file takes requests up to
// spoolFileSize, then a new one is made; an old file is closed, and its
// space freed, once the last request in it is garbage (its tick committed
// or dropped). A file that cannot be made or written (a full disk) turns
// the spool off: the requests are held in memory from then on, as they
// were before there was a spool, and the tick goes on.

// spoolFileSize is how much a spool file takes before a new one is made.
const spoolFileSize = 64 << 20

// spoolPattern names the spool files (os.CreateTemp).
const spoolPattern = ".arbiter-spool-*"

type spool struct {
	dir      string
	fileSize int64 // spoolFileSize; smaller in tests

	mu  sync.Mutex
	cur *spoolFile // the file taking requests; nil before the first
	off bool       // a file could not be made or written: requests stay in memory
}

// spoolFile is one file of a spool. The requests written to it refer to
// it; once none does, a cleanup closes it.
type spoolFile struct {
	f    *os.File
	size int64 // bytes handed out; guarded by spool.mu
}

// put writes b to the spool and returns where it is; ok is false when the
// spool is off (b was not written, and will not be).
func (sp *spool) put(b []byte) (_ *spoolFile, off int64, ok bool) {
	sp.mu.Lock()
	if sp.off {
		sp.mu.Unlock()
		return nil, 0, false
	}
	if sp.cur == nil || sp.cur.size > 0 && sp.cur.size+int64(len(b)) > sp.fileSize {
		f, err := newSpoolFile(sp.dir)
		if err != nil {
			sp.off = true
			sp.mu.Unlock()
			return nil, 0, false
		}
		sp.cur = f
	}
	// The place is taken under the lock, the bytes written outside it:
	// calls ending at once write at once.
	file := sp.cur
	off = file.size
	file.size += int64(len(b))
	sp.mu.Unlock()
	if _, err := file.f.WriteAt(b, off); err != nil {
		sp.mu.Lock()
		sp.off = true
		sp.mu.Unlock()
		return nil, 0, false
	}
	return file, off, true
}

// close closes the file taking requests: the store is closing, and no
// commit will read it.
func (sp *spool) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.cur != nil {
		sp.cur.f.Close()
		sp.cur, sp.off = nil, true
	}
}

func newSpoolFile(dir string) (*spoolFile, error) {
	f, err := os.CreateTemp(dir, spoolPattern)
	if err != nil {
		return nil, err
	}
	left := ""
	if os.Remove(f.Name()) != nil {
		left = f.Name() // a system that cannot remove an open file: removed once closed
	}
	sf := &spoolFile{f: f}
	runtime.AddCleanup(sf, closeSpoolFile, openSpoolFile{f, left})
	return sf, nil
}

type openSpoolFile struct {
	f    *os.File
	name string // still in its folder: remove it once closed
}

func closeSpoolFile(o openSpoolFile) {
	o.f.Close()
	if o.name != "" {
		os.Remove(o.name)
	}
}

// read reads n bytes at off.
func (f *spoolFile) read(off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := f.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("read a prepared request back from its spool file in %s: %w", filepath.Dir(f.f.Name()), err)
	}
	return b, nil
}

// spooledText is a new text of a spooled request: after the request's JSON
// in the spool come the keys of its texts, then their bodies, key and body
// bytes long.
type spooledText struct {
	dict      *s2.Dict // what the body is packed against; nil: packed alone
	key, body int32
}

// spoolRequest writes p's JSON and new texts to the store's spool, and has
// p keep only where they are; p stays as it is when the store has no spool
// or it is off.
func (s *Store) spoolRequest(p *PreparedRequest) {
	if s.spool == nil {
		return
	}
	// The JSON, then the texts' keys, then their bodies: the commit reads
	// the JSON and the keys at once, and each body when it writes it.
	n := len(p.json)
	for _, t := range p.texts {
		n += len(t.key) + len(t.held.body)
	}
	b := make([]byte, 0, n)
	b = append(b, p.json...)
	texts := make([]spooledText, len(p.texts))
	for i, t := range p.texts {
		b = append(b, t.key...)
		texts[i] = spooledText{dict: t.held.dict, key: int32(len(t.key)), body: int32(len(t.held.body))}
	}
	for _, t := range p.texts {
		b = append(b, t.held.body...)
	}
	file, off, ok := s.spool.put(b)
	if !ok {
		return
	}
	*p = PreparedRequest{file: file, off: off, jsonLen: int32(len(p.json)), spooled: texts}
}

// writeSpooled is writePrepared of a spooled request: it reads the JSON and
// the keys back, and the texts it writes and the request_json it returns
// are read again from the spool as the commit writes them.
func (s *Store) writeSpooled(w *tickWriter, p *PreparedRequest, used keySet) func() (string, error) {
	n := int(p.jsonLen)
	for _, t := range p.spooled {
		n += int(t.key)
	}
	b, err := p.file.read(p.off, n)
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("write calls: %w", err)
		}
		return nil
	}
	file, keys, at := p.file, b[p.jsonLen:], p.off+int64(n)
	for _, t := range p.spooled {
		key, bodyAt, size, dict := string(keys[:t.key]), at, int(t.body), t.dict
		writeText(w, key, func() (string, error) {
			body, err := file.read(bodyAt, size)
			if err != nil {
				return "", err
			}
			return heldText{dict: dict, body: body}.text()
		}, used)
		keys, at = keys[t.key:], at+int64(t.body)
	}
	for _, key := range requestRefs(string(b[:p.jsonLen])) {
		used.add(key)
	}
	off, size := p.off, int(p.jsonLen)
	return func() (string, error) {
		b, err := file.read(off, size)
		return string(b), err
	}
}
