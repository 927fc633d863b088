package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/telemetry"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// spanTree is what the in-memory exporter saw of a run, by parent.
type spanTree struct {
	t     *testing.T
	spans []sdktrace.ReadOnlySpan
}

// traced returns ctx with telemetry to an in-memory recorder, under the
// span "arbiter run", and the function that ends that span and returns
// every span recorded.
func traced(t *testing.T, content bool) (context.Context, func() spanTree) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tel, err := telemetry.New(tp, nil, content)
	if err != nil {
		t.Fatal(err)
	}
	ctx, root := telemetry.Start(telemetry.With(context.Background(), tel), "arbiter run")
	return ctx, func() spanTree {
		root.End()
		return spanTree{t: t, spans: rec.Ended()}
	}
}

// named returns the spans named name (a prefix with a trailing "*").
func (tr spanTree) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.spans {
		if s.Name() == name || strings.HasSuffix(name, "*") && strings.HasPrefix(s.Name(), strings.TrimSuffix(name, "*")) {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one span named name.
func (tr spanTree) one(name string) sdktrace.ReadOnlySpan {
	tr.t.Helper()
	got := tr.named(name)
	if len(got) != 1 {
		tr.t.Fatalf("%d spans named %q, want 1 (spans: %s)", len(got), name, tr)
	}
	return got[0]
}

// children returns the spans whose parent is p, in the order they ended.
func (tr spanTree) children(p sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.spans {
		if s.Parent().SpanID() == p.SpanContext().SpanID() {
			out = append(out, s)
		}
	}
	return out
}

// parent returns the span whose child s is.
func (tr spanTree) parent(s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	tr.t.Helper()
	for _, p := range tr.spans {
		if p.SpanContext().SpanID() == s.Parent().SpanID() {
			return p
		}
	}
	tr.t.Fatalf("span %s has no parent among %s", s.Name(), tr)
	return nil
}

// childNames are the names of p's children, sorted.
func (tr spanTree) childNames(p sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range tr.children(p) {
		names = append(names, s.Name())
	}
	slices.Sort(names)
	return names
}

func (tr spanTree) String() string {
	var names []string
	for _, s := range tr.spans {
		names = append(names, s.Name())
	}
	return strings.Join(names, ", ")
}

// attr is the value of key on s, "" when s has none.
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// events are the names of s's events, each with the fields named.
func events(s sdktrace.ReadOnlySpan, fields ...string) []string {
	var out []string
	for _, e := range s.Events() {
		line := e.Name
		for _, f := range fields {
			for _, a := range e.Attributes {
				if string(a.Key) == f {
					line += " " + f + "=" + a.Value.Emit()
				}
			}
		}
		out = append(out, line)
	}
	return out
}

// runTraced runs ticks of the simulation copied from src with handler h
// (maxAttempts tries a call), traced, and returns the spans.
func runTraced(t *testing.T, src string, h openaitest.Handler, maxAttempts, ticks int, patch map[string]any) spanTree {
	t.Helper()
	set := settings(t, h)
	llmOf := set.LLM
	set.LLM = func() (session.ClientConfig, error) {
		cfg, err := llmOf()
		cfg.MaxAttempts = maxAttempts
		return cfg, err
	}
	set.SimSettings = patch // settings' Override gives the model seats test-model
	ctx, end := traced(t, false)
	s, err := session.Open(ctx, copyDir(t, src), set, session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep, err := s.Run(ctx, ticks); err != nil || rep.LastTick != ticks {
		t.Fatalf("Run = %+v, %v", rep, err)
	}
	return end()
}

// TestTraceOfNarrativeTicks: a run is one trace; under its span each tick
// has its own, and under it its phases and its commit; under each phase
// its calls, with the GenAI attributes of a chat call and the tick and
// phase they belong to, even when (out of order, the default) a call of
// tick 2 started while tick 1 was being played.
func TestTraceOfNarrativeTicks(t *testing.T) {
	tr := runTraced(t, "../simulations/demo-sim", openaitest.FromSchema(nil), 1, 2, nil)
	run := tr.one("arbiter run")
	for _, s := range tr.spans {
		if s.SpanContext().TraceID() != run.SpanContext().TraceID() {
			t.Errorf("span %s is in trace %s, not the run's", s.Name(), s.SpanContext().TraceID())
		}
	}
	if got := tr.childNames(run); fmt.Sprint(got) != "[tick 1 tick 2]" {
		t.Fatalf("under the run: %v", got)
	}
	for n, tick := range tr.children(run) {
		n := n + 1
		if got := tr.childNames(tick); fmt.Sprint(got) != "[commit intention resolution]" {
			t.Errorf("under tick %d: %v", n, got)
		}
		if attr(tick, "arbiter.tick") != fmt.Sprint(n) || attr(tick, "arbiter.calls") != "11" || tick.Status().Code == codes.Error {
			t.Errorf("tick %d span: %v, status %v", n, tick.Attributes(), tick.Status())
		}
		for _, phase := range tr.children(tick) {
			if phase.Name() == "commit" {
				continue
			}
			want := map[string]int{"intention": 6, "resolution": 5}[phase.Name()]
			calls := tr.children(phase)
			if len(calls) != want || attr(phase, "arbiter.calls") != fmt.Sprint(want) || attr(phase, "arbiter.fallbacks") != "0" {
				t.Errorf("tick %d %s: %d calls under it, attributes %v; want %d", n, phase.Name(), len(calls), phase.Attributes(), want)
			}
			if !slices.Contains(events(phase, "state"), "STATE_ENTRY state="+strings.ToUpper(phase.Name())) {
				t.Errorf("tick %d %s: events %v, want its STATE_ENTRY", n, phase.Name(), events(phase, "state"))
			}
			for _, c := range calls {
				checkCall(t, c, n, phase.Name())
			}
		}
	}
}

// checkCall checks the attributes of the span of a call of tick n in phase
// that succeeded at its first attempt, filed under its phase's span: what
// that span says (tick, phase) and what most calls are (one attempt, an
// answer that stopped) it leaves unsaid.
func checkCall(t *testing.T, c sdktrace.ReadOnlySpan, n int, phase string) {
	t.Helper()
	want := map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "test-model", "gen_ai.response.model": "test-model",
		"gen_ai.usage.input_tokens":  fmt.Sprint(openaitest.DefaultUsage.PromptTokens),
		"gen_ai.usage.output_tokens": fmt.Sprint(openaitest.DefaultUsage.CompletionTokens),
		"server.address":             "127.0.0.1", "arbiter.tick": "", "arbiter.phase": "", "arbiter.attempts": "",
		"gen_ai.response.finish_reasons": "",
	}
	for k, v := range want {
		if got := attr(c, k); got != v {
			t.Errorf("call %s of tick %d %s: %s = %q, want %q", attr(c, "arbiter.entity"), n, phase, k, got, v)
		}
	}
	if attr(c, "gen_ai.request.max_tokens") == "" {
		t.Errorf("call %s of tick %d %s has no gen_ai.request.max_tokens", attr(c, "arbiter.entity"), n, phase)
	}
	if c.Name() != "chat test-model" || c.SpanKind() != trace.SpanKindClient || c.Status().Code != codes.Unset {
		t.Errorf("call span %q kind %v status %v", c.Name(), c.SpanKind(), c.Status())
	}
	if !strings.HasPrefix(attr(c, "arbiter.entity"), phase+":") || attr(c, "arbiter.endpoint") == "" {
		t.Errorf("call span of tick %d %s: entity %q endpoint %q", n, phase, attr(c, "arbiter.entity"), attr(c, "arbiter.endpoint"))
	}
	for _, a := range c.Attributes() {
		if strings.HasPrefix(string(a.Key), "gen_ai.input") || strings.HasPrefix(string(a.Key), "gen_ai.output.messages") {
			t.Errorf("call span carries %s without capture_content", a.Key)
		}
	}
}

// isResolution routes the arbiter's calls.
func isResolution(c *openaitest.Call) bool {
	rf := c.Request.ResponseFormat
	return rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Name == "MasterOutput"
}

// TestTraceOfRetriedCall: a call answered 500 and then retried is one
// span, with both attempts counted and the failure and the retry that got
// past it as seed 002's events, and no error status.
func TestTraceOfRetriedCall(t *testing.T) {
	tr := runTraced(t, "../simulations/demo-sim", firstResolutionFails(openaitest.Status(500, "server_error", "", "boom")), 2, 1, nil)
	var retried []sdktrace.ReadOnlySpan
	for _, c := range tr.named("chat *") {
		if attr(c, "arbiter.attempts") != "" {
			retried = append(retried, c)
		}
	}
	if len(retried) != 1 {
		t.Fatalf("%d call spans with more than one attempt, want 1", len(retried))
	}
	c := retried[0]
	if attr(c, "arbiter.attempts") != "2" || c.Status().Code != codes.Unset || tr.parent(c).Name() != "resolution" {
		t.Errorf("retried call: %v, status %v", c.Attributes(), c.Status())
	}
	got := strings.Join(events(c, "tool", "kind", "strategy", "success"), "; ")
	want := fmt.Sprintf("TOOL_FAILURE tool=%s kind=server; RECOVERY_ATTEMPT strategy=retry success=true", attr(c, "arbiter.entity"))
	if got != want {
		t.Errorf("events of the retried call:\n got %s\nwant %s", got, want)
	}
}

// firstResolutionFails answers the first arbiter call with bad and every
// other call from its schema.
func firstResolutionFails(bad openaitest.Reply) openaitest.Handler {
	ok := openaitest.FromSchema(nil)
	var failed atomic.Bool
	return func(c *openaitest.Call) openaitest.Reply {
		if isResolution(c) && failed.CompareAndSwap(false, true) {
			return bad
		}
		return ok(c)
	}
}

// TestTraceOfFallback: a call that fails for good has an error status and
// the kind of its error; its phase counts the fallback, and the tick the
// fallback's RECOVERY_ATTEMPT, as the event log does.
func TestTraceOfFallback(t *testing.T) {
	tr := runTraced(t, "../simulations/demo-sim", firstResolutionFails(openaitest.Status(400, "invalid_request_error", "", "no")), 1, 1, nil)
	var failed []sdktrace.ReadOnlySpan
	for _, c := range tr.named("chat *") {
		if c.Status().Code == codes.Error {
			failed = append(failed, c)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d call spans with an error status, want 1", len(failed))
	}
	if c := failed[0]; attr(c, "error.type") != "bad_request" || tr.parent(c).Name() != "resolution" ||
		fmt.Sprint(events(c, "kind")) != "[TOOL_FAILURE kind=bad_request]" {
		t.Errorf("failed call: %v, events %v", c.Attributes(), events(c, "kind"))
	}
	res := tr.one("resolution")
	if attr(res, "arbiter.fallbacks") != "1" || attr(res, "arbiter.failed_calls") != "1" || attr(res, "arbiter.calls") != "5" {
		t.Errorf("resolution phase: %v", res.Attributes())
	}
	if got, want := events(res, "tool", "kind"), "TOOL_FAILURE tool="+attr(failed[0], "arbiter.entity")+" kind=bad_request"; !slices.Contains(got, want) {
		t.Errorf("resolution phase events: %v, want %s", got, want)
	}
	tick := tr.one("tick 1")
	if got := events(tick, "strategy", "success"); !slices.Contains(got, "RECOVERY_ATTEMPT strategy=fallback success=true") {
		t.Errorf("tick events: %v", got)
	}
}

// TestTraceOfConquestToolLoop: a model seat's turn is an invoke_agent span
// under the orders phase, and under it each model turn is a chat span
// naming the tools it called, each tool call an execute_tool span.
func TestTraceOfConquestToolLoop(t *testing.T) {
	h := openaitest.Sequence(
		openaitest.ToolCalls(openaitest.Tool("c1", "get_state", map[string]any{})),
		openaitest.ToolCalls(openaitest.Tool("c2", "submit_orders", map[string]any{"orders": []any{}})))
	tr := runTraced(t, "../simulations/conquest-demo", h, 1, 1, map[string]any{"seats": map[string]any{"p1": "model"}})
	agent := tr.one("invoke_agent p1")
	if p := tr.one("orders"); agent.Parent().SpanID() != p.SpanContext().SpanID() {
		t.Errorf("invoke_agent p1 is not under the orders phase")
	}
	if attr(agent, "gen_ai.operation.name") != "invoke_agent" || attr(agent, "arbiter.tool_iterations") != "2" || attr(agent, "arbiter.submitted") != "true" {
		t.Errorf("agent span: %v", agent.Attributes())
	}
	var turns []string
	for _, c := range tr.children(agent) {
		turns = append(turns, c.Name()+" "+attr(c, "arbiter.tool_calls"))
		// Under the seat's span rather than its phase's, a call says its
		// tick and phase itself; an answer that called tools, why it ended.
		if c.Name() == "chat test-model" && (attr(c, "arbiter.tick") != "1" || attr(c, "arbiter.phase") != "orders" ||
			attr(c, "gen_ai.response.finish_reasons") != `["tool_calls"]`) {
			t.Errorf("model turn under the seat's span: %v", c.Attributes())
		}
	}
	want := `[chat test-model ["get_state"] execute_tool get_state  chat test-model ["submit_orders"] execute_tool submit_orders ]`
	if fmt.Sprint(turns) != want {
		t.Errorf("under the seat's turn:\n got %v\nwant %s", turns, want)
	}
}

// TestTraceCarriesContentWhenAsked: with capture_content, a call's span
// holds its prompt and its answer as gen_ai messages; without it (every
// other test) neither.
func TestTraceCarriesContentWhenAsked(t *testing.T) {
	set := settings(t, openaitest.FromSchema(nil))
	ctx, end := traced(t, true)
	s, err := session.Open(ctx, copyDir(t, "../simulations/demo-sim"), set, session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c := end().named("chat *")[0]
	in, out := attr(c, "gen_ai.input.messages"), attr(c, "gen_ai.output.messages")
	if !strings.HasPrefix(in, `[{"role":"system","parts":[{"type":"text","content":`) || !strings.Contains(out, `"role":"assistant"`) {
		t.Errorf("content of a call span:\ninput %.200s\noutput %.200s", in, out)
	}
}
