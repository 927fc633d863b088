package llm

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// decodedByEncodingJSON is what parseJSON gave before decodeValue: the
// value encoding/json's Decoder with UseNumber reads, or its error.
func decodedByEncodingJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

// FuzzDecodeValue: decodeValue reads what encoding/json's Decoder reads,
// to the same value, and nothing it refuses (which parseJSON then leaves
// to it for the error).
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{
		`{"intention":"I look around."}`, ` {"a": [1, -2.5e+3, true, false, null, {}, []], "a": "last"} `,
		`"\u00e9\ud83d\ude00\ud800x\udc00\\\"\/\b\f\n\r\t"`, "\"\xff\xfe é\"", `01`, `1.`, `-`, `1e`, `[1,]`, `{"a":1,}`,
		`{"a" 1}`, `tru`, `truex`, `nul`, "\"a\x01\"", `"\x"`, `"\u12"`, `"\ud800\u12"`, `"\u+12a"`, `"\u_12a"`, `"\u0x1a"`, `{} {}`, `[[[[]]]]`, ``, "\ufeff{}",
		`{"tick":7,"location_id":"hall","characters":{"ada":{"memory_entry":"x","location":"hall"}}}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr := decodedByEncodingJSON(s)
		got, ok := decodeValue(s)
		if ok && wantErr != nil {
			t.Fatalf("decodeValue(%q) = %#v; encoding/json refuses it: %v", s, got, wantErr)
		}
		if !ok && wantErr == nil {
			t.Fatalf("decodeValue(%q) refused what encoding/json reads as %#v", s, want)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeValue(%q) = %#v, encoding/json %#v", s, got, want)
		}
		if v, err := parseJSON(s); (err != nil) != (wantErr != nil) || !reflect.DeepEqual(v, want) {
			t.Fatalf("parseJSON(%q) = %#v, %v; want %#v, %v", s, v, err, want, wantErr)
		}
	})
}

// TestDecodeChatAnswerReads: the answers servers send are read the short
// way (decodeChatAnswer), not left to encoding/json.
func TestDecodeChatAnswerReads(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"OpenAI": `{"id":"chatcmpl-1","object":"chat.completion","created":1732400000,"model":"gpt-4o-mini",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"{\"intention\":\"I go.\"}","refusal":null},"logprobs":null,"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0}},` +
			`"service_tier":"default","system_fingerprint":"fp_1"}`,
		"Ollama": `{"id":"chatcmpl-2","object":"chat.completion","created":1732400000,"model":"stories","system_fingerprint":"fp_ollama",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],` +
			"\n" + `"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
	} {
		got, ok := decodeChatAnswer([]byte(body))
		if !ok {
			t.Errorf("%s: not read the short way", name)
			continue
		}
		var want openai.ChatCompletionResponse
		if err := json.Unmarshal([]byte(body), &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read\n%#v\nwant\n%#v (%v)", name, got, want, err)
		}
	}
}

// TestAnswersOutliveTheirBuffer: what decodeChat reads keeps what it says
// once the buffer it was read from (pooled) is read into again, the short
// way and encoding/json's alike.
func TestAnswersOutliveTheirBuffer(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}`,
		`{"id":"c1","model":"m","choices":[{"message":{"role":"assistant","content":"{}","name":"n"}}],"extra":true}`,
	} {
		want, err := decodeChat([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		buf := []byte(body)
		got, err := decodeChat(buf)
		for i := range buf {
			buf[i] = 'x'
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: once its buffer is overwritten, read as\n%#v\nwant\n%#v", body, got, want)
		}
	}
}

// TestDecodeIntegerFitsItsField: an integer is read only when it fits the
// field it goes to, as encoding/json refuses one that does not (an int
// field is 32 bits on a 32-bit build).
func TestDecodeIntegerFitsItsField(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		bits int
		ok   bool
	}{{"2147483647", 32, true}, {"2147483648", 32, false}, {"-2147483648", 32, true}, {"2147483648", 64, true}, {"9223372036854775808", 64, false}, {"1.0", 64, false}} {
		d := valueDecoder{s: tt.text}
		var n int64
		if got := d.integer(&n, tt.bits); got != tt.ok {
			t.Errorf("integer(%s, %d bits) = %v, want %v", tt.text, tt.bits, got, tt.ok)
		}
	}
}
