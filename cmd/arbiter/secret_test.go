package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	leakKey  = "sk-live-Secret1234567890"
	leakPass = "hunter2-pass"
)

// echoAuthServer refuses every request with a 401 whose body repeats the
// Authorization header, as some proxies do.
func echoAuthServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("invalid header %q for %s", r.Header.Get("Authorization"), r.URL), "type": "invalid_request_error"}})
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http://", "http://alice:"+leakPass+"@", 1) + "/v1"
}

func assertNoLeak(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{leakKey, leakPass} {
		if strings.Contains(s, secret) {
			t.Errorf("%s leaks %q:\n%s", where, secret, s)
		}
	}
}

// TestSecretsNeverShown: the key and the base URL's credentials appear in
// no output of config show, doctor, run or status, and not in state.db,
// even when the server echoes the Authorization header.
func TestSecretsNeverShown(t *testing.T) {
	cleanEnv(t)
	url := echoAuthServer(t)
	t.Setenv("OPENAI_API_KEY", leakKey)
	t.Setenv("OPENAI_BASE_URL", url)

	for _, args := range [][]string{{"config", "show"}, {"config", "show", "--json"}, {"doctor"}, {"doctor", "--json"}} {
		code, out, errOut := arbiter(t, args...)
		assertNoLeak(t, strings.Join(args, " "), out+errOut)
		if args[0] == "config" && (code != 0 || !strings.Contains(out, "[redacted]@127.0.0.1")) {
			t.Errorf("%v: exit %d, want the endpoint shown with its credentials redacted:\n%s", args, code, out)
		}
	}
	dir := demoCopy(t)
	code, out, errOut := arbiter(t, "run", dir, "--ticks", "1", "-v")
	if code != ExitModel {
		t.Errorf("run against a 401: exit %d, want %d\n%s", code, ExitModel, errOut)
	}
	assertNoLeak(t, "run", out+errOut)
	for _, args := range [][]string{{"status", dir}, {"status", dir, "--json"}} {
		_, out, errOut := arbiter(t, args...)
		assertNoLeak(t, strings.Join(args, " "), out+errOut)
	}
	for _, f := range []string{"state.db", "state.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(b), leakKey) || strings.Contains(string(b), leakPass) {
			t.Errorf("%s holds a secret", f)
		}
	}
}
