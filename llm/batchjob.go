package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"
)

// DefaultBatchPoll is the wait between two polls of a Batch API job.
const DefaultBatchPoll = 15 * time.Second

// BatchJob says how CompleteBatch submits a phase's calls as one Batch API
// job and waits for it.
type BatchJob struct {
	// ID, when set, is a job submitted earlier (as Submitted was told): it
	// is polled and nothing is submitted, so that a run killed while its
	// job was in flight never pays for the calls twice.
	ID string
	// Endpoint names the endpoint ID went to; "" is the phase's first.
	Endpoint string
	// Tag, when set, names the job among the server's batches (its
	// metadata TagKey): the caller stores it before the job is created,
	// so that a job whose id was never stored can still be found.
	Tag string
	// Find, with Tag and no ID, looks for a job tagged Tag on the endpoint
	// (GET /v1/batches) before submitting one, and adopts it (Submitted is
	// told its id): the run before was stopped between creating the job
	// and storing its id. A job that failed or was cancelled is not
	// adopted.
	Find bool
	// Submitted, when set, is called once the job is created and before
	// any wait, with its id and the name of its endpoint, for the caller
	// to store them. An error ends CompleteBatch with it; the job is left
	// to run.
	Submitted func(ctx context.Context, id, endpoint string) error
	// Forget, when set, is called when the job failed as a whole (it
	// answers nothing, and polling it again finds it failed again): the
	// caller forgets the id it stored, so that the next attempt submits
	// anew rather than poll the failed job for ever.
	Forget func(ctx context.Context) error
	// Progress, when set, is told the job's state after each poll.
	Progress func(BatchStatus)
	// Poll is the wait between polls; 0 is Config.BatchPoll.
	Poll time.Duration
}

// BatchStatus is a Batch API job's state as a poll found it.
type BatchStatus struct {
	ID        string
	Status    string // validating, in_progress, finalizing, completed, expired, cancelled, failed...
	Total     int
	Completed int
	Failed    int
}

// CompleteBatch makes the calls of reqs as one Batch API job (OpenAI's, or
// vLLM's run-batch format) sent to one endpoint of phase: the requests
// are written as JSONL (custom_id is the EntityKey, which must be unique),
// uploaded with purpose "batch", and submitted for /v1/chat/completions
// within 24h; the job is polled until it ends and its output downloaded.
// Each answer is then checked as Complete checks a live one (refusal,
// finish_reason, JSON, schema, Check) and repaired live; a request the
// job did not answer (a failed line, a job that expired part-way) is made
// live, its failure kept in Recoveries. Results are in input order; a
// request that cannot be sent is a Result with Err set, as one call's
// failure is. The error is the job's: it could not be submitted, polled
// or read, it failed as a whole, or ctx ended while waiting.
//
// With a cassette the calls are made one by one through it, as Complete
// makes them.
func (c *Client) CompleteBatch(ctx context.Context, phase string, reqs []Request, job BatchJob) ([]Result, error) {
	if c.cfg.Cassette != nil {
		return c.CreateEach(ctx, len(reqs), func(i int) (Request, error) { return reqs[i], nil })
	}
	start := time.Now()
	results := make([]Result, len(reqs))
	log := c.log.With("phase", phase, "batch", true)
	pool := c.poolOf(phase)
	ep, err := batchEndpoint(pool, phase, job)
	if err != nil {
		return nil, err
	}
	in, err := c.batchInput(ep, phase, reqs, results)
	if err != nil || len(in.sent) == 0 {
		return results, err
	}
	id, ep, err := c.batchJob(ctx, log, pool, ep, phase, job, in)
	if err != nil {
		return nil, err
	}
	one := []*endpoint{ep}
	b, err := c.awaitBatch(ctx, log, one, id, job)
	if err != nil {
		if b.Status == "failed" && job.Forget != nil {
			if ferr := job.Forget(ctx); ferr != nil {
				return nil, errors.Join(err, ferr)
			}
		}
		return nil, err
	}
	answers, err := c.batchAnswers(ctx, log, one, b, in)
	if err != nil {
		return nil, err
	}
	waited := time.Since(start)

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.Workers())
	for key, i := range in.sent {
		g.Go(func() error {
			results[i] = c.batchAnswer(gctx, ep, reqs[i], answers[key], b)
			results[i].Latency += waited
			return nil
		})
	}
	_ = g.Wait() // no task fails: a call's failure is in its Result
	return results, nil
}

