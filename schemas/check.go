package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Limits of OpenAI's strict mode that a generated schema could plausibly
// reach (a location crowded with characters, say).
const (
	MaxNesting    = 10   // levels of nested objects
	MaxProperties = 5000 // object properties in the whole schema
)

// Violation is one way a schema breaks strict mode, at a JSON pointer.
type Violation struct {
	Pointer string // RFC 6901 pointer into the schema, "" for the root
	Problem string
}

func (v *Violation) Error() string { return "#" + v.Pointer + ": " + v.Problem }

// forbidden are the keywords strict mode rejects, with what to do instead.
var forbidden = map[string]string{
	"allOf":                 "allOf is not supported in strict mode",
	"oneOf":                 "oneOf is not supported in strict mode; use anyOf",
	"not":                   "not is not supported in strict mode",
	"if":                    "if/then/else is not supported in strict mode",
	"then":                  "if/then/else is not supported in strict mode",
	"else":                  "if/then/else is not supported in strict mode",
	"dependentRequired":     "dependentRequired is not supported in strict mode",
	"dependentSchemas":      "dependentSchemas is not supported in strict mode",
	"patternProperties":     "patternProperties (a map) is not supported in strict mode; use an array of key/value objects or per-request properties",
	"propertyNames":         "propertyNames (a map) is not supported in strict mode",
	"unevaluatedProperties": "unevaluatedProperties is not supported in strict mode",
	"nullable":              `"nullable" is not JSON Schema; write anyOf [T, {"type": "null"}]`,
	"default":               "default is not allowed in strict mode",
	"$id":                   "$id is not allowed",
}

// CheckStrict reports every way schema breaks OpenAI's strict structured-output
// mode: the root must be an expanded object; every object must list all of its
// properties in required and have additionalProperties false (so no maps); a
// nullable value must be anyOf [T, {"type": "null"}]; no default, no $id, no
// oneOf/allOf/not/if, no boolean schemas; every $ref must resolve inside the
// document. Violations come in a stable order (keys sorted).
func CheckStrict(schema []byte) []error {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return []error{&Violation{Problem: "not JSON: " + err.Error()}}
	}
	c := &checker{root: root}
	obj, ok := root.(map[string]any)
	switch {
	case !ok:
		c.fail("", "the root must be a schema object")
	case obj["$ref"] != nil:
		c.fail("", "the root must be expanded, not a $ref")
	case obj["anyOf"] != nil:
		c.fail("", "the root must be an object, not anyOf")
	case obj["type"] != "object":
		c.fail("", `the root must have "type": "object"`)
	}
	c.schema(root, "", 0)
	if c.properties > MaxProperties {
		c.errs = append(c.errs, TooManyProperties(c.properties))
	}
	return c.errs
}

// CountProperties is how many object properties schema has, as strict
// mode's MaxProperties counts them (every occurrence, $defs included).
func CountProperties(schema []byte) (int, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return 0, fmt.Errorf("schemas: not JSON: %w", err)
	}
	c := &checker{root: root}
	c.schema(root, "", 0)
	return c.properties, nil
}

// TooManyProperties is CheckStrict's violation for a schema of n object
// properties, n > MaxProperties, for callers that count them without
// building the schema.
func TooManyProperties(n int) error {
	return &Violation{Problem: fmt.Sprintf("%d object properties; strict mode allows at most %d", n, MaxProperties)}
}

type checker struct {
	root       any
	errs       []error
	properties int
}

func (c *checker) fail(ptr, problem string) {
	c.errs = append(c.errs, &Violation{Pointer: ptr, Problem: problem})
}

