package llm

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/arbiter-sim/arbiter/schemas"
)

// printer renders validation messages.
var printer = message.NewPrinter(language.English)

// answer is what the checks look at in one model reply.
type answer struct {
	content   string
	refusal   string
	finish    openai.FinishReason
	toolCalls int
	maxTokens int    // of the request, to say which limit cut the answer
	endpoint  string // the endpoint that answered (Endpoint's name)
	model     string // the model the answer names
	window    Window // the model's context there
	truncated bool   // the prompt filled it (see served)
}

// acceptSchema compiles the schema req's answers are checked against: its
// Accept when it has one, else its Schema.
func (c *Client) acceptSchema(req Request) (*jsonschema.Schema, *Error) {
	accept := req.Schema
	if req.Accept != nil {
		accept = req.Accept
	}
	schema, err := c.schemas.get(accept)
	if err != nil {
		return nil, &Error{Kind: KindSchemaInvalid, Err: err,
			Message: fmt.Sprintf("schema %s of %s does not compile: %v", req.SchemaName, req.EntityKey, err)}
	}
	return schema, nil
}

// checkRequested is checkAnswer of a, then req's own Check of the answer.
func checkRequested(schema *jsonschema.Schema, req Request, a answer) (json.RawMessage, any, *Error) {
	out, decoded, bad := checkAnswer(schema, req.SchemaName, a)
	if bad == nil && req.Check != nil {
		if err := req.Check(out); err != nil {
			bad = &Error{Kind: KindSchema, Message: fmt.Sprintf("answer does not match schema %s: %v", req.SchemaName, err), Err: err}
		}
	}
	return out, decoded, bad
}

// checkAnswer checks a reply in the order refusal, finish_reason, JSON,
// schema, and returns the JSON answer when all pass, and the answer as it
// decoded it (see Result.Decoded). A reply wrapped in one
// Markdown code fence is accepted (small local models add them); nothing else
// is forgiven.
func checkAnswer(schema *jsonschema.Schema, schemaName string, a answer) (json.RawMessage, any, *Error) {
	if e := stopError(a.refusal, a.finish, a.maxTokens); e != nil {
		return nil, nil, e
	}
	text := stripFence(a.content)
	if text == "" {
		msg := "answer is empty"
		if a.toolCalls > 0 {
			msg = "answer is a tool call instead of a JSON object"
		}
		return nil, nil, &Error{Kind: KindInvalidJSON, Message: msg}
	}
	v, err := parseJSON(text)
	if err != nil {
		return nil, nil, &Error{Kind: KindInvalidJSON, Err: err, Message: "answer is not valid JSON: " + err.Error()}
	}
	if err := schema.Validate(v); err != nil {
		e := &Error{Kind: KindSchema, Err: err, Message: fmt.Sprintf("answer does not match schema %s", schemaName)}
		if ve, ok := errors.AsType[*jsonschema.ValidationError](err); ok {
			e.Message += ": " + describe(ve)
		}
		return nil, nil, e
	}
	return json.RawMessage(text), v, nil
}

// stripFence trims space and one surrounding ``` or ```json fence.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || strings.ContainsAny(strings.TrimPrefix(first, "```"), "{[\"") {
		return s
	}
	return strings.TrimSpace(strings.TrimSuffix(rest, "```"))
}

// parseJSON decodes exactly one JSON value, keeping numbers exact.
func parseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, fmt.Errorf("%w (at byte %d)", err, se.Offset)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value (at byte %d)", end)
	}
	return v, nil
}

// describe lists the leaf failures of a validation error as
// "/json/pointer: reason", sorted, at most five of them.
func describe(ve *jsonschema.ValidationError) string {
	const most = 5
	var leaves []string
	seen := map[string]bool{}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc := "/" + strings.Join(escapePointer(e.InstanceLocation), "/")
		s := loc + ": " + e.ErrorKind.LocalizedString(printer)
		if !seen[s] {
			seen[s] = true
			leaves = append(leaves, s)
		}
	}
	walk(ve)
	slices.Sort(leaves) // deterministic: causes come from map iteration
	if len(leaves) > most {
		leaves = append(leaves[:most], fmt.Sprintf("and %d more", len(leaves)-most))
	}
	return strings.Join(leaves, "; ")
}

func escapePointer(tokens []string) []string {
	out := make([]string, len(tokens))
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for i, t := range tokens {
		out[i] = r.Replace(t)
	}
	return out
}

// repairPrompt is the user message that asks the model to fix its answer.
func repairPrompt(e *Error, schemaName string) string {
	return fmt.Sprintf("Your previous answer was rejected: %s.\n"+
		"Reply with only the corrected JSON object, matching the schema %s: no explanation, no code fences.",
		e.Message, schemaName)
}

// schemaCache compiles each distinct schema once. Schemas are specialised per
// request, so the cache is bounded.
type schemaCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*jsonschema.Schema
}

const schemaCacheSize = 512

func (sc *schemaCache) get(raw json.RawMessage) (*jsonschema.Schema, error) {
	key := sha256.Sum256(raw)
	sc.mu.Lock()
	s, ok := sc.m[key]
	sc.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.m == nil {
		sc.m = make(map[[sha256.Size]byte]*jsonschema.Schema)
	}
	if len(sc.m) >= schemaCacheSize {
		for k := range sc.m { // evict one at random
			delete(sc.m, k)
			break
		}
	}
	sc.m[key] = s
	return s, nil
}

// compileSchema compiles a self-contained schema; $refs to files or the
// network are refused.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	return schemas.Compile("mem:///request.schema.json", raw)
}