// batchEndpoint is the endpoint of phase a job goes to: the one a stored
// job was submitted to, else the one with the most free capacity.
func batchEndpoint(pool []*endpoint, phase string, job BatchJob) (*endpoint, error) {
	if job.Endpoint == "" {
		return pick(pool, nil, "", time.Now()), nil
	}
	i := slices.IndexFunc(pool, func(e *endpoint) bool { return e.name == job.Endpoint })
	if i < 0 {
		return nil, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("batch job %s was submitted to endpoint %s, which phase %s no longer has", job.ID, job.Endpoint, phase)}
	}
	return pool[i], nil
}

// batchLines is a job's input file: a line per request that can be sent,
// the index in the requests of each line's custom_id, and the most bytes
// its answers may take: a line of the output, and each file in all.
type batchLines struct {
	input   bytes.Buffer
	sent    map[string]int // custom_id → index in reqs
	perLine int64
	limit   int64
}

// batchInput writes the line of every request that can be sent, once each,
// for ep; a request that cannot be sent has its failed Result in results.
func (c *Client) batchInput(ep *endpoint, phase string, reqs []Request, results []Result) (*batchLines, error) {
	in := &batchLines{sent: map[string]int{}}
	for i, req := range reqs {
		if e := c.checkRequest(req); e != nil {
			results[i] = Result{Request: req, Err: e}
			continue
		}
		if _, dup := in.sent[req.EntityKey]; dup || req.EntityKey == "" {
			return nil, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("batch of %s: entity key %q is not unique (it is the line's custom_id)", phase, req.EntityKey)}
		}
		in.sent[req.EntityKey] = i
		cr := fitMaxTokens(ChatCompletion(req, c.messages(req)))
		if ep.model != "" {
			cr.Model = ep.model
		}
		line, err := json.Marshal(batchInputLine{CustomID: req.EntityKey, Method: http.MethodPost, URL: string(openai.BatchEndpointChatCompletions), Body: cr})
		if err != nil {
			return nil, &Error{Kind: KindBadRequest, Err: err, Message: "batch line of " + req.EntityKey + ": " + err.Error()}
		}
		in.input.Write(line)
		in.input.WriteByte('\n')
		answer := c.cfg.responseLimit(max(cr.MaxTokens, cr.MaxCompletionTokens))
		in.limit += answer
		in.perLine = max(in.perLine, answer+batchLineEnvelope)
	}
	in.limit += minResponseBytes
	return in, nil
}

// batchJob is the id of the job that answers in, and its endpoint: the
// stored job's, the one a stopped run submitted before storing its id
// (found by its tag), or a new one, stored through job.Submitted before
// anything waits on it.
func (c *Client) batchJob(ctx context.Context, log *slog.Logger, pool []*endpoint, ep *endpoint, phase string, job BatchJob, in *batchLines) (string, *endpoint, error) {
	if job.ID != "" {
		log.Info("polling the batch job submitted before", "job", job.ID, "endpoint", ep.name)
		return job.ID, ep, nil
	}
	verb := "submitted"
	id, found := "", ep
	if job.Find && job.Tag != "" {
		id, found = c.findBatchJob(ctx, log, pool, job.Tag)
		verb = "found"
	}
	if id == "" {
		var err error
		verb = "submitted"
		if id, err = c.submitBatch(ctx, log, []*endpoint{ep}, phase, job.Tag, in.input.Bytes()); err != nil {
			return "", nil, err
		}
		log.Info("batch job submitted", "job", id, "endpoint", ep.name, "calls", len(in.sent))
	} else {
		ep = found
		log.Info("adopting the batch job a stopped run submitted before storing its id", "job", id, "tag", job.Tag)
	}
	if job.Submitted != nil {
		if err := job.Submitted(ctx, id, ep.name); err != nil {
			return "", nil, fmt.Errorf("batch job %s of %s was %s but not stored: %w", id, phase, verb, err)
		}
	}
	return id, ep, nil
}

