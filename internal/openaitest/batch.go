package openaitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// The Files and Batches endpoints of the OpenAI API, as far as a Batch API
// client needs them: POST /v1/files (multipart, purpose "batch"), GET
// /v1/files/{id}/content, POST /v1/batches, GET /v1/batches/{id} and GET
// /v1/batches (newest first, paged by limit and after, with metadata). Each
// line of a batch's input file is one chat completion request, answered by
// the server's Handler as a live call is (and recorded among Calls); its
// answer goes to the output file, an answer of an HTTP error status to the
// error file, both in the Batch API's format.
//
// A batch is done when first retrieved, unless HoldBatches holds it (it
// stays in_progress); ExpireBatchesAfter makes it expire with only its
// first lines answered.

// batchJob is one batch created on the server.
type batchJob struct {
	batch openai.Batch
	done  bool
}

// BatchesCreated is the number of batches created so far (POST /v1/batches
// that succeeded): what a client that must never submit twice is checked by.
func (s *Server) BatchesCreated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.batches)
}

// Batches returns the batches created so far, oldest first, as a retrieve
// would answer them now (their metadata tells whose they are).
func (s *Server) Batches() []openai.Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]openai.Batch, len(s.batchOrder))
	for i, id := range s.batchOrder {
		out[i] = s.batches[id].batch
	}
	return out
}

// BatchLists is the number of GET /v1/batches the server received.
func (s *Server) BatchLists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batchLists
}

// LoseBatchCreates makes the next n POST /v1/batches create their batch
// and then answer 500, as a create whose answer was lost on the way: a
// client that creates again without looking pays twice.
func (s *Server) LoseBatchCreates(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseCreates = n
}

// HoldBatches keeps every batch in_progress while hold is true: a retrieve
// answers its status without running it.
func (s *Server) HoldBatches(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdBatches = hold
}

// FailBatches makes the batches run from now on, while fail is true, fail
// as a whole: status failed, with an error and no output, as a job whose
// input the server refused.
func (s *Server) FailBatches(fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failBatches = fail
}

// ExpireBatchesAfter makes the batches run from now on answer only their
// first n lines and end "expired", the others reported in the error file
// with code batch_expired; a negative n runs them whole again.
func (s *Server) ExpireBatchesAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireAfter = n
}

// FailFileContent makes every GET /v1/files/{id}/content answer 500 while
// fail is true, as a server whose downloads fail after the job ran.
func (s *Server) FailFileContent(fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failFiles = fail
}

// EditBatchOutput makes the batches run from now on store edit(out) as
// their output file instead of out (nil stores out): a server whose output
// repeats a line, or holds one too long to read.
func (s *Server) EditBatchOutput(edit func(out []byte) []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.editOutput = edit
}

func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		Status(http.StatusBadRequest, "invalid_request_error", "", "no file: "+err.Error()).write(w, r, "")
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return
	}
	purpose := r.FormValue("purpose")
	if purpose != string(openai.PurposeBatch) {
		Status(http.StatusBadRequest, "invalid_request_error", "", fmt.Sprintf("purpose %q is not %q", purpose, openai.PurposeBatch)).write(w, r, "")
		return
	}
	writeJSON(w, http.StatusOK, nil, s.addFile(hdr.Filename, purpose, data))
}

// addFile stores data as a file and returns its description.
func (s *Server) addFile(name, purpose string, data []byte) openai.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string][]byte{}
	}
	id := fmt.Sprintf("file-%d", len(s.files)+1)
	s.files[id] = data
	return openai.File{ID: id, Object: "file", Bytes: len(data), FileName: name, Purpose: purpose,
		Status: "processed", CreatedAt: time.Now().Unix()}
}

