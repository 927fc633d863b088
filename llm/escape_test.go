package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// FuzzEncodeChat: a request encodes as go-openai encodes it (json.Marshal
// of the request, with its MarshalJSON of each message), byte for byte,
// whatever its texts, and a string as encoding/json writes it.
func FuzzEncodeChat(f *testing.F) {
	f.Add("m", "You are <Ada> & \"friends\"\n\ttabs \u2028 é", "past\x00\x1f\x7f", `{"a":"b"}`, "", 0.7, 256, `{"type": "object", "description": "a < b"}`)
	f.Add("", strings.Repeat("plain text, eight bytes at a time. ", 9), "\xff\xfe broken \xe2\x80", "", "ada", float64(0), 0, "")
	f.Add("1234567\u00e9", "1234567\u2028\u20298", "abcdefg\xe2\x80\xa8", "abcdefgh<ijklmno>", "1234567\"", 2.0, 3, `{"type":"object","properties":{"schema":{"const":null}},"required":["schema"]}`)
	f.Add("gpt\u2029", "<<<<>>>>&&&&\\\\\\\\", "ab\u2028cdefgh\u2029ijkl", "12345678\n", "\u00e9\u00e9\u00e9\u00e9", 1.5, 1, `{"description":"\u2028 \"schema\":null"}`)
	f.Add("m", "s", "u", "a", "n", 0.5, 9, `{"a":[1,2,{"b":"c"}]`)
	f.Fuzz(func(t *testing.T, model, system, user, assistant, name string, temperature float64, maxTokens int, schema string) {
		if got, want := string(appendString(nil, user)), marshalled(t, user); got != want {
			t.Fatalf("appendString(%q) = %s, want %s", user, got, want)
		}
		cr := openai.ChatCompletionRequest{Model: model, Temperature: float32(temperature), MaxTokens: maxTokens,
			Messages: []openai.ChatCompletionMessage{
				{Role: "system", Content: system},
				{Role: "user", Content: user, Name: name},
				{Role: "assistant", Content: assistant},
				{Role: "user", Content: ""},
			}}
		if schema != "" { // valid or not, compact or not, with what encoding/json escapes or not
			cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: `s<"schema":null`, Description: name, Schema: json.RawMessage(schema), Strict: true}}
			// A schema as encoding/json writes it, as SchemaEncoded sends it.
			if b, err := json.Marshal(json.RawMessage(schema)); err == nil && string(b) == schema {
				cr.ResponseFormat.JSONSchema.Schema = encodedSchema(schema)
			}
		}
		var buf bytes.Buffer
		buf.WriteString("left as it was")
		err := encodeChat(&buf, cr)
		want, wantErr := json.Marshal(cr)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, want %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if got := strings.TrimPrefix(buf.String(), "left as it was"); got != string(want) {
			t.Fatalf("encoded\n%s\nwant (go-openai)\n%s", got, want)
		}
	})
}

func marshalled(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEncodeChatFallsBack: a request with content parts or tool calls is
// encoded by encoding/json whole, still as go-openai encodes it.
func TestEncodeChatFallsBack(t *testing.T) {
	t.Parallel()
	for name, cr := range wireRequests() {
		var buf bytes.Buffer
		if err := encodeChat(&buf, cr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(cr)
		if err != nil || buf.String() != string(want) {
			t.Errorf("%s: encoded\n%s\nwant\n%s (%v)", name, buf.String(), want, err)
		}
	}
}

// TestSchemaEncodedSentAsIs: a schema the caller says is as encoding/json
// writes it goes over the wire byte for byte; one it does not is sent as
// encoding/json writes it (compact), as before.
func TestSchemaEncodedSentAsIs(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c, _ := newTestClient(t, srv.URL, nil)
	compact, err := json.Marshal(json.RawMessage(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		schema  json.RawMessage
		encoded bool
	}{{compact, true}, {testSchema, false}} {
		req := testRequest("What do you do?")
		req.Schema, req.SchemaEncoded = tt.schema, tt.encoded
		if res := c.Complete(t.Context(), req); res.Err != nil {
			t.Fatalf("encoded %v: %v", tt.encoded, res.Err)
		}
		calls := srv.Calls()
		body := calls[len(calls)-1].Body
		if !bytes.Contains(body, append([]byte(`"schema":`), compact...)) {
			t.Errorf("encoded %v: the body does not hold the schema compact: %s", tt.encoded, body)
		}
		if !json.Valid(body) {
			t.Errorf("encoded %v: the body is not JSON: %s", tt.encoded, body)
		}
	}
}

// TestEncodedSchemaEmpty: an encoded schema that is empty is written
// null, as a json.RawMessage is, not left out of a broken body (the client
// refuses a request without a schema before this; encodeChat does not
// count on it).
func TestEncodedSchemaEmpty(t *testing.T) {
	t.Parallel()
	cr := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "s", Schema: encodedSchema(nil), Strict: true}}}
	var buf bytes.Buffer
	if err := encodeChat(&buf, cr); err != nil || !json.Valid(buf.Bytes()) || !bytes.Contains(buf.Bytes(), []byte(`"schema":null`)) {
		t.Errorf("encoded %s, %v; want JSON with a null schema", buf.Bytes(), err)
	}
	if want, err := json.Marshal(cr); err != nil || string(want) != buf.String() {
		t.Errorf("encoded\n%s\nwant (json.Marshal)\n%s (%v)", buf.Bytes(), want, err)
	}
}