// findBatchJob looks on every endpoint of the phase (the stopped run may
// have picked another) for the job tagged tag; "" when none has it. A
// server that cannot list its batches is warned about: a job is then
// submitted, as it would be without the tag.
func (c *Client) findBatchJob(ctx context.Context, log *slog.Logger, pool []*endpoint, tag string) (string, *endpoint) {
	for _, e := range pool {
		var id string
		if _, err := c.retry(ctx, log, nil, []*endpoint{e}, 0, "", func(ctx context.Context, ep *endpoint) error {
			var ferr error
			id, ferr = findBatch(ctx, ep, tag)
			return ferr
		}); err != nil {
			log.Warn("could not look for the batch job a stopped run may have submitted", "endpoint", e.name, "tag", tag, "error", err.Error())
		}
		if id != "" {
			return id, e
		}
	}
	return "", nil
}

// batchAnswers reads the job's output file, then its error file, into
// the answer line of each custom_id the job was sent: the first line of
// an id is its answer (the output file's before the error file's), an id
// answered again is reported once. A file is read up to in.limit bytes:
// the calls it answers past that have an oversized error for answer, and
// are made live.
func (c *Client) batchAnswers(ctx context.Context, log *slog.Logger, one []*endpoint, b openai.Batch, in *batchLines) (map[string]batchOutputLine, error) {
	answers := map[string]batchOutputLine{}
	var again []string
	cut := false
	for _, fid := range []*string{b.OutputFileID, b.ErrorFileID} {
		if fid == nil || *fid == "" {
			continue
		}
		f, err := c.batchFile(ctx, log, one, *fid, in)
		if err != nil {
			return nil, err
		}
		if f.bad > 0 {
			log.Warn("batch output lines unreadable: their calls are made live", "job", b.ID, "file", *fid, "lines", f.bad)
		}
		if f.cut {
			log.Warn("batch output file runs over its bound: the calls it answers past it are made live", "job", b.ID, "file", *fid, "bytes", in.limit)
			cut = true
		}
		again = append(again, f.again...)
		for _, l := range f.lines {
			if _, ok := answers[l.CustomID]; ok {
				again = append(again, l.CustomID)
				continue
			}
			answers[l.CustomID] = l
		}
	}
	if len(again) > 0 {
		slices.Sort(again)
		log.Warn("batch output answers calls more than once: the first answer of each is used", "job", b.ID, "calls", strings.Join(slices.Compact(again), ","))
	}
	for key := range in.sent {
		if _, ok := answers[key]; cut && !ok {
			answers[key] = batchOutputLine{CustomID: key, unread: &Error{Kind: KindOversized, Hint: oversizedHint,
				Message: fmt.Sprintf("batch output file runs over the limit of %d bytes before the call's line", in.limit)}}
		}
	}
	return answers, nil
}

