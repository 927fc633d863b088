package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Chooser picks one of the values of an enum at a JSON pointer of the answer
// (e.g. "/characters/ada/location"). Returning nil picks the first value.
type Chooser func(pointer string, enum []any) any

// FromSchema answers every request with an instance generated from the
// request's own json_schema: consts and enums honoured (the first value unless
// choose says otherwise), every required property present, strings of the
// form "<pointer> #<call>" within their length bounds, nullable values filled.
// For strict per-request schemas this is always a valid answer, which makes it
// the "model that always complies" of a test.
func FromSchema(choose Chooser) Handler {
	return func(c *Call) Reply {
		v, err := Instance(c, choose)
		if err != nil {
			return Status(400, "invalid_request_error", "", err.Error())
		}
		return JSON(v)
	}
}

// Instance is the answer FromSchema sends to c, as a value a test may
// change before sending it (to break a rule the schema cannot express).
func Instance(c *Call, choose Chooser) (any, error) {
	var schema map[string]any
	if err := json.Unmarshal(c.Schema(), &schema); err != nil {
		return nil, fmt.Errorf("no json_schema in request: %w", err)
	}
	g := instanceGen{root: schema, choose: choose, call: c.N}
	return g.value("", schema), nil
}

type instanceGen struct {
	root   map[string]any
	choose Chooser
	call   int
}

func (g instanceGen) value(ptr string, s map[string]any) any {
	if ref, ok := s["$ref"].(string); ok {
		return g.value(ptr, g.resolve(ref))
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		if g.choose != nil {
			if v := g.choose(ptr, enum); v != nil {
				return v
			}
		}
		return enum[0]
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		for _, alt := range anyOf {
			if m, ok := alt.(map[string]any); ok && m["type"] != "null" {
				return g.value(ptr, m)
			}
		}
		return nil
	}
	typ, _ := s["type"].(string)
	if list, ok := s["type"].([]any); ok {
		for _, t := range list {
			if t != "null" {
				typ, _ = t.(string)
				break
			}
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			if m, ok := p.(map[string]any); ok {
				out[name] = g.value(ptr+"/"+name, m)
			}
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	default:
		str := fmt.Sprintf("%s #%d", strings.TrimPrefix(ptr, "/"), g.call)
		if max, ok := s["maxLength"].(float64); ok && len(str) > int(max) {
			str = str[:int(max)]
		}
		return str
	}
}

func (g instanceGen) resolve(ref string) map[string]any {
	cur := any(g.root)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}