func (s *Server) fileContent(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	data, ok := s.files[r.PathValue("id")]
	fail := s.failFiles
	s.mu.Unlock()
	if fail {
		Status(http.StatusInternalServerError, "server_error", "", "the file could not be read").write(w, r, "")
		return
	}
	if !ok {
		Status(http.StatusNotFound, "invalid_request_error", "", "No such File object: "+r.PathValue("id")).write(w, r, "")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var req openai.CreateBatchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		Status(http.StatusBadRequest, "invalid_request_error", "", "bad body: "+err.Error()).write(w, r, "")
		return
	}
	if req.Endpoint != openai.BatchEndpointChatCompletions || req.CompletionWindow != "24h" {
		Status(http.StatusBadRequest, "invalid_request_error", "",
			fmt.Sprintf("endpoint %q, completion_window %q: want %q, 24h", req.Endpoint, req.CompletionWindow, openai.BatchEndpointChatCompletions)).write(w, r, "")
		return
	}
	s.mu.Lock()
	input, ok := s.files[req.InputFileID]
	if !ok {
		s.mu.Unlock()
		Status(http.StatusNotFound, "invalid_request_error", "", "No such File object: "+req.InputFileID).write(w, r, "")
		return
	}
	if s.batches == nil {
		s.batches = map[string]*batchJob{}
	}
	id := fmt.Sprintf("batch_%d", len(s.batches)+1)
	j := &batchJob{batch: openai.Batch{ID: id, Object: "batch", Endpoint: req.Endpoint, InputFileID: req.InputFileID,
		CompletionWindow: req.CompletionWindow, Status: "in_progress", CreatedAt: int(time.Now().Unix()),
		RequestCounts: openai.BatchRequestCounts{Total: bytes.Count(input, []byte("\n"))}, Metadata: req.Metadata}}
	s.batches[id] = j
	s.batchOrder = append(s.batchOrder, id)
	b := j.batch
	lost := s.loseCreates > 0
	if lost {
		s.loseCreates--
	}
	s.mu.Unlock()
	if lost {
		Status(http.StatusInternalServerError, "server_error", "", "the answer was lost").write(w, r, "")
		return
	}
	writeJSON(w, http.StatusOK, nil, b)
}

func (s *Server) retrieveBatch(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	j, ok := s.batches[id]
	hold, expire := s.holdBatches, s.expireAfter
	var input []byte
	if ok {
		input = s.files[j.batch.InputFileID]
	}
	s.mu.Unlock()
	if !ok {
		Status(http.StatusNotFound, "invalid_request_error", "", "No such Batch object: "+id).write(w, r, "")
		return
	}
	if !hold {
		s.runBatch(r.Context(), j, input, expire)
	}
	s.mu.Lock()
	b := j.batch
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, nil, b)
}

// listBatches answers GET /v1/batches: the batches newest first, limit
// of them (default 20, at most 100) after the one named by after.
func (s *Server) listBatches(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	s.batchLists++
	s.mu.Unlock()
	if s.noList {
		Status(http.StatusNotFound, "invalid_request_error", "", "Invalid URL (GET /v1/batches)").write(w, r, "")
		return
	}
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			Status(http.StatusBadRequest, "invalid_request_error", "", "limit must be 1..100, got "+v).write(w, r, "")
			return
		}
		limit = n
	}
	s.mu.Lock()
	ids := slices.Clone(s.batchOrder)
	slices.Reverse(ids)
	after := r.URL.Query().Get("after")
	i := slices.Index(ids, after)
	if after != "" {
		ids = ids[i+1:]
	}
	resp := openai.ListBatchResponse{Object: "list", Data: []openai.Batch{}, HasMore: len(ids) > limit}
	for _, id := range ids[:min(limit, len(ids))] {
		resp.Data = append(resp.Data, s.batches[id].batch)
	}
	s.mu.Unlock()
	if after != "" && i < 0 {
		Status(http.StatusNotFound, "invalid_request_error", "", "No such Batch object: "+after).write(w, r, "")
		return
	}
	if n := len(resp.Data); n > 0 {
		resp.FirstID, resp.LastID = resp.Data[0].ID, resp.Data[n-1].ID
	}
	writeJSON(w, http.StatusOK, nil, resp)
}

