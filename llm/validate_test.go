package llm

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	openai "github.com/sashabaranov/go-openai"
)

func mustSchema(t testing.TB, raw string) *jsonschema.Schema {
	t.Helper()
	var sc schemaCache
	s, err := sc.get(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckAnswerOrder(t *testing.T) {
	t.Parallel()
	s := mustSchema(t, string(testSchema))
	valid := `{"name":"Ada","location":"common"}`
	tests := []struct {
		name string
		a    answer
		kind ErrorKind // KindUnknown: accepted
		text string
	}{
		{"valid", answer{content: valid, finish: "stop"}, KindUnknown, ""},
		{"valid without finish_reason", answer{content: valid}, KindUnknown, ""},
		{"refusal before everything", answer{content: valid, refusal: "no", finish: "length"}, KindRefusal, "model refused: no"},
		{"length before JSON", answer{content: `{"name":`, finish: "length", maxTokens: 10}, KindTruncated, "max_tokens=10"},
		{"length even if the JSON parses", answer{content: valid, finish: "length"}, KindTruncated, "finish_reason=length"},
		{"content filter", answer{content: valid, finish: "content_filter"}, KindRefusal, "content filter"},
		{"empty", answer{content: "  ", finish: "stop"}, KindInvalidJSON, "answer is empty"},
		{"tool call instead", answer{finish: "tool_calls", toolCalls: 1}, KindInvalidJSON, "tool call"},
		{"prose", answer{content: "I go to the garden."}, KindInvalidJSON, "answer is not valid JSON: invalid character 'I'"},
		{"truncated without length", answer{content: `{"name":"Ada"`}, KindInvalidJSON, "unexpected end of JSON input"},
		{"two values", answer{content: valid + valid}, KindInvalidJSON, "unexpected data after the JSON value (at byte 34)"},
		{"trailing prose", answer{content: valid + " hope this helps"}, KindInvalidJSON, "unexpected data"},
		{"missing property", answer{content: `{"name":"Ada"}`}, KindSchema, "answer does not match schema T: /: missing property 'location'"},
		{"extra property", answer{content: `{"name":"Ada","location":"common","mood":"x"}`}, KindSchema, "additional properties 'mood' not allowed"},
		{"wrong enum", answer{content: `{"name":"Ada","location":"moon"}`}, KindSchema, "/location: value must be one of 'common', 'garden'"},
		{"wrong type at root", answer{content: `[1]`}, KindSchema, "/: got array, want object"},
		{"fenced", answer{content: "```json\n" + valid + "\n```"}, KindUnknown, ""},
		{"bare fence", answer{content: "```\n" + valid + "\n```"}, KindUnknown, ""},
		{"fenced prose", answer{content: "```\nhello\n```"}, KindInvalidJSON, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := checkAnswer(s, "T", tt.a)
			if tt.kind == KindUnknown {
				if err != nil || !json.Valid(out) {
					t.Errorf("rejected: %v (out %q)", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %q", out)
			}
			if err.Kind != tt.kind || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("got %v %q, want %v containing %q", err.Kind, err.Error(), tt.kind, tt.text)
			}
		})
	}
}

func TestDescribeListsAtMostFive(t *testing.T) {
	t.Parallel()
	s := mustSchema(t, `{"type":"object","additionalProperties":{"type":"integer"}}`)
	_, _, err := checkAnswer(s, "T", answer{content: `{"a":"x","b":"x","c":"x","d":"x","e":"x","f":"x","g":"x","a/b~":"x"}`})
	if err == nil {
		t.Fatal("accepted")
	}
	if !strings.Contains(err.Error(), "/a: got string, want integer") || !strings.HasSuffix(err.Error(), "and 3 more") {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestDescribeEscapesPointer(t *testing.T) {
	t.Parallel()
	s := mustSchema(t, `{"type":"object","additionalProperties":{"type":"integer"}}`)
	_, _, err := checkAnswer(s, "T", answer{content: `{"a/b~":"x"}`})
	if err == nil || !strings.Contains(err.Error(), "/a~1b~0: got string") {
		t.Errorf("err = %v", err)
	}
}

func TestSchemaCache(t *testing.T) {
	t.Parallel()
	var sc schemaCache
	a, err := sc.get(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sc.get(append(json.RawMessage(nil), testSchema...))
	if a != b {
		t.Error("the same schema compiled twice")
	}
	if _, err := sc.get(json.RawMessage(`{"type": 5}`)); err == nil {
		t.Error("an invalid schema compiled")
	}
	if _, err := sc.get(json.RawMessage(`{"$ref": "file:///etc/passwd"}`)); err == nil {
		t.Error("a schema loaded a file")
	}

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			raw := json.RawMessage(`{"type":"object","properties":{"n":{"const":` + string(rune('0'+i%10)) + `}}}`)
			if _, err := sc.get(raw); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range schemaCacheSize + 10 {
		_, _ = sc.get(json.RawMessage(`{"maxLength":` + strings.Repeat("1", 1) + `,"title":"` + strings.Repeat("x", i) + `"}`))
	}
	if len(sc.m) > schemaCacheSize {
		t.Errorf("cache holds %d schemas", len(sc.m))
	}
}

// fuzzOracle decides by hand whether text satisfies testSchema.
func fuzzOracle(text string) bool {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&m); err != nil || m == nil {
		return false
	}
	// Only space may follow the object. More and Token both miss a stray
	// closing bracket, which is why the rest is looked at directly.
	if strings.TrimSpace(text[dec.InputOffset():]) != "" {
		return false
	}
	if len(m) != 2 {
		return false
	}
	_, nameOK := m["name"].(string)
	loc, _ := m["location"].(string)
	return nameOK && (loc == "common" || loc == "garden")
}

func FuzzCheckAnswer(f *testing.F) {
	for _, seed := range []struct{ content, finish, refusal string }{
		{`{"name":"Ada","location":"common"}`, "stop", ""},
		{`{"name":"Ada","location":"moon"}`, "stop", ""},
		{`{"name":"Ada","location":"garden","x":1}`, "stop", ""},
		{"```json\n{\"name\":\"\",\"location\":\"garden\"}\n```", "stop", ""},
		{`{"name":"Ada","location":"common"`, "length", ""},
		{`{"name":"Ada","location":"common"}{}`, "stop", ""},
		{`{"name":"","location":"common"}}`, "stop", ""},
		{`{"name":"Ada","name":1,"location":"common"}`, "stop", ""},
		{"", "stop", "I won't."},
		{`null`, "", ""},
		{`"\ud800"`, "tool_calls", ""},
	} {
		f.Add(seed.content, seed.finish, seed.refusal)
	}
	var sc schemaCache
	s, err := sc.get(testSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, content, finish, refusal string) {
		a := answer{content: content, finish: openai.FinishReason(finish), refusal: refusal}
		out, _, bad := checkAnswer(s, "T", a)
		if (out == nil) == (bad == nil) {
			t.Fatalf("out %q and err %v", out, bad)
		}
		if bad != nil {
			switch bad.Kind {
			case KindRefusal, KindTruncated, KindInvalidJSON, KindSchema:
			default:
				t.Fatalf("unexpected kind %v", bad.Kind)
			}
			if bad.Error() == "" {
				t.Fatal("empty error text")
			}
			if refusal == "" && finish != "length" && finish != "content_filter" && fuzzOracle(stripFence(content)) {
				t.Fatalf("rejected a valid answer %q: %v", content, bad)
			}
			return
		}
		if refusal != "" || finish == "length" || finish == "content_filter" {
			t.Fatalf("accepted %q despite refusal %q / finish %q", content, refusal, finish)
		}
		if !fuzzOracle(string(out)) {
			t.Fatalf("accepted schema-invalid JSON %q", out)
		}
	})
}
