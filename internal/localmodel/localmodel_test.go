package localmodel

import (
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestFreePort(t *testing.T) {
	t.Parallel()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port %d out of range", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	l.Close()
}

func TestRenderModelfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path string
		wantErr    bool
	}{
		{"absolute", "/models/stories260K.gguf", false},
		{"spaces", "/my models/x.gguf", false},
		{"relative", "models/x.gguf", true},
		{"quote", `/a"b.gguf`, true},
		{"newline", "/a\nFROM evil", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mf, err := RenderModelfile(tt.path)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("RenderModelfile(%q) = nil error, want one", tt.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"\nFROM \"" + tt.path + "\"\n",
				"\nPARAMETER num_ctx 16384\n",
				"\nPARAMETER num_thread 1\n",
				"\nTEMPLATE \"\"\"",
			} {
				if strings.Count(mf, want) != 1 {
					t.Errorf("Modelfile has %d of %q, want 1:\n%s", strings.Count(mf, want), want, mf)
				}
			}
			if strings.Contains(mf, ggufPlaceholder) {
				t.Errorf("placeholder left in Modelfile:\n%s", mf)
			}
		})
	}
}

// chatTemplate parses the TEMPLATE of the Modelfile the way Ollama does (Go
// text/template with a json function).
func chatTemplate(t *testing.T) *template.Template {
	t.Helper()
	mf, err := RenderModelfile("/m.gguf")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(mf, "\nTEMPLATE \"\"\"")
	if !ok {
		t.Fatal("no TEMPLATE in Modelfile")
	}
	body, rest, ok := strings.Cut(body, `"""`)
	if !ok || strings.TrimSpace(rest) != "" {
		t.Fatalf("TEMPLATE is not the last, triple-quoted command; after it: %q", rest)
	}
	tmpl, err := template.New("").Funcs(template.FuncMap{
		"json": func(v any) string { b, _ := json.Marshal(v); return string(b) },
	}).Parse(body)
	if err != nil {
		t.Fatalf("TEMPLATE does not parse: %v", err)
	}
	return tmpl
}

type (
	msg struct {
		Role, Content string
		ToolCalls     []call
	}
	call struct{ Function fn }
	fn   struct {
		Name      string
		Arguments map[string]any
	}
)