// batchAnswer is the Result of req, whose line of the output of job b is
// l (zero when the job did not answer it). Its span names the job, also
// when the call is made live because the job did not answer it.
func (c *Client) batchAnswer(ctx context.Context, ep *endpoint, req Request, l batchOutputLine, b openai.Batch) Result {
	lineErr := c.lineError(ctx, ep, l, b.Status)
	if lineErr == nil {
		var resp openai.ChatCompletionResponse
		if err := json.Unmarshal(l.Response.Body, &resp); err != nil {
			lineErr = &Error{Kind: KindInvalidJSON, Err: err, Message: "batch answer of " + req.EntityKey + " is not a chat completion: " + err.Error()}
		} else {
			u := usageOf(resp.Usage)
			c.usage.add(u)
			ep.usage.add(u)
			a := answer{maxTokens: req.Params.MaxTokens, endpoint: ep.name, window: ep.windows.set}
			a.truncated = a.window.Reached(u)
			if len(resp.Choices) > 0 {
				ch := resp.Choices[0]
				a.content, a.refusal, a.finish = ch.Message.Content, ch.Message.Refusal, ch.FinishReason
				a.toolCalls = len(ch.Message.ToolCalls)
			}
			res := c.complete(ctx, req, &given{ans: a, usage: u}, b.ID)
			res.Endpoint = ep.name
			return res
		}
	}
	// Not answered by the job: asked live, as a retry of the line.
	c.log.Info("batch line not answered, making the call live", "entity", req.EntityKey, "phase", req.Phase, "error", lineErr.Error())
	lineErr.Attempts = 1
	ctx = watchCall(ctx, req.EntityKey) // one call with the live one
	tellFailed(ctx, lineErr)
	res := c.complete(ctx, req, nil, b.ID)
	res.Attempts++
	retried := Recovery{Strategy: StrategyRetry, Err: lineErr, Success: res.Err == nil}
	tellRecovered(ctx, retried)
	res.Recoveries = append([]Recovery{retried}, res.Recoveries...)
	return res
}

// lineError is why l holds no answer, nil when it holds one.
func (c *Client) lineError(ctx context.Context, ep *endpoint, l batchOutputLine, status string) *Error {
	switch {
	case l.unread != nil:
		return l.unread
	case l.CustomID == "":
		return &Error{Kind: KindTimeout, Message: "batch job ended " + status + " without answering the call"}
	case l.Error != nil:
		kind := KindServer
		if l.Error.Code == "batch_expired" {
			kind = KindTimeout
		}
		return &Error{Kind: kind, Message: fmt.Sprintf("batch line failed: %s: %s", l.Error.Code, oneLine(l.Error.Message))}
	case l.Response == nil:
		return &Error{Kind: KindUnknown, Message: "batch line has neither a response nor an error"}
	case l.Response.StatusCode/100 != 2:
		apiErr := &openai.APIError{HTTPStatusCode: l.Response.StatusCode, Message: oneLine(string(l.Response.Body))}
		var er openai.ErrorResponse
		if json.Unmarshal(l.Response.Body, &er) == nil && er.Error != nil {
			apiErr = er.Error
			apiErr.HTTPStatusCode = l.Response.StatusCode
		}
		return ep.class.classify(ctx, apiErr)
	}
	return nil
}

// TagKey is the metadata key of a job's BatchJob.Tag.
const TagKey = "arbiter_job"

// findBatch returns the id of the newest batch on ep tagged tag that did
// not fail and was not cancelled, "" when there is none among the last
// findPages pages.
func findBatch(ctx context.Context, ep *endpoint, tag string) (string, error) {
	limit := 100
	var after *string
	for range findPages {
		page, err := ep.oa.ListBatch(ctx, after, &limit)
		if err != nil {
			return "", err
		}
		for _, b := range page.Data {
			if t, _ := b.Metadata[TagKey].(string); t == tag && !slices.Contains([]string{"failed", "cancelling", "cancelled"}, b.Status) {
				return b.ID, nil
			}
		}
		if !page.HasMore || page.LastID == "" {
			return "", nil
		}
		after = &page.LastID
	}
	return "", nil
}

// findPages bounds how far back findBatch looks: the job it looks for was
// created by the run just stopped, among the newest.
const findPages = 10

