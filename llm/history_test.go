package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

func TestHistoryKeepsDepth(t *testing.T) {
	t.Parallel()
	h := NewHistory(2)
	for i := range 5 {
		h.Append("a", Exchange{User: fmt.Sprint(i), Assistant: "x"})
	}
	got := h.Get("a")
	if len(got) != 2 || got[0].User != "3" || got[1].User != "4" {
		t.Errorf("Get = %+v, want the last 2", got)
	}
	got[0].User = "changed"
	if h.Get("a")[0].User != "3" {
		t.Error("Get returned the internal slice")
	}
	if h.Get("b") != nil {
		t.Error("unknown key has history")
	}
	h.Append("", Exchange{"u", "a"})
	if len(h.Snapshot()) != 1 {
		t.Error("the empty key got history")
	}
}

func TestHistoryDepthZeroKeepsNothing(t *testing.T) {
	t.Parallel()
	h := NewHistory(0)
	h.Append("a", Exchange{"u", "a"})
	h.Load(map[string][]Exchange{"b": {{"u", "a"}}})
	if len(h.Snapshot()) != 0 {
		t.Errorf("Snapshot = %v", h.Snapshot())
	}
}

func TestHistoryLoadAndSnapshot(t *testing.T) {
	t.Parallel()
	h := NewHistory(2)
	h.Append("old", Exchange{"u", "a"})
	in := map[string][]Exchange{"a": {{"1", "1"}, {"2", "2"}, {"3", "3"}}, "b": {{"1", "1"}}, "empty": nil}
	h.Load(in)
	snap := h.Snapshot()
	if len(snap) != 2 || len(snap["a"]) != 2 || snap["a"][0].User != "2" || len(snap["b"]) != 1 {
		t.Errorf("Snapshot after Load = %+v", snap)
	}
	in["b"][0].User = "mutated"
	snap["a"][0].User = "mutated"
	h.Append("a", Exchange{"4", "4"})
	if got := h.Get("b")[0].User; got != "1" {
		t.Errorf("Load kept the caller's slice: %q", got)
	}
	if got := h.Get("a"); got[0].User != "3" || got[1].User != "4" {
		t.Errorf("Snapshot shares memory, or Append after Load is wrong: %+v", got)
	}
}

func TestHistoryCommitSkipsFailures(t *testing.T) {
	t.Parallel()
	h := NewHistory(3)
	ok := Result{Request: Request{EntityKey: "intention:ada", User: "u"}, Output: json.RawMessage(`{"a":1}`)}
	failed := Result{Request: Request{EntityKey: "intention:bo", User: "u"}, Raw: "nope", Err: errors.New("x")}
	h.Commit(ok, failed)
	if got := h.Get("intention:ada"); len(got) != 1 || got[0] != (Exchange{"u", `{"a":1}`}) {
		t.Errorf("ada = %+v", got)
	}
	if got := h.Get("intention:bo"); got != nil {
		t.Errorf("a failed call entered history: %+v", got)
	}
}

func TestHistoryConcurrent(t *testing.T) {
	t.Parallel()
	h := NewHistory(3)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			key := fmt.Sprint("k", i%2)
			for j := range 100 {
				h.Append(key, Exchange{User: fmt.Sprint(j)})
				_ = h.Get(key)
				_ = h.Snapshot()
			}
		})
	}
	wg.Wait()
	for k, exs := range h.Snapshot() {
		if len(exs) != 3 {
			t.Errorf("%s has %d exchanges", k, len(exs))
		}
	}
}

// TestExchangeHoldsTheAnswerOnce: an answer the model wrote as it was
// validated enters the history as the very string the result holds, not a
// copy (a tick at 100,000 characters holds its 100,000 intentions until
// its commit, in the result and in the history both); one validated into
// another form enters as that form.
func TestExchangeHoldsTheAnswerOnce(t *testing.T) {
	res := Result{Request: Request{User: "u"}, Raw: `{"intention":"wait"}`, Output: json.RawMessage(`{"intention":"wait"}`)}
	ex, ok := res.Exchange()
	if !ok || ex.Assistant != res.Raw || unsafe.StringData(ex.Assistant) != unsafe.StringData(res.Raw) {
		t.Errorf("Exchange() = %+v, %v; want the answer held by the result, %q", ex, ok, res.Raw)
	}
	if n := testing.AllocsPerRun(10, func() { res.Exchange() }); n != 0 {
		t.Errorf("Exchange allocated %v times; want 0", n)
	}
	fenced := Result{Request: Request{User: "u"}, Raw: "```json\n{\"intention\":\"wait\"}\n```", Output: json.RawMessage(`{"intention":"wait"}`)}
	if ex, ok := fenced.Exchange(); !ok || ex.Assistant != `{"intention":"wait"}` {
		t.Errorf("Exchange() of a fenced answer = %+v, %v; want the validated output", ex, ok)
	}
}
