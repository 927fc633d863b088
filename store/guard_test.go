package store

import (
	"os"
	"strings"
	"testing"
)

func TestLongCallTextStoredAsBoundedPrefix(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	rec := record(1)
	big := strings.Repeat("é", 5<<20) // 10 MiB, two bytes a rune
	rec.Calls[0].Raw = big
	rec.Calls[0].Request = `[{"role":"assistant","content":"` + big + `"}]`
	commit(t, s, rec)
	calls, err := s.Calls(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	c := calls[0]
	if len(c.Raw) > MaxStoredRaw+200 || len(c.Request) > MaxStoredRequest+200 {
		t.Fatalf("stored %d bytes of raw answer, %d of request; want at most %d and %d", len(c.Raw), len(c.Request), MaxStoredRaw, MaxStoredRequest)
	}
	if !strings.HasPrefix(c.Raw, big[:1000]) || !strings.Contains(c.Raw, "of 10485760 bytes") {
		t.Errorf("raw answer should keep its prefix and note its full length, ends with %q", c.Raw[len(c.Raw)-80:])
	}
	if !strings.Contains(c.Request, "of 10485795 bytes") {
		t.Errorf("request should note its full length, ends with %q", c.Request[len(c.Request)-80:])
	}
	if !strings.HasPrefix(strings.ToValidUTF8(c.Raw, "?"), c.Raw) {
		t.Error("the cut splits a character")
	}
	// A short text is stored as is.
	if calls[1].Request != rec.Calls[1].Request {
		t.Errorf("short request changed: %q", calls[1].Request)
	}
}

func TestSecretsNeverStored(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-abcdef123456"
	s, path := openTemp(t)
	s.SetScrub(func(text string) string { return strings.ReplaceAll(text, secret, "[redacted]") })
	rec := record(1)
	rec.Calls[1].Error = "401 from http://h/v1: Bearer " + secret
	rec.Calls[0].Raw = "echo " + secret
	rec.Calls[0].Request = `[{"content":"` + secret + `"}]`
	rec.Events = append(rec.Events, `TOOL_FAILURE tool=intention:bo error="Bearer `+secret+`"`)
	rec.ApplyErrors[0].Reason = secret
	commit(t, s, rec)
	if err := s.RecordStop(t.Context(), Stop{Tick: 2, Reason: "error", Error: "key " + secret, Events: []string{secret}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := readAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatal("the secret is in state.db")
	}
}

// readAll returns the bytes of the database and of its WAL, if any.
func readAll(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	wal, _ := os.ReadFile(path + "-wal")
	return append(b, wal...), nil
}
