package store

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// spooledTick is a tick of two calls whose requests were prepared (and so
// spooled), with the messages they were prepared from.
func spooledTick(t *testing.T, s *Store, tick int) (*TickRecord, []Message) {
	t.Helper()
	rec, msgs := withMessages(tick)
	for i := range rec.Calls[:2] {
		rec.Calls[i].Messages = nil
		rec.Calls[i].Prepared = s.PrepareRequest(msgs)
	}
	return rec, msgs
}

// TestSpooledRequestsStoredAsInMemory: a request prepared by a store on
// disk waits for its commit in the spool, not in memory, and the run it
// commits reads back byte for byte as one whose requests were held in
// memory.
func TestSpooledRequestsStoredAsInMemory(t *testing.T) {
	spooled, _ := openTemp(t)
	held, _ := openTemp(t)
	held.spool = nil
	for tick := 1; tick <= 3; tick++ {
		rec, _ := spooledTick(t, spooled, tick)
		for _, c := range rec.Calls[:2] {
			if p := c.Prepared; p.file == nil || p.json != "" || p.texts != nil {
				t.Fatalf("tick %d: a prepared request is held in memory (%d bytes of JSON, %d texts), not spooled", tick, len(p.json), len(p.texts))
			}
		}
		commit(t, spooled, rec)
		rec, _ = spooledTick(t, held, tick)
		if rec.Calls[0].Prepared.file != nil {
			t.Fatal("a store without a spool spooled a request")
		}
		commit(t, held, rec)
	}
	for tick := 1; tick <= 3; tick++ {
		a, err := spooled.Calls(t.Context(), tick)
		if err != nil {
			t.Fatal(err)
		}
		b, err := held.Calls(t.Context(), tick)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("tick %d: spooled calls read back\n%+v\nheld in memory\n%+v", tick, a, b)
		}
	}
	if a, b := rowCounts(t, spooled), rowCounts(t, held); !reflect.DeepEqual(a, b) {
		t.Errorf("rows %v spooled, %v held in memory", a, b)
	}
}

// TestSpoolLeavesNoFile: the spool's files are not in the simulation's
// folder while a tick waits for its commit, nor after (a crash leaves
// nothing behind).
func TestSpoolLeavesNoFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed: the spool removes it once closed")
	}
	s, path := openTemp(t)
	rec, _ := spooledTick(t, s, 1)
	if rec.Calls[0].Prepared.file == nil {
		t.Fatal("the request was not spooled")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), FileName) {
			t.Errorf("%s is in the simulation's folder while a tick waits for its commit", e.Name())
		}
	}
	commit(t, s, rec)
}

// TestSpoolFilesTurnOver: once a spool file is full, requests go to a new
// one, and each is read back from its own.
func TestSpoolFilesTurnOver(t *testing.T) {
	s, _ := openTemp(t)
	s.spool.fileSize = 512 // a request or two a file
	var sent [][]Message
	for tick := 1; tick <= 3; tick++ {
		rec, msgs := spooledTick(t, s, tick)
		if a, b := rec.Calls[0].Prepared.file, rec.Calls[1].Prepared.file; a == b {
			t.Errorf("tick %d: two requests of %d bytes and more share a spool file of 512", tick, rec.Calls[0].Prepared.jsonLen)
		}
		commit(t, s, rec)
		sent = append(sent, msgs)
	}
	checkSentBack(t, s, sent)
}

// TestSpoolOffHoldsInMemory: when no spool file can be made (the folder
// is gone, the disk full), requests are held in memory and the tick
// commits as it would have.
func TestSpoolOffHoldsInMemory(t *testing.T) {
	s, _ := openTemp(t)
	s.spool.dir = filepath.Join(t.TempDir(), "gone")
	rec, msgs := spooledTick(t, s, 1)
	if p := rec.Calls[0].Prepared; p.file != nil || p.json == "" {
		t.Fatal("a request was spooled to a folder that does not exist")
	}
	commit(t, s, rec)
	calls, err := s.Calls(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentMessages(t, 1, calls[0]); !reflect.DeepEqual(got, msgs) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, msgs)
	}
	if !s.spool.off {
		t.Error("the spool is still on after a file could not be made")
	}
}

// TestSpoolUnreadableFailsTheCommit: a spool that cannot be read back
// fails the commit with an error that says so, and nothing of the tick is
// stored.
func TestSpoolUnreadableFailsTheCommit(t *testing.T) {
	s, _ := openTemp(t)
	commit(t, s, record(1))
	rec, _ := spooledTick(t, s, 2)
	rec.Calls[0].Prepared.file.f.Close()
	err := s.CommitTick(t.Context(), rec)
	if err == nil || !strings.Contains(err.Error(), "commit tick 2") || !strings.Contains(err.Error(), "read a prepared request back from its spool file") {
		t.Fatalf("CommitTick = %v; want the spool named", err)
	}
	if last, err := s.LastTick(t.Context()); err != nil || last != 1 {
		t.Errorf("LastTick = %d, %v after the failed commit; want 1", last, err)
	}
}

// TestSpoolWriteFailsHoldsInMemory: a spool file that stops taking writes
// (a disk that filled up mid-tick) turns the spool off: the request is
// held in memory, those already spooled read back, and the tick commits.
func TestSpoolWriteFailsHoldsInMemory(t *testing.T) {
	s, _ := openTemp(t)
	rec, msgs := withMessages(1)
	rec.Calls[0].Messages = nil
	rec.Calls[0].Prepared = s.PrepareRequest(msgs)
	if rec.Calls[0].Prepared.file == nil {
		t.Fatal("the first request was not spooled")
	}
	// Writes to the file now fail; reads of what it holds still work.
	f := s.spool.cur.f
	// The file is gone from its folder: it is opened again, read-only,
	// through the process's descriptor of it.
	ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		t.Skipf("no /proc/self/fd to open the spool file read-only: %v", err)
	}
	s.spool.cur.f = ro
	defer f.Close()
	rec.Calls[1].Messages = nil
	rec.Calls[1].Prepared = s.PrepareRequest(msgs)
	if p := rec.Calls[1].Prepared; p.file != nil || p.json == "" {
		t.Fatal("a request was spooled to a file that takes no writes")
	}
	if !s.spool.off {
		t.Error("the spool is still on after a write failed")
	}
	commit(t, s, rec)
	checkSentBack(t, s, [][]Message{msgs})
}

// TestSpoolFileLeftIsRemovedOnceClosed: a spool file the system would not
// remove while open (Windows) is closed and then removed by its cleanup.
func TestSpoolFileLeftIsRemovedOnceClosed(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), spoolPattern)
	if err != nil {
		t.Fatal(err)
	}
	closeSpoolFile(openSpoolFile{f, f.Name()})
	if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
		t.Errorf("the spool file is still in its folder once closed: %v", err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("the spool file still takes writes once its cleanup ran")
	}
}