// TestChatTemplate renders the prompts of a plain chat and of a tool round
// trip (golden), and checks what Ollama needs to see: .Tools and .ToolCalls,
// and a ToolCalls range that renders an object with a string key and an
// object key (Ollama finds the name and arguments keys of a tool call that
// way, then parses objects of that shape out of the answer).
func TestChatTemplate(t *testing.T) {
	t.Parallel()
	tmpl := chatTemplate(t)
	tools := []map[string]any{{
		"type": "function",
		"function": map[string]any{
			"name":        "propose_orders",
			"description": "Propose orders",
			"parameters":  map[string]any{"type": "object", "required": []string{"orders"}},
		},
	}}
	cases := []struct {
		name string
		data map[string]any
	}{
		{"plain", map[string]any{
			"System":   "You narrate.",
			"Messages": []msg{{Role: "system", Content: "You narrate."}, {Role: "user", Content: "Tick 1."}},
		}},
		{"tools", map[string]any{
			"System": "You command.",
			"Tools":  tools,
			"Messages": []msg{
				{Role: "system", Content: "You command."},
				{Role: "user", Content: "Your turn."},
				{Role: "assistant", ToolCalls: []call{{fn{"propose_orders", map[string]any{"orders": []string{"hold"}}}}}},
				{Role: "tool", Content: `{"valid":true}`},
			},
		}},
	}
	var got bytes.Buffer
	for _, c := range cases {
		got.WriteString("=== " + c.name + "\n")
		if err := tmpl.Execute(&got, c.data); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got.WriteString("\n")
	}
	golden := filepath.Join("testdata", "prompts.golden")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("rendered prompts differ from %s (go test -update to accept):\n%s", golden, got.String())
	}

	// What Ollama's parseToolCalls renders to learn the keys of a tool call.
	var probe bytes.Buffer
	err = tmpl.Execute(&probe, map[string]any{"Messages": []msg{
		{Role: "assistant", ToolCalls: []call{{fn{"@@name@@", map[string]any{"@@argument@@": 1}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, obj, _ := strings.Cut(probe.String(), "Assistant: ")
	var call map[string]any
	if err := json.NewDecoder(strings.NewReader(obj)).Decode(&call); err != nil {
		t.Fatalf("tool call does not render as a JSON object: %q: %v", probe.String(), err)
	}
	if call["name"] != "@@name@@" || call["arguments"] == nil {
		t.Errorf("tool call renders as %v, want name and arguments keys", call)
	}
	for _, v := range []string{".Tools", ".ToolCalls", ".System", ".Messages"} {
		if !strings.Contains(modelfileTemplate, v) {
			t.Errorf("TEMPLATE does not use %s", v)
		}
	}
}

// goVersionM turns `go version -m` output into the form debug.ParseBuildInfo
// reads (what debug/buildinfo.ReadFile returns for the binary).
func goVersionM(t *testing.T, out string) *debug.BuildInfo {
	t.Helper()
	var lines []string
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if i == 0 {
			_, v, _ := strings.Cut(l, ": ")
			l = "go\t" + v
		}
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	bi, err := debug.ParseBuildInfo(strings.Join(lines, "\n") + "\n")
	if err != nil {
		t.Fatal(err)
	}
	return bi
}

func TestModuleVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out, want string
	}{
		{"pinned", `/root/go/bin/ollama: go1.26.8
	path	github.com/ollama/ollama
	mod	github.com/ollama/ollama	v0.6.5	h1:vXKkVX57ql/1ZzMw4SVK866Qfd6pjwEcITVyEpF0QXQ=
	dep	github.com/agnivade/levenshtein	v1.1.1	h1:QY8M92nrzkmr798gCo3kmMyqXFzdQVpxLlGPRBij0P8=
	build	-buildmode=exe
	build	CGO_ENABLED=1
`, "v0.6.5"},
		{"newer", `/usr/local/bin/ollama: go1.24.0
	path	github.com/ollama/ollama
	mod	github.com/ollama/ollama	v0.9.0	h1:abc=
`, "v0.9.0"},
		{"checkout", `./ollama: go1.24.0
	path	github.com/ollama/ollama
	mod	github.com/ollama/ollama	(devel)
`, "(devel)"},
		{"other program", `/usr/bin/ollama: go1.22.1
	path	example.com/notollama
	mod	example.com/notollama	v1.0.0
	dep	github.com/ollama/ollama	v0.6.5
`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := moduleVersion(goVersionM(t, tt.out)); got != tt.want {
				t.Errorf("moduleVersion = %q, want %q", got, tt.want)
			}
		})
	}
	if moduleVersion(nil) != "" {
		t.Error("moduleVersion(nil) != \"\"")
	}
}

func TestCheckPinned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "ollama")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 0.0.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{script, plain, self, filepath.Join(dir, "missing"), dir} {
		if err := checkPinned(p); err == nil {
			t.Errorf("checkPinned(%s) = nil, want an error", p)
		}
	}
}

func TestFindOrBuildFromEnv(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "my-ollama")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARBITER_OLLAMA_BIN", bin)
	got, err := FindOrBuild(t.Context())
	if err != nil || got != bin {
		t.Fatalf("FindOrBuild = %q, %v; want %q", got, err, bin)
	}
	t.Setenv("ARBITER_OLLAMA_BIN", filepath.Join(dir, "missing"))
	if _, err := FindOrBuild(t.Context()); err == nil || !strings.Contains(err.Error(), "ARBITER_OLLAMA_BIN") {
		t.Fatalf("FindOrBuild with a missing ARBITER_OLLAMA_BIN: %v, want an error naming it", err)
	}
}

