package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// FuzzEncodeChat: a request encodes as go-openai encodes it (json.Marshal
// of the request, with its MarshalJSON of each message), byte for byte,
// whatever its texts, and a string as encoding/json writes it.
func FuzzEncodeChat(f *testing.F) {
	f.Add("m", "You are <Ada> & \"friends\"\n\ttabs \u2028 é", "past\x00\x1f\x7f", `{"a":"b"}`, "", 0.7, 256, true)
	f.Add("", strings.Repeat("plain text, eight bytes at a time. ", 9), "\xff\xfe broken \xe2\x80", "", "ada", float64(0), 0, false)
	f.Add("1234567\u00e9", "1234567\u2028\u20298", "abcdefg\xe2\x80\xa8", "abcdefgh<ijklmno>", "1234567\"", 2.0, 3, false)
	f.Add("gpt\u2029", "<<<<>>>>&&&&\\\\\\\\", "ab\u2028cdefgh\u2029ijkl", "12345678\n", "\u00e9\u00e9\u00e9\u00e9", 1.5, 1, true)
	f.Fuzz(func(t *testing.T, model, system, user, assistant, name string, temperature float64, maxTokens int, schema bool) {
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
		if schema {
			cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "s<", Schema: json.RawMessage(`{"type": "object", "description": "` + "a < b" + `"}`), Strict: true}}
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
