package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Window is a model's context as the client knows it: the most tokens a
// prompt and its answer may take together on the server.
type Window struct {
	Tokens int    `json:"tokens"` // 0: unknown
	Source string `json:"source"` // where Tokens comes from, in words
}

// Reached reports whether an answer whose usage is u, as the server
// counted it, had its prompt cut by a server of this window: a prompt
// longer than the context is cut to it (Ollama reports exactly the
// context, never more), and an answer that runs past the context shifts it
// (Ollama and llama.cpp drop the prompt's beginning to go on writing). A
// server that refuses such requests (OpenAI, vLLM) never reports either.
func (w Window) Reached(u Usage) bool {
	return w.Tokens > 0 && (u.PromptTokens >= w.Tokens || u.PromptTokens+u.CompletionTokens > w.Tokens)
}

// ollamaFingerprint is the system_fingerprint of every answer of Ollama's
// OpenAI-compatible API: such an endpoint is asked /api/show for the
// model's context once.
const ollamaFingerprint = "fp_ollama"

// ollamaDefaultContext is the num_ctx Ollama gives a model whose Modelfile
// sets none (v0.6; OLLAMA_CONTEXT_LENGTH on the server changes it), whatever
// context the model was trained for.
const ollamaDefaultContext = 2048

// showTimeout bounds one /api/show request: a local server answers it in
// milliseconds, and a command must not hang on one that does not.
const showTimeout = 10 * time.Second

// windows are an endpoint's known contexts per model: the configured one
// (context_tokens) for every model, else each model's as its server told it,
// asked once.
type windows struct {
	set Window // from the configuration; Tokens 0 when not set
	mu  sync.Mutex
	of  map[string]*shown // by model
}

// shown is the answer of /api/show for one model, asked once (again only
// when the asker gave up before the answer came).
type shown struct {
	mu   sync.Mutex
	done bool
	w    Window
	err  error
}

// ContextWindow returns the context of model on the endpoint phase's calls
// go to (its first, when there are several): the configuration's
// (llm.context_tokens, or the endpoint's context_tokens) when set, else
// what the server says, asked of Ollama's /api/show (the num_ctx the model
// was created with, else Ollama's default, capped by the model's
// <arch>.context_length). An error says why the context is unknown; the
// answer is kept for the client's life.
func (c *Client) ContextWindow(ctx context.Context, phase, model string) (Window, error) {
	ep := c.poolOf(phase)[0]
	if ep.windows.set.Tokens > 0 {
		return ep.windows.set, nil
	}
	return ep.show(ctx, servedModel(ep, model))
}

// servedModel is the model ep is asked for when a request names model.
func servedModel(ep *endpoint, model string) string {
	if ep.model != "" {
		return ep.model
	}
	return model
}

// window is the context of model at ep for an answer whose
// system_fingerprint is fingerprint: the configured one, else the server's
// when it is Ollama (asked once per model), else unknown. A server that
// does not say is not asked: most have no /api/show.
func (ep *endpoint) window(ctx context.Context, model, fingerprint string) Window {
	if ep.windows.set.Tokens > 0 || fingerprint != ollamaFingerprint {
		return ep.windows.set
	}
	w, _ := ep.show(ctx, model)
	return w
}

// show asks the server of ep for the context of model, once per model; a
// call made meanwhile waits for the answer.
func (ep *endpoint) show(ctx context.Context, model string) (Window, error) {
	ep.windows.mu.Lock()
	if ep.windows.of == nil {
		ep.windows.of = map[string]*shown{}
	}
	s := ep.windows.of[model]
	if s == nil {
		s = &shown{}
		ep.windows.of[model] = s
	}
	ep.windows.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.w, s.err
	}
	sctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	w, err := ep.askShow(sctx, model)
	if err != nil && ctx.Err() != nil {
		return w, err // the asker gave up: the next call asks again
	}
	s.done, s.w, s.err = true, w, err
	return w, err
}

// askShow sends POST /api/show for model to the server of ep: Ollama's
// native API, beside its OpenAI-compatible /v1.
func (ep *endpoint) askShow(ctx context.Context, model string) (Window, error) {
	url := strings.TrimSuffix(ep.baseURL, "/v1") + "/api/show"
	body, _ := json.Marshal(map[string]string{"model": model}) // a string always marshals
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Window{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if ep.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+ep.apiKey)
	}
	resp, err := ep.http.Do(req)
	if err != nil {
		return Window{}, fmt.Errorf("the server does not say (POST /api/show: %s)", ep.class.secrets.Scrub(err.Error()))
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return Window{}, fmt.Errorf("the server does not say (POST /api/show: %v)", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Window{}, fmt.Errorf("the server does not say (POST /api/show answered %d: not Ollama)", resp.StatusCode)
	}
	return OllamaWindow(buf.Bytes())
}

// OllamaWindow reads the context of a model from the body of Ollama's
// /api/show: its num_ctx parameter (what the Modelfile set) when there is
// one, else Ollama's default num_ctx capped by the model's
// <arch>.context_length (model_info), which Ollama never goes past
// unasked.
func OllamaWindow(body []byte) (Window, error) {
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if err := json.Unmarshal(body, &show); err != nil {
		return Window{}, fmt.Errorf("the server does not say (/api/show is not JSON: %v)", err)
	}
	for line := range strings.Lines(show.Parameters) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return Window{Tokens: n, Source: "the model's num_ctx (Ollama /api/show)"}, nil
			}
		}
	}
	arch, _ := show.ModelInfo["general.architecture"].(string)
	key := arch + ".context_length"
	trained, ok := show.ModelInfo[key].(float64)
	if arch == "" || !ok || trained < 1 || trained > 1<<40 {
		return Window{Tokens: ollamaDefaultContext,
			Source: fmt.Sprintf("Ollama's default num_ctx %d (the model sets none; OLLAMA_CONTEXT_LENGTH on the server changes it)", ollamaDefaultContext)}, nil
	}
	if n := int(trained); n < ollamaDefaultContext {
		return Window{Tokens: n, Source: key + " (Ollama /api/show)"}, nil
	}
	return Window{Tokens: ollamaDefaultContext,
		Source: fmt.Sprintf("Ollama's default num_ctx %d, under the model's %s %d (OLLAMA_CONTEXT_LENGTH on the server or a num_ctx parameter changes it)", ollamaDefaultContext, key, int(trained))}, nil
}

// noteKey carries a *serverNote in a call's context, so that the transport
// can tell what the server said beside the answer go-openai decodes.
type noteKey struct{}

// serverNote is what the transport read in an answer's body: a top-level
// "truncated": true, which a server that cut the prompt to its context may
// say (llama.cpp's server does in its own completion answers).
type serverNote struct{ truncated atomic.Bool }

func withNote(ctx context.Context, n *serverNote) context.Context {
	return context.WithValue(ctx, noteKey{}, n)
}

// readNote records in the note of ctx, if any, whether body says the
// server truncated the prompt.
func readNote(ctx context.Context, body []byte) {
	n, ok := ctx.Value(noteKey{}).(*serverNote)
	if !ok || !bytes.Contains(body, []byte(`"truncated"`)) {
		return
	}
	var v struct {
		Truncated bool `json:"truncated"`
	}
	if json.Unmarshal(body, &v) == nil && v.Truncated {
		n.truncated.Store(true)
	}
}
