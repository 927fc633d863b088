package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/eval"
)

func TestEvalDemoSuite(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	before := srv.CallCount()
	code, out, errOut := arbiter(t, "eval", sim)
	if code != 0 {
		t.Fatalf("eval exit %d\n%s\n%s", code, out, errOut)
	}
	// 2 ticks x (6 characters + 5 locations) x 2 variants; the resolution
	// prompts of both variants are the same, so the cache answers the
	// second (same request, same endpoint).
	if got := srv.CallCount() - before; got != 44-10 {
		t.Errorf("eval made %d calls, want 34", got)
	}
	t.Log(out)
	code, out, errOut = arbiter(t, "eval", sim)
	if code != 0 || srv.CallCount()-before != 34 || !strings.Contains(out, "44 answers, 44 from the cache") {
		t.Errorf("rerun: exit %d, %d calls in all; want every answer from the cache:\n%s\n%s", code, srv.CallCount()-before, out, errOut)
	}
	_ = json.Valid
	_ = os.Stat
	_ = filepath.Join
	_ = eval.DBFile
}