func TestDefaultGGUF(t *testing.T) {
	dir := t.TempDir()
	gguf := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(gguf, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARBITER_GGUF", gguf)
	if got, err := DefaultGGUF(); err != nil || got != gguf {
		t.Fatalf("DefaultGGUF = %q, %v; want %q", got, err, gguf)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.gguf"), dir} {
		t.Setenv("ARBITER_GGUF", bad)
		if _, err := DefaultGGUF(); err == nil || !strings.Contains(err.Error(), "ARBITER_GGUF") {
			t.Errorf("DefaultGGUF with ARBITER_GGUF=%s: %v, want an error naming the variable", bad, err)
		}
	}
	t.Setenv("ARBITER_GGUF", "")
	if got, err := DefaultGGUF(); err == nil {
		if filepath.Base(got) != DefaultGGUFName || !filepath.IsAbs(got) {
			t.Errorf("DefaultGGUF = %q, want an absolute path to %s", got, DefaultGGUFName)
		}
	} else if !strings.Contains(err.Error(), "ARBITER_GGUF") {
		t.Errorf("DefaultGGUF error %q does not say to set ARBITER_GGUF", err)
	}
}

func TestModelName(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"/m/stories260K.gguf":    "stories260k",
		"/m/Llama 3.2 Q4_K.gguf": "llama-3.2-q4_k",
		"/m/-x.gguf":             "x",
		"/m/@@.gguf":             "arbiter-local",
		"/m/" + strings.Repeat("a", 100) + ".gguf": strings.Repeat("a", 64),
	}
	for in, want := range tests {
		if got := ModelName(in); got != want {
			t.Errorf("ModelName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEndpointFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    Endpoint
		ok      bool
		wantErr bool
	}{
		{"nothing set", nil, Endpoint{}, false, false},
		{"key only is OpenAI", map[string]string{EnvAPIKey: "sk-1"},
			Endpoint{openAIBaseURL, "sk-1", openAIModel}, true, false},
		{"key and model", map[string]string{EnvAPIKey: "sk-1", EnvModel: "gpt-4.1"},
			Endpoint{openAIBaseURL, "sk-1", "gpt-4.1"}, true, false},
		{"own server", map[string]string{EnvBaseURL: "http://h:11434/v1", EnvModel: "qwen"},
			Endpoint{"http://h:11434/v1", "", "qwen"}, true, false},
		{"own server without model", map[string]string{EnvBaseURL: "http://h:11434/v1"},
			Endpoint{}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, err := EndpointFromEnv(func(k string) string { return tt.env[k] })
			if ok != tt.ok || (err != nil) != tt.wantErr {
				t.Fatalf("ok=%v err=%v, want ok=%v error=%v", ok, err, tt.ok, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestServerEnv(t *testing.T) {
	t.Parallel()
	env := serverEnv([]string{"PATH=/bin", "HOME=/root", "OLLAMA_HOST=0.0.0.0:11434", "OLLAMA_DEBUG=1"}, "127.0.0.1:5", "/tmp/d")
	want := []string{
		"PATH=/bin", "OLLAMA_DEBUG=1", "OLLAMA_NUM_PARALLEL=1",
		"OLLAMA_HOST=127.0.0.1:5", "OLLAMA_MODELS=/tmp/d/models", "OLLAMA_NO_CLOUD=1", "OLLAMA_NOHISTORY=1", "HOME=/tmp/d/home",
	}
	if !slices.Equal(env, want) {
		t.Errorf("serverEnv = %q, want %q", env, want)
	}
}

func TestSweepStale(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	mk := func(name, pid string, age time.Duration) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if pid != "" {
			if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(pid), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// A pid that cannot exist (above Linux's pid_max of 2^22).
	const gone = "99999999"
	self := strconv.Itoa(os.Getpid())
	dead := mk(tempPrefix+"dead", gone, 0)
	live := mk(tempPrefix+"live", self, 2*time.Hour)
	starting := mk(tempPrefix+"starting", "", 0)
	abandoned := mk(tempPrefix+"abandoned", "", 2*time.Hour)
	other := mk("something-else", gone, 2*time.Hour)

	sweepStale(tmp, time.Now())
	for dir, wantKept := range map[string]bool{dead: false, live: true, starting: true, abandoned: false, other: true} {
		_, err := os.Stat(dir)
		if kept := err == nil; kept != wantKept {
			t.Errorf("%s: kept=%v, want %v", filepath.Base(dir), kept, wantKept)
		}
	}
}