// submitBatch uploads input and creates its job tagged tag (when set),
// through the one retry layer, and returns the job's id. A create retried
// after a failure first looks for a job with the tag: the failed attempt
// may have created one whose answer was lost.
func (c *Client) submitBatch(ctx context.Context, log *slog.Logger, one []*endpoint, phase, tag string, input []byte) (string, error) {
	var file openai.File
	if _, err := c.retry(ctx, log, nil, one, 0, "", func(ctx context.Context, ep *endpoint) error {
		var err error
		file, err = ep.oa.CreateFileBytes(ctx, openai.FileBytesRequest{Name: phase + ".jsonl", Bytes: input, Purpose: openai.PurposeBatch})
		return err
	}); err != nil {
		err.Message = "upload of the batch input: " + err.Message
		return "", err
	}
	meta := map[string]any{"phase": phase}
	if tag != "" {
		meta[TagKey] = tag
	}
	var b openai.BatchResponse
	tried := false
	if _, err := c.retry(ctx, log, nil, one, 0, "", func(ctx context.Context, ep *endpoint) error {
		if tried && tag != "" {
			// Not found, or not listed (a server without GET /v1/batches):
			// created again, as without the tag.
			if id, err := findBatch(ctx, ep, tag); err == nil && id != "" {
				b.ID = id
				return nil
			}
		}
		tried = true
		var err error
		b, err = ep.oa.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: file.ID, Endpoint: openai.BatchEndpointChatCompletions,
			CompletionWindow: "24h", Metadata: meta})
		return err
	}); err != nil {
		err.Message = "creating the batch job: " + err.Message
		return "", err
	}
	if b.ID == "" {
		return "", &Error{Kind: KindUnknown, Message: "the server created a batch job without an id"}
	}
	return b.ID, nil
}

// awaitBatch polls job id until it ends; a job that failed as a whole is
// an error, returned with the job.
func (c *Client) awaitBatch(ctx context.Context, log *slog.Logger, one []*endpoint, id string, job BatchJob) (openai.Batch, error) {
	poll := job.Poll
	if poll <= 0 {
		poll = c.cfg.BatchPoll
	}
	for {
		var b openai.BatchResponse
		if _, err := c.retry(ctx, log, nil, one, 0, "", func(ctx context.Context, ep *endpoint) error {
			var err error
			b, err = ep.oa.RetrieveBatch(ctx, id)
			return err
		}); err != nil {
			err.Message = "polling batch job " + id + ": " + err.Message
			return openai.Batch{}, err
		}
		if job.Progress != nil {
			rc := b.RequestCounts
			job.Progress(BatchStatus{ID: id, Status: b.Status, Total: rc.Total, Completed: rc.Completed, Failed: rc.Failed})
		}
		switch b.Status {
		case "completed", "expired", "cancelled":
			return b.Batch, nil
		case "failed":
			msg := "batch job " + id + " failed"
			if b.Errors != nil {
				for _, d := range b.Errors.Data {
					msg += fmt.Sprintf("; %s: %s", d.Code, oneLine(d.Message))
				}
			}
			return b.Batch, &Error{Kind: KindBadRequest, Message: msg}
		}
		if err := c.wait(ctx, poll); err != nil {
			e := c.class.classify(ctx, err)
			e.Message += " while waiting for batch job " + id
			return openai.Batch{}, e
		}
	}
}

// batchFile downloads file id and reads its lines for the calls of in
// (readBatchOutput); a download that fails part-way is retried whole.
func (c *Client) batchFile(ctx context.Context, log *slog.Logger, one []*endpoint, id string, in *batchLines) (batchFileLines, error) {
	var f batchFileLines
	if _, err := c.retry(withStream(ctx), log, nil, one, 0, "", func(ctx context.Context, ep *endpoint) error {
		raw, err := ep.oa.GetFileContent(ctx, id)
		if err != nil {
			return err
		}
		defer raw.Close()
		f, err = readBatchOutput(raw, in.perLine, in.limit, in.sent, c.class.secrets)
		return err
	}); err != nil {
		err.Message = "downloading batch file " + id + ": " + err.Message
		return batchFileLines{}, err
	}
	return f, nil
}

