package openaitest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

// batchInput is a JSONL input file of one chat completion per user message.
func batchInput(t *testing.T, users ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, u := range users {
		line, err := json.Marshal(map[string]any{"custom_id": "id-" + u, "method": "POST", "url": "/v1/chat/completions", "body": chat(u)})
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// outputLine is a line of a batch's output or error file.
type outputLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int                           `json:"status_code"`
		Body       openai.ChatCompletionResponse `json:"body"`
	} `json:"response"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func readLines(t *testing.T, c *openai.Client, id *string) map[string]outputLine {
	t.Helper()
	out := map[string]outputLine{}
	if id == nil {
		return out
	}
	raw, err := c.GetFileContent(t.Context(), *id)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	data, _ := io.ReadAll(raw)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l outputLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out[l.CustomID] = l
	}
	return out
}

func TestBatch(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Match(
		func(c *openaitest.Call) openaitest.Reply {
			return openaitest.JSON(map[string]string{"echo": c.LastUserMessage()})
		},
		openaitest.Route{If: openaitest.UserContains("bad"), Then: openaitest.Always(openaitest.Status(500, "server_error", "", "boom"))},
	))
	c := client(srv.URL)
	ctx := t.Context()

	f, err := c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "in.jsonl", Bytes: batchInput(t, "a", "bad", "c"), Purpose: openai.PurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	srv.HoldBatches(true)
	b, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: "24h"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != "in_progress" || b.RequestCounts.Total != 3 {
		t.Errorf("created: status %q, counts %+v", b.Status, b.RequestCounts)
	}
	if b, err = c.RetrieveBatch(ctx, b.ID); err != nil || b.Status != "in_progress" || srv.CallCount() != 0 {
		t.Fatalf("held: status %q, %d calls, %v", b.Status, srv.CallCount(), err)
	}
	srv.HoldBatches(false)
	if b, err = c.RetrieveBatch(ctx, b.ID); err != nil || b.Status != "completed" {
		t.Fatalf("released: status %q, %v", b.Status, err)
	}
	if want := (openai.BatchRequestCounts{Total: 3, Completed: 2, Failed: 1}); b.RequestCounts != want {
		t.Errorf("counts = %+v, want %+v", b.RequestCounts, want)
	}
	out, errs := readLines(t, c, b.OutputFileID), readLines(t, c, b.ErrorFileID)
	if len(out) != 2 || out["id-a"].Response.Body.Choices[0].Message.Content != `{"echo":"a"}` || out["id-c"].Response.StatusCode != 200 {
		t.Errorf("output = %+v", out)
	}
	if e, ok := errs["id-bad"]; !ok || e.Response.StatusCode != 500 || len(errs) != 1 {
		t.Errorf("errors = %+v", errs)
	}
	if srv.CallCount() != 3 || srv.Calls()[0].CustomID != "id-a" {
		t.Errorf("calls: %d, first custom_id %q", srv.CallCount(), srv.Calls()[0].CustomID)
	}
	// A second retrieve does not run the batch again.
	if _, err := c.RetrieveBatch(ctx, b.ID); err != nil || srv.CallCount() != 3 || srv.BatchesCreated() != 1 {
		t.Errorf("after a second retrieve: %d calls, %d batches, %v", srv.CallCount(), srv.BatchesCreated(), err)
	}
}

func TestBatchExpires(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c := client(srv.URL)
	ctx := t.Context()
	srv.ExpireBatchesAfter(1)
	f, err := c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "in.jsonl", Bytes: batchInput(t, "a", "b"), Purpose: openai.PurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: "24h"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err = c.RetrieveBatch(ctx, b.ID); err != nil || b.Status != "expired" {
		t.Fatalf("status %q, %v", b.Status, err)
	}
	out, errs := readLines(t, c, b.OutputFileID), readLines(t, c, b.ErrorFileID)
	if _, ok := out["id-a"]; !ok || len(out) != 1 {
		t.Errorf("output = %+v", out)
	}
	if e := errs["id-b"]; e.Error == nil || e.Error.Code != "batch_expired" {
		t.Errorf("errors = %+v", errs)
	}
}

func TestBatchRefusesWrongRequests(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c := client(srv.URL)
	ctx := t.Context()
	if _, err := c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "in.jsonl", Bytes: []byte("{}\n"), Purpose: openai.PurposeFineTune}); err == nil ||
		!strings.Contains(err.Error(), "purpose") {
		t.Errorf("upload with purpose fine-tune: %v", err)
	}
	f, err := c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "in.jsonl", Bytes: batchInput(t, "a"), Purpose: openai.PurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointEmbeddings, CompletionWindow: "24h"}); err == nil {
		t.Error("a batch of embeddings was created")
	}
	if _, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: "file-nope", Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: "24h"}); err == nil {
		t.Error("a batch of an unknown file was created")
	}
	if _, err := c.RetrieveBatch(ctx, "batch_nope"); err == nil {
		t.Error("an unknown batch was retrieved")
	}
	if srv.BatchesCreated() != 0 {
		t.Errorf("BatchesCreated = %d", srv.BatchesCreated())
	}
}

// TestListBatches: GET /v1/batches lists the batches newest first with
// their metadata, limit at a time after the one named; an unknown after is
// a 404, and WithoutBatchList refuses the list.
func TestListBatches(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c := client(srv.URL)
	ctx := t.Context()
	f, err := c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "in.jsonl", Bytes: batchInput(t, "a"), Purpose: openai.PurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"x", "y", "z"} {
		if _, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions,
			CompletionWindow: "24h", Metadata: map[string]any{"tag": tag}}); err != nil {
			t.Fatal(err)
		}
	}
	two := 2
	page, err := c.ListBatch(ctx, nil, &two)
	if err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[0].ID != "batch_3" || page.Data[0].Metadata["tag"] != "z" || page.LastID != "batch_2" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	page, err = c.ListBatch(ctx, &page.LastID, &two)
	if err != nil || len(page.Data) != 1 || page.HasMore || page.Data[0].ID != "batch_1" {
		t.Fatalf("second page: %+v, %v", page, err)
	}
	unknown := "batch_9"
	if _, err := c.ListBatch(ctx, &unknown, nil); err == nil {
		t.Error("after an unknown batch: no error")
	}
	if srv.BatchLists() != 3 {
		t.Errorf("%d lists counted, want 3", srv.BatchLists())
	}
	none := openaitest.New(t, nil, openaitest.WithoutBatchList())
	if _, err := client(none.URL).ListBatch(ctx, nil, nil); err == nil {
		t.Error("WithoutBatchList: the list was answered")
	}
}

// TestBatchOutputEditedAndDownloadsFailed: Batches lists what was
// created, with its metadata; EditBatchOutput stores what it
// makes of a batch's output file, and FailFileContent makes downloads
// answer 500 until it is lifted.
func TestBatchOutputEditedAndDownloadsFailed(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c := client(srv.URL)
	ctx := t.Context()
	srv.EditBatchOutput(func(out []byte) []byte { return append(out, out...) })
	f, err := c.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "in.jsonl", Bytes: batchInput(t, "a"), Purpose: openai.PurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID, Endpoint: openai.BatchEndpointChatCompletions,
		CompletionWindow: "24h", Metadata: map[string]any{"who": "me"}})
	if err != nil {
		t.Fatal(err)
	}
	if all := srv.Batches(); len(all) != 1 || all[0].ID != b.ID || all[0].Metadata["who"] != "me" {
		t.Errorf("Batches = %+v", all)
	}
	if b, err = c.RetrieveBatch(ctx, b.ID); err != nil || b.OutputFileID == nil {
		t.Fatalf("status %q, %v", b.Status, err)
	}
	srv.FailFileContent(true)
	if _, err := c.GetFileContent(ctx, *b.OutputFileID); err == nil {
		t.Error("a download succeeded under FailFileContent")
	}
	srv.FailFileContent(false)
	raw, err := c.GetFileContent(ctx, *b.OutputFileID)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	data, _ := io.ReadAll(raw)
	if n := strings.Count(string(data), `"custom_id":"id-a"`); n != 2 {
		t.Errorf("the edited output holds id-a %d times, want 2:\n%s", n, data)
	}
}
