package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP collector in the test: it keeps the spans it
// is sent and accepts metrics.
type collector struct {
	*httptest.Server
	mu      sync.Mutex
	spans   map[string]int // span name -> count
	traces  map[string]bool
	service string
	metrics int
}

func newCollector(t *testing.T) *collector {
	c := &collector{spans: map[string]int{}, traces: map[string]bool{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req coltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range req.ResourceSpans {
				for _, a := range rs.Resource.Attributes {
					if a.Key == "service.name" {
						c.service = a.Value.GetStringValue()
					}
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						c.spans[s.Name]++
						c.traces[string(s.TraceId)] = true
					}
				}
			}
		case "/v1/metrics":
			c.metrics++
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.Close)
	return c
}

// TestRunSendsItsTrace: with OTEL_EXPORTER_OTLP_ENDPOINT set, a run sends
// one trace: the run's span, its ticks, their phases and commits, and
// every call, under the service name OTEL_SERVICE_NAME gives.
func TestRunSendsItsTrace(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_SERVICE_NAME", "arbiter-test")
	code, _, errOut := arbiter(t, "run", demoCopy(t), "--ticks", "2")
	if code != 0 {
		t.Fatalf("run exit %d\n%s", code, errOut)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	want := map[string]int{"arbiter run": 1, "tick 1": 1, "tick 2": 1, "intention": 2, "resolution": 2, "commit": 2, "chat test-model": 22}
	for name, n := range want {
		if col.spans[name] != n {
			t.Errorf("%d spans %q, want %d (all: %v)", col.spans[name], name, n, col.spans)
		}
	}
	if len(col.traces) != 1 || col.service != "arbiter-test" || col.metrics == 0 {
		t.Errorf("%d traces, service %q, %d metric exports; want 1 trace of arbiter-test and metrics", len(col.traces), col.service, col.metrics)
	}
	if strings.Contains(errOut, "telemetry") {
		t.Errorf("stderr speaks of telemetry when every span arrived:\n%s", errOut)
	}
}

// TestRunWithCollectorDown: a collector on a closed port, or one that never
// answers, fails no run: the ticks commit and one line on stderr says how
// many spans were lost.
func TestRunWithCollectorDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr func(t *testing.T) string
	}{{"closed port", closedPort}, {"never answers", silentServer}} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			fakeModel(t, nil)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+tc.addr(t))
			code, out, errOut := arbiter(t, "run", demoCopy(t), "--ticks", "2")
			if code != 0 || !strings.Contains(out, "tick 2 committed") {
				t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if n := strings.Count(errOut, "warning: telemetry: "); n != 1 || !strings.Contains(errOut, " spans did not reach http://") {
				t.Errorf("stderr has %d telemetry warnings, want 1 naming the lost spans:\n%s", n, errOut)
			}
		})
	}
}

// closedPort is an address on which nothing listens.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// silentServer is an address that takes connections and never answers.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// TestOTelSettingsFromStandardVariables: the otel.* keys come from the
// config file, then the standard OTEL_* variables, then ARBITER_OTEL_*;
// a value arbiter cannot use is a usage error that names it.
func TestOTelSettingsFromStandardVariables(t *testing.T) {
	cleanEnv(t)
	if err := os.WriteFile("config.yaml", []byte("otel:\n  protocol: grpc\n  service_name: from-file\n  capture_content: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")
	t.Setenv("OTEL_SERVICE_NAME", "from-otel")
	t.Setenv("ARBITER_OTEL_SERVICE_NAME", "from-arbiter")
	c, err := loadConfig("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := c.OTel; o.Endpoint != "http://collector:4317" || o.Protocol != "grpc" || o.ServiceName != "from-arbiter" || !o.CaptureContent || o.QueueSize != 2048 {
		t.Errorf("otel settings: %+v", o)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	fakeModel(t, nil)
	code, _, errOut := arbiter(t, "run", filepath.Join(demoCopy(t)), "--ticks", "1")
	if code != ExitUsage || !strings.Contains(errOut, `otel.protocol (OTEL_EXPORTER_OTLP_PROTOCOL) is "http/json"`) {
		t.Errorf("run with an unknown protocol: exit %d\n%s", code, errOut)
	}
}

// TestEveryCommandIsTraced: play, chat, arena and eval send their trace as
// run does, each under a span named for the command.
func TestEveryCommandIsTraced(t *testing.T) {
	for _, tc := range []struct {
		command string
		do      func(t *testing.T, collector string) (int, string)
		want    []string // span names, a trailing * a prefix
	}{
		{"play", func(t *testing.T, collector string) (int, string) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
			code, _, errOut := play(t, "/pass\n/quit\n", gameCopy(t, "conquest-demo"), "--seat", "p1")
			return code, errOut
		}, []string{"tick 1", "commit"}},
		{"chat", func(t *testing.T, collector string) (int, string) {
			fakeModel(t, openaitest.Always(openaitest.Content(demoBookends)))
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
			code, _, errOut := arbiterIn(t, "Let's begin.\n/quit\n", "chat", chronicleCopy(t))
			return code, errOut
		}, []string{"chat test-model"}},
		{"arena", func(t *testing.T, collector string) (int, string) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
			code, _, errOut := arbiter(t, "arena", "duel", "--games", "2", "--seats", "bot,bot")
			return code, errOut
		}, []string{"game *", "tick 1"}},
		{"eval", func(t *testing.T, collector string) (int, string) {
			fakeModel(t, nil)
			sim := tryDemo(t) // its runs, before the collector is set
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
			code, _, errOut := arbiter(t, "eval", sim)
			return code, errOut
		}, []string{"chat test-model"}},
	} {
		t.Run(tc.command, func(t *testing.T) {
			cleanEnv(t)
			col := newCollector(t)
			if code, errOut := tc.do(t, col.URL); code != 0 {
				t.Fatalf("%s exit %d\n%s", tc.command, code, errOut)
			}
			checkSpans(t, col, append(tc.want, "arbiter "+tc.command))
		})
	}
}

// checkSpans checks that col received one trace holding spans of each name
// of want (a trailing * a prefix).
func checkSpans(t *testing.T, col *collector, want []string) {
	t.Helper()
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, w := range want {
		n := col.spans[w]
		if p, ok := strings.CutSuffix(w, "*"); ok {
			for name, c := range col.spans {
				if strings.HasPrefix(name, p) {
					n += c
				}
			}
		}
		if n == 0 {
			t.Errorf("no span %q (all: %v)", w, col.spans)
		}
	}
	if len(col.traces) != 1 {
		t.Errorf("%d traces, want 1", len(col.traces))
	}
}
