//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"
)

// jaegerTrace is a trace as Jaeger's query API (/api/traces) returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
	} `json:"spans"`
}

// jaegerTraces reads the traces of service from Jaeger at base.
func jaegerTraces(ctx context.Context, base, service string) ([]jaegerTrace, error) {
	q := url.Values{"service": {service}, "limit": {"20"}, "lookback": {"1h"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/traces?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []jaegerTrace `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/traces: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	return body.Data, err
}

// TestIntegrationJaegerTrace runs demo-sim ticks on the real model with
// OTLP to a real Jaeger (scripts/jaeger.sh, which scripts/integration.sh
// starts) and reads the run back from Jaeger's query API: one trace, the
// run's span, a span per tick, its phases under it, and under them a chat
// span per call with the token counts the server reported.
func TestIntegrationJaegerTrace(t *testing.T) {
	jaeger, otlp := os.Getenv("ARBITER_JAEGER_URL"), os.Getenv("ARBITER_JAEGER_OTLP")
	if jaeger == "" || otlp == "" {
		t.Skip("no Jaeger: ARBITER_JAEGER_URL and ARBITER_JAEGER_OTLP are not set (scripts/integration.sh starts one with scripts/jaeger.sh)")
	}
	realModel(t)
	service := "arbiter-it-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp)
	t.Setenv("OTEL_SERVICE_NAME", service)
	sim := demoCopy(t)
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "2", "--json")
	if code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var rep struct {
		Ticks []struct {
			Tick  int `json:"tick"`
			Calls int `json:"calls"`
		} `json:"ticks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Ticks) != 2 {
		t.Fatalf("report (%v):\n%s", err, out)
	}
	calls := rep.Ticks[0].Calls + rep.Ticks[1].Calls
	want := 1 + 2 + 2*3 + calls // the run, its ticks, their phases and commits, the calls
	tr := awaitTrace(t, jaeger, service, want)
	checkJaegerTrace(t, tr, rep.Ticks[0].Calls, rep.Ticks[1].Calls)
}

// awaitTrace reads the traces of service until one holds want spans (Jaeger
// stores what it receives in batches), for a minute at most.
func awaitTrace(t *testing.T, jaeger, service string, want int) jaegerTrace {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var last []jaegerTrace
	for {
		traces, err := jaegerTraces(ctx, jaeger, service)
		if err == nil && len(traces) == 1 && len(traces[0].Spans) >= want {
			if len(traces[0].Spans) != want {
				t.Errorf("the trace has %d spans, want %d", len(traces[0].Spans), want)
			}
			return traces[0]
		}
		last = traces
		select {
		case <-ctx.Done():
			n := 0
			for _, tr := range last {
				n += len(tr.Spans)
			}
			t.Fatalf("Jaeger has %d traces of %s with %d spans in all (last error %v); want one trace of %d spans", len(last), service, n, err, want)
		case <-tick.C:
		}
	}
}

// checkJaegerTrace checks the tree of tr: the run's span, its two ticks,
// each with its phases and commit, and the calls of each tick (calls1,
// calls2) under its phases, each with its token counts.
func checkJaegerTrace(t *testing.T, tr jaegerTrace, calls1, calls2 int) {
	t.Helper()
	byID := map[string]string{} // span ID -> operation
	tags := map[string]map[string]string{}
	parent := map[string]string{}
	for _, s := range tr.Spans {
		byID[s.SpanID] = s.OperationName
		tags[s.SpanID] = map[string]string{}
		for _, tg := range s.Tags {
			tags[s.SpanID][tg.Key] = fmt.Sprint(tg.Value)
		}
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" {
				parent[s.SpanID] = r.SpanID
			}
		}
	}
	perTick := map[string]int{}
	var tokensIn, tokensOut int
	for id, op := range byID {
		if tags[id]["gen_ai.operation.name"] != "chat" {
			continue
		}
		// A call filed under its phase's span leaves its tick and phase to
		// that span to say.
		phaseID := parent[id]
		phase, tick := byID[phaseID], byID[parent[phaseID]]
		if phase != tags[phaseID]["arbiter.phase"] || tick != "tick "+tags[phaseID]["arbiter.tick"] || byID[parent[parent[phaseID]]] != "arbiter run" {
			t.Errorf("call %s (%s) is under %q < %q < %q", op, tags[id]["arbiter.entity"], phase, tick, byID[parent[parent[phaseID]]])
		}
		in, _ := strconv.Atoi(tags[id]["gen_ai.usage.input_tokens"])
		outTok, _ := strconv.Atoi(tags[id]["gen_ai.usage.output_tokens"])
		if in <= 0 || tags[id]["gen_ai.usage.output_tokens"] == "" {
			t.Errorf("call %s has tokens in %q out %q", tags[id]["arbiter.entity"], tags[id]["gen_ai.usage.input_tokens"], tags[id]["gen_ai.usage.output_tokens"])
		}
		tokensIn, tokensOut = tokensIn+in, tokensOut+outTok
		perTick[tick]++
	}
	if perTick["tick 1"] != calls1 || perTick["tick 2"] != calls2 {
		t.Errorf("call spans per tick %v, want %d and %d", perTick, calls1, calls2)
	}
	t.Logf("FIGURES jaeger: trace %s: %d spans, calls per tick %v, tokens in %d out %d", tr.TraceID, len(tr.Spans), perTick, tokensIn, tokensOut)
}