// batchInputLine is one line of a Batch API input file.
type batchInputLine struct {
	CustomID string                       `json:"custom_id"`
	Method   string                       `json:"method"`
	URL      string                       `json:"url"`
	Body     openai.ChatCompletionRequest `json:"body"`
}

// batchOutputLine is one line of a Batch API output or error file.
type batchOutputLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// unread, when set, is why the call's answer was not read: its line,
	// or the file before it, ran over its bound.
	unread *Error
}

// batchLineEnvelope is what a line of a job's output adds to the answer's
// body, whose bound is the request's (responseLimit): custom_id, ids,
// status.
const batchLineEnvelope = 4 << 10

// oversizedHint is what to do about an answer refused as too large.
const oversizedHint = "raise llm.max_response_bytes if the model's answers are really that long"

// batchFileLines is what an output or error file holds for a job's calls.
type batchFileLines struct {
	lines []batchOutputLine // the first line of each custom_id sent, in file order
	again []string          // the custom_ids of the lines after a first
	bad   int               // lines unreadable: not JSON, no custom_id
	cut   bool              // the file ran over its bound, the rest unread
}

// readBatchOutput reads an output or error file from r a line at a time,
// so that what it holds is bounded by the calls sent, not by the file: a
// line of at most perLine bytes is decoded (scrubbed of secrets first); a
// longer one is read no further than the custom_id at its start, and is
// that call's failure (oversized); the file is read up to total bytes,
// and the line running past it dropped (cut). A line whose custom_id was
// not sent is skipped; one that is not a JSON object with a custom_id is
// counted in bad (its call, unanswered, is made live). The error is r's.
func readBatchOutput(r io.Reader, perLine, total int64, sent map[string]int, secrets Secrets) (batchFileLines, error) {
	var f batchFileLines
	seen := map[string]bool{}
	isSent := func(id string) bool { _, ok := sent[id]; return ok }
	keep := func(l batchOutputLine) {
		switch {
		case seen[l.CustomID]:
			f.again = append(f.again, l.CustomID)
		case isSent(l.CustomID):
			seen[l.CustomID] = true
			f.lines = append(f.lines, l)
		}
	}
	lr := &io.LimitedReader{R: r, N: total + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case !long && int64(len(line)+len(chunk)) <= perLine:
			line = append(line, chunk...)
		case !long:
			long = true
			line = append(line, chunk[:min(len(chunk), max(0, idPrefix-len(line)))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return batchFileLines{}, err
		}
		if err != nil && lr.N == 0 {
			f.cut = true // the line running past the bound is dropped
			return f, nil
		}
		switch raw := bytes.TrimSpace(line); {
		case long:
			if id := customID(raw); isSent(id) {
				keep(batchOutputLine{CustomID: id, unread: &Error{Kind: KindOversized, Hint: oversizedHint,
					Message: fmt.Sprintf("batch answer refused: its line runs over the limit of %d bytes", perLine)}})
			} else {
				f.bad++
			}
		case len(raw) > 0:
			var l batchOutputLine
			if json.Unmarshal(secrets.scrubBytes(raw), &l) != nil || l.CustomID == "" {
				f.bad++
			} else {
				keep(l)
			}
		}
		if err != nil {
			return f, nil
		}
		line, long = line[:0], false
	}
}

// idPrefix is how much of a line too long to read is kept to find its
// custom_id, which a Batch API output line names before its answer.
const idPrefix = 1 << 10

// customID is the custom_id the JSON object starting raw names before
// anything it cannot read, "" when it names none there.
func customID(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ""
		}
		var id string
		if key == "custom_id" && json.Unmarshal(v, &id) == nil {
			return id
		}
	}
	return ""
}