// batchLine is one line of a batch's input file.
type batchLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// runBatch answers the lines of j once, the first expire of them when
// expire is not negative.
func (s *Server) runBatch(ctx context.Context, j *batchJob, input []byte, expire int) {
	s.batchMu.Lock() // one run of a batch at a time; a second retrieve sees it done
	defer s.batchMu.Unlock()
	if j.done {
		return
	}
	s.mu.Lock()
	fail, edit := s.failBatches, s.editOutput
	if fail {
		now := int(time.Now().Unix())
		j.done, j.batch.Status, j.batch.FailedAt = true, "failed", &now
		// go-openai's Errors is an anonymous struct: filled from its JSON.
		_ = json.Unmarshal([]byte(`{"object":"list","data":[{"code":"invalid_request","message":"the batch was refused as a whole"}]}`), &j.batch.Errors)
	}
	s.mu.Unlock()
	if fail {
		return
	}
	out, errs, counts := s.answerLines(ctx, input, expire)
	status := "completed"
	if expire >= 0 && counts.Total > expire {
		status = "expired"
	}
	var outID, errID *string
	output := out.Bytes()
	if edit != nil {
		output = edit(output)
	}
	if len(output) > 0 {
		id := s.addFile("batch_output.jsonl", "batch_output", output).ID
		outID = &id
	}
	if errs.Len() > 0 {
		id := s.addFile("batch_errors.jsonl", "batch_output", errs.Bytes()).ID
		errID = &id
	}
	now := int(time.Now().Unix())
	s.mu.Lock()
	j.done = true
	j.batch.Status, j.batch.RequestCounts, j.batch.OutputFileID, j.batch.ErrorFileID = status, counts, outID, errID
	if status == "expired" {
		j.batch.ExpiredAt = &now
	} else {
		j.batch.CompletedAt = &now
	}
	s.mu.Unlock()
}

// answerLines answers each line of input, the first expire of them when
// expire is not negative: the output file's lines, the error file's, and
// the counts.
func (s *Server) answerLines(ctx context.Context, input []byte, expire int) (out, errs bytes.Buffer, counts openai.BatchRequestCounts) {
	sc := bufio.NewScanner(bytes.NewReader(input))
	sc.Buffer(nil, 64<<20)
	for n := 0; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		counts.Total++
		var line batchLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			counts.Failed++
			writeLine(&errs, map[string]any{"id": fmt.Sprintf("batch_req_%d", n), "custom_id": nil,
				"response": nil, "error": map[string]string{"code": "invalid_json_line", "message": err.Error()}})
			continue
		}
		if expire >= 0 && n >= expire {
			counts.Failed++
			writeLine(&errs, map[string]any{"id": fmt.Sprintf("batch_req_%d", n), "custom_id": line.CustomID,
				"response": nil, "error": map[string]string{"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
			continue
		}
		status, body := s.answerLine(ctx, line)
		rec := map[string]any{"id": fmt.Sprintf("batch_req_%d", n), "custom_id": line.CustomID,
			"response": map[string]any{"status_code": status, "request_id": fmt.Sprintf("req_%d", n), "body": json.RawMessage(body)},
			"error":    nil}
		if status/100 == 2 {
			counts.Completed++
			writeLine(&out, rec)
		} else {
			counts.Failed++
			writeLine(&errs, rec)
		}
	}
	return out, errs, counts
}

// answerLine runs one input line through the handler as a live call and
// returns the status and body of its answer.
func (s *Server) answerLine(ctx context.Context, line batchLine) (int, []byte) {
	bad := func(msg string) (int, []byte) {
		b, _ := json.Marshal(openai.ErrorResponse{Error: &openai.APIError{Type: "invalid_request_error", Message: msg}})
		return http.StatusBadRequest, b
	}
	if line.Method != http.MethodPost || line.URL != string(openai.BatchEndpointChatCompletions) {
		return bad(fmt.Sprintf("line %s: %s %s is not POST %s", line.CustomID, line.Method, line.URL, openai.BatchEndpointChatCompletions))
	}
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(line.Body, &req); err != nil {
		return bad("line " + line.CustomID + ": " + err.Error())
	}
	s.mu.Lock()
	c := &Call{N: len(s.calls) + 1, Request: req, Body: line.Body, Header: http.Header{}, CustomID: line.CustomID, ctx: ctx, delivered: new(atomic.Bool)}
	s.calls = append(s.calls, c)
	s.mu.Unlock()

	reply := s.handler(c)
	if reply.hang || reply.disconnect {
		return http.StatusInternalServerError, []byte(`{"error":{"message":"the server had an error","type":"server_error"}}`)
	}
	reply.done = s.done
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", strings.NewReader(""))
	rec := httptest.NewRecorder()
	c.delivered.Store(reply.write(rec, hr, req.Model))
	body := bytes.TrimSpace(rec.Body.Bytes())
	if !json.Valid(body) { // a Raw reply: an HTML page from a proxy
		body, _ = json.Marshal(string(body))
	}
	return rec.Code, body
}

func writeLine(buf *bytes.Buffer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("openaitest: batch line: %v", err))
	}
	buf.Write(b)
	buf.WriteByte('\n')
}
