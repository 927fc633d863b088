package schemas

import (
	"strings"
	"testing"
)

func TestCompile(t *testing.T) {
	t.Parallel()
	s, err := Compile("mem:///t.json", []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"n": 1}); err != nil {
		t.Errorf("a good instance: %v", err)
	}
	if err := s.Validate(map[string]any{"n": "1"}); err == nil {
		t.Error("a bad instance passed")
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", `{"type":`, "schema mem:///bad.json"},
		{"not a schema", `{"type":"thing"}`, "mem:///bad.json"},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, "example.com"},
	} {
		if _, err := Compile("mem:///bad.json", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to name %q", tc.name, err, tc.want)
		}
	}
}
