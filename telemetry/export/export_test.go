package export

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/telemetry"
)

// closedPort is an address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silent is an address that accepts connections and never answers.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never read
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// endSpans ends n call spans, as a run's calls do.
func endSpans(ctx context.Context, n int) {
	for i := range n {
		ctx, span := telemetry.StartCall(ctx, telemetry.Call{Operation: "chat", Model: "m", Entity: "e", Phase: "p", Tick: i + 1})
		span.End(ctx, telemetry.Done{Attempts: 1, InputTokens: 10, OutputTokens: 5})
	}
}

// TestUnreachableCollectorLosesSpansQuietly: to a port where nothing
// listens and to a server that never answers, over either protocol,
// ending spans never fails, Shutdown comes back (its wait is bounded)
// and the report counts every span lost, with why.
func TestUnreachableCollectorLosesSpansQuietly(t *testing.T) {
	for _, tc := range []struct{ name, addr, protocol string }{
		{"closed port, http", closedPort(t), HTTP},
		{"closed port, grpc", closedPort(t), GRPC},
		{"never answers, http", silent(t), HTTP},
		{"never answers, grpc", silent(t), GRPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := Settings{Endpoint: "http://" + tc.addr, Protocol: tc.protocol, Metrics: "none", QueueSize: 16, ServiceName: "test"}
			p, err := Open(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			endSpans(telemetry.With(t.Context(), p.Telemetry), 100)
			r := p.Shutdown(t.Context())
			if r.Spans != 100 || r.Delivered != 0 || r.Lost() != 100 {
				t.Errorf("report %+v: want 100 spans, none delivered", r)
			}
			if !strings.Contains(r.String(), "100 of 100 spans did not reach http://"+tc.addr) {
				t.Errorf("report line %q", r.String())
			}
		})
	}
}

// TestPrometheusText: with a metrics address, the calls' metrics are
// served as Prometheus text at /metrics while the process runs, and the
// server stops with Shutdown.
func TestPrometheusText(t *testing.T) {
	p, err := Open(t.Context(), Settings{MetricsAddr: "127.0.0.1:0", ServiceName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := telemetry.With(t.Context(), p.Telemetry)
	endSpans(ctx, 3)
	telemetry.Attempt(ctx, "local", 1, false)
	resp, err := http.Get(p.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`gen_ai_client_operation_duration_seconds_count{arbiter_endpoint="",arbiter_phase="p",gen_ai_operation_name="chat",gen_ai_request_model="m"`,
		`arbiter_calls_total{arbiter_endpoint="",arbiter_phase="p",gen_ai_operation_name="chat",gen_ai_request_model="m"`,
		`gen_ai_client_token_usage_sum{arbiter_endpoint="",arbiter_phase="p",gen_ai_operation_name="chat",gen_ai_request_model="m",gen_ai_token_type="input"`,
		`arbiter_calls_in_flight{arbiter_endpoint="local"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", body)
	}
	p.Shutdown(t.Context())
	if _, err := (&http.Client{Timeout: time.Second}).Get(p.MetricsURL); err == nil {
		t.Error("the metrics are still served after Shutdown")
	}
}

// TestSettingsRefuseWhatTheyCannotSend: a protocol, an exporter or an
// address arbiter cannot use is named.
func TestSettingsRefuseWhatTheyCannotSend(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Endpoint: "http://x:4318", Protocol: "http/json"}, `otel.protocol (OTEL_EXPORTER_OTLP_PROTOCOL) is "http/json"`},
		{Settings{Endpoint: "http://x:4318", Traces: "zipkin"}, `otel.traces_exporter (OTEL_TRACES_EXPORTER) is "zipkin": it takes otlp or none`},
		{Settings{Endpoint: "x:4318"}, `otel.endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) is "x:4318": give a URL`},
		{Settings{MetricsAddr: "9464"}, `--metrics-addr "9464": give host:port`},
	} {
		if _, err := Open(t.Context(), tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v) = %v, want %s", tc.s, err, tc.want)
		}
	}
	if p, err := Open(t.Context(), Settings{}); p != nil || err != nil {
		t.Errorf("Open of nothing = %v, %v; want nil, nil", p, err)
	}
}
