package phases

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	openai "github.com/sashabaranov/go-openai"
)

// callBench is one call of a phase as the engine makes it: the request and
// the answer a server sends, on a world of 1,000 characters in 100
// locations (10 to a location) whose entities have a full history.
type callBench struct {
	env    Env
	w      *prompts.Snapshot
	build  func() (llm.Request, error)
	read   func(llm.Result) error
	hist   []llm.Exchange
	answer []byte // the server's whole answer
}

func newCallBench(b *testing.B, phase string) callBench {
	b.Helper()
	sim := grid(1000, 100)
	pr, err := prompts.New("")
	if err != nil {
		b.Fatal(err)
	}
	st := sim.InitialState()
	cb := callBench{env: Env{Sim: sim, Prompts: pr, Params: llm.Params{Model: "m", Temperature: 0.7, MaxTokens: 400}}, w: prompts.NewSnapshot(sim, st)}
	loc := sim.Locations[0]
	switch phase {
	case PhaseIntention:
		id := sim.Characters[0].ID
		cb.build = func() (llm.Request, error) { return IntentionRequest(cb.env, cb.w, id) }
		cb.read = func(r llm.Result) error {
			_, err := checkedIntentionOf(r.Output, r.Decoded)
			return err
		}
	default:
		intentions := map[string]string{}
		for _, id := range cb.w.Present(loc.ID) {
			intentions[id] = "I look around the room and talk to whoever is there about the harvest."
		}
		cb.build = func() (llm.Request, error) { return ResolutionRequest(cb.env, cb.w, loc, intentions) }
		cb.read = func(r llm.Result) error {
			_, _, err := defaultSchemas().checkedMasterOutput(r.Output, r.Decoded)
			return err
		}
	}
	req, err := cb.build()
	if err != nil {
		b.Fatal(err)
	}
	for range llm.DefaultDepth {
		cb.hist = append(cb.hist, llm.Exchange{User: strings.Repeat("What happened at the last tick. ", 8), Assistant: `{"intention":"I go on."}`})
	}
	v, err := openaitest.Instance(&openaitest.Call{Request: llm.ChatCompletion(req, nil)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	content, _ := json.Marshal(v)
	cb.answer, _ = json.Marshal(openai.ChatCompletionResponse{ID: "c", Object: "chat.completion", Model: "m",
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: "assistant", Content: string(content)},
			FinishReason: openai.FinishReasonStop}},
		Usage: openai.Usage{PromptTokens: 900, CompletionTokens: 60, TotalTokens: 960}})
	return cb
}

// BenchmarkIntentionCall and BenchmarkResolutionCall are the engine's work
// on one call of each phase, a step at a time: build (the prompt rendered
// and the request made), encode (the request's bytes, as go-openai writes
// them), decode (the answer's envelope, as go-openai reads it, and the
// phase's value read from its content), and the whole call through the
// client against an in-process server (schema check and HTTP included).
func BenchmarkIntentionCall(b *testing.B)  { benchmarkCall(b, PhaseIntention) }
func BenchmarkResolutionCall(b *testing.B) { benchmarkCall(b, PhaseResolution) }

func benchmarkCall(b *testing.B, phase string) {
	cb := newCallBench(b, phase)
	req, _ := cb.build()
	msgs := llm.Messages(req, cb.hist, llm.DefaultDepth)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req, err := cb.build()
			if err != nil {
				b.Fatal(err)
			}
			llm.Messages(req, cb.hist, llm.DefaultDepth)
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(llm.ChatCompletion(req, msgs)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var resp openai.ChatCompletionResponse
			if err := json.Unmarshal(cb.answer, &resp); err != nil {
				b.Fatal(err)
			}
			dec := json.NewDecoder(strings.NewReader(resp.Choices[0].Message.Content))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
			if err := cb.read(llm.Result{Output: json.RawMessage(resp.Choices[0].Message.Content), Decoded: v}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("call", func(b *testing.B) {
		srv := openaitest.New(b, openaitest.Always(openaitest.Raw(200, "application/json", string(cb.answer))))
		client, err := llm.New(llm.Config{BaseURL: srv.URL, APIKey: "k", Depth: llm.DefaultDepth})
		if err != nil {
			b.Fatal(err)
		}
		for _, ex := range cb.hist {
			client.History().Append(req.EntityKey, ex)
		}
		b.ReportAllocs()
		for b.Loop() {
			res := client.Complete(b.Context(), req)
			if res.Err != nil {
				b.Fatal(res.Err)
			}
			if err := cb.read(res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
