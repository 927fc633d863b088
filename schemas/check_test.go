package schemas

import (
	"errors"
	"strings"
	"testing"
)

const validSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 10},
    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
    "empty": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}
  },
  "required": ["name", "note", "tags", "empty"],
  "additionalProperties": false,
  "$defs": {
    "Tag": {"type": "object", "properties": {"k": {"type": "string", "enum": ["a", "b"]}}, "required": ["k"], "additionalProperties": false}
  }
}`

func TestCheckStrictAcceptsValid(t *testing.T) {
	t.Parallel()
	if errs := CheckStrict([]byte(validSchema)); len(errs) > 0 {
		t.Fatalf("CheckStrict(valid) = %v", errs)
	}
}

// obj wraps properties into a strict root object requiring all of them.
func obj(props, required string) string {
	return `{"type":"object","additionalProperties":false,"properties":{` + props + `},"required":[` + required + `]}`
}

func TestCheckStrictCatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		want   string // one violation's text, pointer included
	}{
		{"not JSON", `{`, "#: not JSON"},
		{"root not object", `{"type":"string"}`, `#: the root must have "type": "object"`},
		{"root ref", `{"$ref":"#/$defs/A","$defs":{"A":` + obj(``, ``) + `}}`, "#: the root must be expanded, not a $ref"},
		{"root anyOf", `{"anyOf":[` + obj(``, ``) + `,{"type":"null"}]}`, "#: the root must be an object, not anyOf"},
		{"map", obj(`"m":{"type":"object","additionalProperties":{"type":"integer"}}`, `"m"`),
			"#/properties/m: additionalProperties must be false; maps are not supported"},
		{"pattern map", obj(`"m":{"type":"object","patternProperties":{"^x":{"type":"integer"}},"properties":{},"required":[],"additionalProperties":false}`, `"m"`),
			"#/properties/m: patternProperties (a map) is not supported"},
		{"missing additionalProperties", `{"type":"object","properties":{},"required":[]}`, "#: additionalProperties must be false (it is missing)"},
		{"missing required", obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"a"`),
			"#/properties/b: every property must be required"},
		{"required not a property", obj(`"a":{"type":"string"}`, `"a","z"`), `#/required/1: "z" is required but is not a property`},
		{"no required list", `{"type":"object","properties":{},"additionalProperties":false}`, "#: an object must have required"},
		{"no properties", `{"type":"object","required":[],"additionalProperties":false}`, "#: an object must have properties"},
		{"default", obj(`"a":{"type":"string","default":"x"}`, `"a"`), "#/properties/a: default is not allowed"},
		{"$id", `{"$id":"https://x/y","type":"object","properties":{},"required":[],"additionalProperties":false}`, "#: $id is not allowed"},
		{"type list nullable", obj(`"a":{"type":["string","null"]}`, `"a"`), `#/properties/a: a nullable value must be anyOf [T, {"type": "null"}]`},
		{"oneOf nullable", obj(`"a":{"oneOf":[{"type":"string"},{"type":"null"}]}`, `"a"`), "#/properties/a: oneOf is not supported in strict mode; use anyOf"},
		{"openapi nullable", obj(`"a":{"type":"string","nullable":true}`, `"a"`), `#/properties/a: "nullable" is not JSON Schema`},
		{"allOf", obj(`"a":{"allOf":[{"type":"string"}]}`, `"a"`), "#/properties/a: allOf is not supported"},
		{"boolean schema", obj(`"a":true`, `"a"`), "#/properties/a: a schema must be an object, not true"},
		{"missing type", obj(`"a":{"description":"x"}`, `"a"`), "#/properties/a: missing type"},
		{"array without items", obj(`"a":{"type":"array"}`, `"a"`), "#/properties/a: an array must have items"},
		{"dangling ref", obj(`"a":{"$ref":"#/$defs/Nope"}`, `"a"`), `#/properties/a: $ref "#/$defs/Nope" does not resolve`},
		{"remote ref", obj(`"a":{"$ref":"https://example.com/s.json"}`, `"a"`), "#/properties/a: $ref must point inside the document"},
		{"nested in anyOf", obj(`"a":{"anyOf":[{"type":"object","properties":{"x":{"type":"string"}},"required":[],"additionalProperties":false},{"type":"null"}]}`, `"a"`),
			"#/properties/a/anyOf/0/properties/x: every property must be required"},
		{"in $defs", `{"type":"object","properties":{},"required":[],"additionalProperties":false,"$defs":{"a/b":{"type":"object","properties":{},"required":[]}}}`,
			"#/$defs/a~1b: additionalProperties must be false (it is missing)"},
		{"too deep", nested(MaxNesting + 1), "objects nested 11 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := CheckStrict([]byte(tt.schema))
			var texts []string
			for _, err := range errs {
				var v *Violation
				if !errors.As(err, &v) {
					t.Errorf("%v is not a *Violation", err)
				}
				texts = append(texts, err.Error())
				if strings.Contains(err.Error(), tt.want) {
					return
				}
			}
			t.Errorf("CheckStrict = %q, want a violation containing %q", texts, tt.want)
		})
	}
}

func TestCheckStrictNestingLimit(t *testing.T) {
	t.Parallel()
	if errs := CheckStrict([]byte(nested(MaxNesting))); len(errs) > 0 {
		t.Errorf("%d levels: %v", MaxNesting, errs)
	}
}

// nested returns n objects nested in one another.
func nested(n int) string {
	s := obj(``, ``)
	for range n - 1 {
		s = obj(`"x":`+s, `"x"`)
	}
	return s
}

// TestCountProperties counts every property occurrence as CheckStrict does,
// and says when the schema is not JSON.
func TestCountProperties(t *testing.T) {
	t.Parallel()
	n, err := CountProperties([]byte(`{"type":"object","additionalProperties":false,"required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"object","additionalProperties":false,"required":["c"],"properties":{"c":{"type":"integer"}}}}}`))
	if err != nil || n != 3 {
		t.Errorf("CountProperties = %d, %v; want 3", n, err)
	}
	if _, err := CountProperties([]byte(`{"type":`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("broken JSON: err = %v", err)
	}
	if err := TooManyProperties(5001); !strings.Contains(err.Error(), "5001 object properties; strict mode allows at most 5000") {
		t.Errorf("TooManyProperties = %v", err)
	}
}