// schema checks one subschema at ptr; depth counts the objects above it.
func (c *checker) schema(node any, ptr string, depth int) {
	s, ok := node.(map[string]any)
	if !ok {
		c.fail(ptr, fmt.Sprintf("a schema must be an object, not %s", jsonText(node)))
		return
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if msg, bad := forbidden[k]; bad {
			c.fail(ptr, msg)
		}
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(defs)) {
			c.schema(defs[name], ptr+"/$defs/"+escape(name), depth)
		}
	}
	if ref, ok := s["$ref"]; ok {
		c.ref(ref, ptr)
		return
	}
	if anyOf, ok := s["anyOf"]; ok {
		branches, ok := anyOf.([]any)
		if !ok || len(branches) == 0 {
			c.fail(ptr, "anyOf must be a non-empty array of schemas")
			return
		}
		for i, b := range branches {
			c.schema(b, fmt.Sprintf("%s/anyOf/%d", ptr, i), depth)
		}
		return
	}
	switch t := s["type"].(type) {
	case string:
		switch t {
		case "object":
			c.object(s, ptr, depth+1)
		case "array":
			if items, ok := s["items"]; ok {
				c.schema(items, ptr+"/items", depth)
			} else {
				c.fail(ptr, "an array must have items")
			}
		case "string", "number", "integer", "boolean", "null":
		default:
			c.fail(ptr, fmt.Sprintf("unknown type %q", t))
		}
	case []any:
		if slices.Contains(t, any("null")) {
			c.fail(ptr, `a nullable value must be anyOf [T, {"type": "null"}], not a type list`)
		} else {
			c.fail(ptr, "type must be a single string")
		}
	case nil:
		c.fail(ptr, "missing type")
	default:
		c.fail(ptr, "type must be a string")
	}
}

func (c *checker) object(s map[string]any, ptr string, depth int) {
	if depth > MaxNesting {
		c.fail(ptr, fmt.Sprintf("objects nested %d deep; strict mode allows %d", depth, MaxNesting))
	}
	if ap, ok := s["additionalProperties"]; !ok {
		c.fail(ptr, "additionalProperties must be false (it is missing)")
	} else if ap != false {
		c.fail(ptr, "additionalProperties must be false; maps are not supported in strict mode, use an array of key/value objects or per-request properties")
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		c.fail(ptr, "an object must have properties (empty {} if none)")
	}
	reqList, ok := s["required"].([]any)
	if !ok {
		c.fail(ptr, "an object must have required listing every property (empty [] if none)")
	}
	required := map[string]bool{}
	for i, r := range reqList {
		name, ok := r.(string)
		if !ok {
			c.fail(fmt.Sprintf("%s/required/%d", ptr, i), "required names must be strings")
			continue
		}
		if required[name] {
			c.fail(fmt.Sprintf("%s/required/%d", ptr, i), fmt.Sprintf("%q is listed twice", name))
		}
		required[name] = true
		if _, ok := props[name]; props != nil && !ok {
			c.fail(fmt.Sprintf("%s/required/%d", ptr, i), fmt.Sprintf("%q is required but is not a property", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		c.properties++
		p := ptr + "/properties/" + escape(name)
		if !required[name] {
			c.fail(p, "every property must be required; make an optional field nullable instead")
		}
		c.schema(props[name], p, depth)
	}
}

// ref checks that a $ref is local and resolves in the document.
func (c *checker) ref(ref any, ptr string) {
	r, ok := ref.(string)
	if !ok || !strings.HasPrefix(r, "#") {
		c.fail(ptr, fmt.Sprintf("$ref must point inside the document (#...), not %s", jsonText(ref)))
		return
	}
	node := c.root
	if r == "#" {
		return
	}
	for _, tok := range strings.Split(strings.TrimPrefix(r, "#/"), "/") {
		tok = pointerUnescaper.Replace(tok)
		m, ok := node.(map[string]any)
		if !ok {
			node = nil
			break
		}
		node = m[tok]
	}
	if node == nil {
		c.fail(ptr, fmt.Sprintf("$ref %q does not resolve", r))
	}
}

// pointerEscaper and pointerUnescaper are RFC 6901's escapes of a JSON
// pointer token, built once (a Replacer is costly to build).
var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

func escape(name string) string {
	if !strings.ContainsAny(name, "~/") {
		return name
	}
	return pointerEscaper.Replace(name)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
