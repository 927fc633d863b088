package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// TestCheckRejectsAfterRepairs: an answer that matches the schema but fails
// the request's Check is a schema mismatch: repaired up to RepairAttempts,
// then the call fails with KindSchema and Check's words, never with the
// answer as output.
func TestCheckRejectsAfterRepairs(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(map[string]any{"name": "Bo", "location": "common"})))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RepairAttempts = 2 })
	req := testRequest("who?")
	var seen []string
	req.Check = func(out json.RawMessage) error {
		seen = append(seen, string(out))
		return errors.New("at /name: Bo, but this call is Ada's")
	}
	res := c.Complete(t.Context(), req)
	if ErrorKindOf(res.Err) != KindSchema || res.Output != nil {
		t.Fatalf("err %v, output %s; want a schema error and no output", res.Err, res.Output)
	}
	if !strings.Contains(res.Err.Error(), "Bo, but this call is Ada's") {
		t.Errorf("error %q does not say what Check said", res.Err)
	}
	if res.Repairs != 2 || srv.CallCount() != 3 || len(seen) != 3 {
		t.Errorf("repairs %d, calls %d, checks %d; want 2, 3, 3", res.Repairs, srv.CallCount(), len(seen))
	}
}

// TestCheckSkippedForSchemaMismatch: Check sees only answers that matched
// the schema.
func TestCheckSkippedForSchemaMismatch(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(map[string]any{"nom": "Bo"})))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RepairAttempts = 0 })
	req := testRequest("who?")
	req.Check = func(json.RawMessage) error {
		t.Error("Check ran on an answer that does not match the schema")
		return nil
	}
	if res := c.Complete(t.Context(), req); ErrorKindOf(res.Err) != KindSchema {
		t.Fatalf("err %v, want a schema error", res.Err)
	}
}
