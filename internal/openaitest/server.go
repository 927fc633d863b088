// Package openaitest runs an in-process OpenAI-compatible HTTP server for
// tests, so that code under test goes through the real go-openai client.
//
// A test scripts the answers with a Handler, called once per chat completion
// request with the decoded request:
//
//	srv := openaitest.New(t, openaitest.Sequence(
//		openaitest.Status(500, "server_error", "", "boom"),
//		openaitest.JSON(map[string]any{"ok": true}),
//	))
//	cfg := openai.DefaultConfig("test")
//	cfg.BaseURL = srv.URL
//
// The Files and Batches endpoints answer a Batch API job's lines with the
// same Handler (see batch.go).
//
// The server records every request, counts requests in flight and is closed
// when the test ends. It is safe for concurrent requests.
package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// Handler decides the reply to one chat completion request. It may be called
// concurrently.
type Handler func(c *Call) Reply

// Server is a running fake endpoint.
type Server struct {
	// URL is the base URL to give a client, ending in "/v1".
	URL string

	srv     *httptest.Server
	handler Handler
	models  []string
	apiKey  string
	done    chan struct{}
	show    any      // see Ollama; nil: /api/show is not found
	shows   []string // the model of each POST /api/show received

	mu          sync.Mutex
	calls       []*Call
	inFlight    int
	maxInFlight int

	// The Files and Batches endpoints (batch.go).
	files       map[string][]byte
	batches     map[string]*batchJob
	batchOrder  []string // ids, oldest first
	batchLists  int
	loseCreates int  // see LoseBatchCreates
	noList      bool // see WithoutBatchList
	holdBatches bool
	failBatches bool
	expireAfter int
	failFiles   bool                // see FailFileContent
	editOutput  func([]byte) []byte // see EditBatchOutput
	batchMu     sync.Mutex
}

// Option configures a Server.
type Option func(*Server)

// WithoutBatchList makes GET /v1/batches answer 404, as a server that
// runs batches without listing them.
func WithoutBatchList() Option {
	return func(s *Server) { s.noList = true }
}

// WithModels sets the model ids listed by GET /v1/models (default "test-model").
func WithModels(ids ...string) Option {
	return func(s *Server) { s.models = ids }
}

// Ollama makes the server answer as Ollama does: every chat completion
// carries system_fingerprint "fp_ollama", and POST /api/show (Ollama's
// native API, beside /v1) answers show, encoded as JSON, for any model:
// e.g. {"parameters": "num_ctx 2048", "model_info":
// {"general.architecture": "llama", "llama.context_length": 2048}}.
func Ollama(show any) Option {
	return func(s *Server) { s.show = show }
}

// Shows returns the model each POST /api/show asked for so far, in
// arrival order.
func (s *Server) Shows() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.shows...)
}

// WithAPIKey makes every endpoint answer 401 unless the request carries
// "Authorization: Bearer key".
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// New starts a server answering chat completions with h (a nil h answers "{}"
// to everything) and closes it when the test ends.
func New(t testing.TB, h Handler, opts ...Option) *Server {
	t.Helper()
	if h == nil {
		h = Always(Content("{}"))
	}
	s := &Server{handler: h, models: []string{"test-model"}, done: make(chan struct{}), expireAfter: -1}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("POST /v1/files", s.uploadFile)
	mux.HandleFunc("GET /v1/files/{id}/content", s.fileContent)
	mux.HandleFunc("POST /v1/batches", s.createBatch)
	mux.HandleFunc("GET /v1/batches/{id}", s.retrieveBatch)
	mux.HandleFunc("GET /v1/batches", s.listBatches)
	if s.show != nil {
		mux.HandleFunc("POST /api/show", s.showModel)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		Status(http.StatusNotFound, "invalid_request_error", "unknown_url",
			fmt.Sprintf("Unknown request URL: %s %s", r.Method, r.URL.Path)).write(w, r, "")
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(func() {
		close(s.done) // release Hang replies before Close waits for them
		s.srv.Close()
	})
	return s
}

// Calls returns the chat completion requests received so far, in arrival order.
func (s *Server) Calls() []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Call(nil), s.calls...)
}

// CallCount is the number of chat completion requests received so far.
func (s *Server) CallCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// MaxInFlight is the largest number of chat completion requests the server
// was handling at the same time.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.apiKey == "" || r.Header.Get("Authorization") == "Bearer "+s.apiKey {
		return true
	}
	Status(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
		"Incorrect API key provided.").write(w, r, "")
	return false
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		Status(http.StatusBadRequest, "invalid_request_error", "",
			"We could not parse the JSON body of your request: "+err.Error()).write(w, r, "")
		return
	}

	s.mu.Lock()
	c := &Call{N: len(s.calls) + 1, Request: req, Body: body, Header: r.Header.Clone(), ctx: r.Context(), delivered: new(atomic.Bool)}
	s.calls = append(s.calls, c)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	reply := s.handler(c)
	reply.done = s.done
	if s.show != nil {
		reply.fingerprint = "fp_ollama"
	}
	c.delivered.Store(reply.write(w, r, req.Model))
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	list := openai.ModelsList{Models: make([]openai.Model, 0, len(s.models))}
	for _, id := range s.models {
		list.Models = append(list.Models, openai.Model{ID: id, Object: "model", OwnedBy: "openaitest", CreatedAt: 1700000000})
	}
	writeJSON(w, http.StatusOK, nil, struct {
		Object string         `json:"object"`
		Data   []openai.Model `json:"data"`
	}{"list", list.Models})
}

func (s *Server) showModel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		writeJSON(w, http.StatusBadRequest, nil, map[string]string{"error": "model is required"})
		return
	}
	s.mu.Lock()
	s.shows = append(s.shows, req.Model)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, nil, s.show)
}

func writeJSON(w http.ResponseWriter, status int, header http.Header, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for k, vs := range header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
