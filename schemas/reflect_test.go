package schemas

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
)

type inner struct {
	Name string `json:"name" jsonschema:"maxLength=10"`
}

type base struct {
	Kind string `json:"kind"`
}

type sample struct {
	base
	Title    string  `json:"title" jsonschema_description:"the title"`
	Note     *string `json:"note,omitempty" jsonschema:"maxLength=5" jsonschema_description:"may be null"`
	Count    int     `json:"count,omitempty"`
	Items    []inner `json:"items"`
	Maybe    *inner  `json:"maybe"`
	Skipped  string  `json:"-"`
	internal string
}

type emptyObject map[string]inner

func (emptyObject) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties()}
}

type withEmpty struct {
	Things emptyObject `json:"things"`
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGenerateStrict(t *testing.T) {
	t.Parallel()
	b, err := Generate(sample{})
	if err != nil {
		t.Fatal(err)
	}
	if errs := CheckStrict(b); len(errs) > 0 {
		t.Fatalf("CheckStrict: %v", errs)
	}
	const want = `{"properties":{"kind":{"type":"string"},` +
		`"title":{"type":"string","description":"the title"},` +
		`"note":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}],"description":"may be null"},` +
		`"count":{"type":"integer"},` +
		`"items":{"items":{"properties":{"name":{"type":"string","maxLength":10}},"additionalProperties":false,"type":"object","required":["name"]},"type":"array"},` +
		`"maybe":{"anyOf":[{"properties":{"name":{"type":"string","maxLength":10}},"additionalProperties":false,"type":"object","required":["name"]},{"type":"null"}]}},` +
		`"additionalProperties":false,"type":"object","required":["kind","title","note","count","items","maybe"]}`
	if string(b) != want {
		t.Errorf("Generate(sample{}) =\n%s\nwant\n%s", b, want)
	}
	if strings.Contains(string(b), "$id") || strings.Contains(string(b), "$schema") {
		t.Errorf("schema has $id or $schema: %s", b)
	}
}

func TestGenerateEmptyObjectHasEmptyRequired(t *testing.T) {
	t.Parallel()
	b, err := Generate(withEmpty{})
	if err != nil {
		t.Fatal(err)
	}
	things := decode(t, b)["properties"].(map[string]any)["things"].(map[string]any)
	if got, _ := json.Marshal(things); string(got) != `{"additionalProperties":false,"properties":{},"required":[],"type":"object"}` {
		t.Errorf("things = %s", got)
	}
}

func TestGenerateDefs(t *testing.T) {
	t.Parallel()
	b, err := Generate(withEmpty{}, inner{})
	if err != nil {
		t.Fatal(err)
	}
	defs, ok := decode(t, b)["$defs"].(map[string]any)
	if !ok || defs["inner"] == nil {
		t.Fatalf("no $defs/inner in %s", b)
	}
	s, err := Reflect(withEmpty{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Definitions != nil {
		t.Errorf("Reflect without defs has $defs %v", s.Definitions)
	}
}

func TestGenerateRejects(t *testing.T) {
	t.Parallel()
	type withMap struct {
		M map[string]int `json:"m"`
	}
	type withDefault struct {
		S string `json:"s" jsonschema:"default=x"`
	}
	type withAny struct {
		A any `json:"a"`
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"map", withMap{}, "#/properties/m: additionalProperties must be false"},
		{"default", withDefault{}, "#/properties/s: default is not allowed"},
		{"any", withAny{}, "#/properties/a: a schema must be an object, not true"},
		{"not an object", []int{}, `#: the root must have "type": "object"`},
		{"nil", nil, "cannot reflect nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Generate(tt.v)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Generate error = %v, want it to contain %q", err, tt.want)
			}
			if tt.v != nil {
				var v *Violation
				if !errors.As(err, &v) {
					t.Errorf("error %v does not wrap a *Violation", err)
				}
			}
		})
	}
}
