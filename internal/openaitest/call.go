package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"
)

// Call is one chat completion request received by the server.
type Call struct {
	N       int                          // 1-based arrival number over the server's life
	Request openai.ChatCompletionRequest // the decoded request
	Body    []byte                       // the raw request body
	Header  http.Header                  // the request headers
	// CustomID is the custom_id of the batch input line the request came
	// in, "" for a live call.
	CustomID string

	ctx       context.Context
	delivered *atomic.Bool // a pointer: tests copy calls
}

// Context is the request's context: done once the client has gone away
// (its timeout, a cancel) or the server closes.
func (c *Call) Context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// Delivered reports whether the reply was written while the client still
// waited for it: false until then, and for good after a hang, a
// disconnect, or a client that gave up (its timeout) before the reply was
// written. A test counting what the client could read counts these.
func (c *Call) Delivered() bool { return c.delivered != nil && c.delivered.Load() }

// Messages returns the request's messages.
func (c *Call) Messages() []openai.ChatCompletionMessage { return c.Request.Messages }

// SystemMessage returns the content of the first system message, or "".
func (c *Call) SystemMessage() string {
	for _, m := range c.Request.Messages {
		if m.Role == openai.ChatMessageRoleSystem {
			return m.Content
		}
	}
	return ""
}

// LastUserMessage returns the content of the last user message, or "".
func (c *Call) LastUserMessage() string {
	for i := len(c.Request.Messages) - 1; i >= 0; i-- {
		if m := c.Request.Messages[i]; m.Role == openai.ChatMessageRoleUser {
			return m.Content
		}
	}
	return ""
}

// SchemaName returns response_format.json_schema.name, or "".
func (c *Call) SchemaName() string {
	if rf := c.Request.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		return rf.JSONSchema.Name
	}
	return ""
}

// Schema returns response_format.json_schema.schema as sent, or nil.
func (c *Call) Schema() json.RawMessage {
	rf := c.Request.ResponseFormat
	if rf == nil || rf.JSONSchema == nil || rf.JSONSchema.Schema == nil {
		return nil
	}
	b, err := rf.JSONSchema.Schema.MarshalJSON()
	if err != nil {
		return nil
	}
	return b
}

// Strict reports response_format.json_schema.strict.
func (c *Call) Strict() bool {
	rf := c.Request.ResponseFormat
	return rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Strict
}

// SchemaConst returns the single allowed value of a top-level property of the
// request's schema (a const or a one-value enum), or "" when it has none; e.g.
// SchemaConst("location_id") tells which location a game master call is for.
func (c *Call) SchemaConst(property string) string {
	var s struct {
		Properties map[string]struct {
			Const any   `json:"const"`
			Enum  []any `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(c.Schema(), &s) != nil {
		return ""
	}
	p := s.Properties[property]
	v := p.Const
	if v == nil && len(p.Enum) == 1 {
		v = p.Enum[0]
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
