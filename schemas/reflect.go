package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// reflector is the one reflector configuration: anonymous (no $id), every
// nested type inlined, the root expanded.
func reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		Anonymous:      true,
		DoNotReference: true,
		ExpandedStruct: true,
	}
}

// Reflect returns the strict schema tree of v's type, a fresh value the caller
// may specialise before Marshal. The schemas of the types of defs, if any, are
// attached under $defs by Go type name (documentation of, say, the values of
// a map that strict mode cannot describe). Recursive types are not supported.
func Reflect(v any, defs ...any) (*jsonschema.Schema, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, errors.New("schemas: cannot reflect nil")
	}
	s := reflector().ReflectFromType(t)
	s.Version = ""
	if err := nullable(t, s); err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", typeName(t), err)
	}
	s.Definitions = nil
	for _, d := range defs {
		ds, err := Reflect(d)
		if err != nil {
			return nil, err
		}
		if s.Definitions == nil {
			s.Definitions = jsonschema.Definitions{}
		}
		s.Definitions[typeName(reflect.TypeOf(d))] = ds
	}
	strict(s)
	return s, nil
}

// Marshal encodes a schema tree compactly and checks it against strict mode;
// every violation is reported, each with its JSON pointer.
func Marshal(s *jsonschema.Schema) (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	if errs := CheckStrict(b); len(errs) > 0 {
		return nil, fmt.Errorf("schemas: not a strict-mode schema: %w", errors.Join(errs...))
	}
	return b, nil
}

// Generate returns the strict-mode schema of v's type (see Reflect), compact.
func Generate(v any, defs ...any) (json.RawMessage, error) {
	s, err := Reflect(v, defs...)
	if err != nil {
		return nil, err
	}
	b, err := Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", typeName(reflect.TypeOf(v)), err)
	}
	return b, nil
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// strict makes every object close (additionalProperties false) and require
// all of its properties, and drops identifiers, throughout the tree. Objects
// without properties (maps) are left alone for CheckStrict to report, except
// those a type's JSONSchema method declared with an empty property list.
func strict(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.ID = ""
	s.Version = ""
	if s.Type == "object" && s.Properties != nil {
		s.AdditionalProperties = jsonschema.FalseSchema
		s.Required = s.Required[:0]
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			s.Required = append(s.Required, p.Key)
		}
		if len(s.Required) == 0 {
			// invopop omits an empty required list; strict mode wants it.
			s.Required = nil
			if s.Extras == nil {
				s.Extras = map[string]any{}
			}
			s.Extras["required"] = []string{}
		}
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			strict(p.Value)
		}
	}
	strict(s.Items)
	for _, sub := range s.AnyOf {
		strict(sub)
	}
	for _, d := range s.Definitions {
		strict(d)
	}
}

// customSchema is invopop's interface for a type that supplies its own schema;
// the reflector does not look inside such types, so neither does nullable.
type customSchema interface{ JSONSchema() *jsonschema.Schema }

var customSchemaType = reflect.TypeFor[customSchema]()

// nullable walks the Go type alongside its reflected schema and turns the
// schema of every pointer field into anyOf [T, {"type": "null"}], the only
// nullable form strict mode accepts. The description moves to the anyOf.
func nullable(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(customSchemaType) || reflect.PointerTo(t).Implements(customSchemaType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return nullable(t.Elem(), s.Items)
		}
	case reflect.Struct:
		if s.Properties == nil {
			return nil // time.Time and other types reflected as strings
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			if name == "" { // embedded struct: its fields are this object's
				if err := nullable(f.Type, s); err != nil {
					return err
				}
				continue
			}
			p, found := s.Properties.Get(name)
			if !found {
				continue
			}
			if err := nullable(f.Type, p); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if f.Type.Kind() == reflect.Pointer {
				wrapped := &jsonschema.Schema{
					AnyOf:       []*jsonschema.Schema{p, {Type: "null"}},
					Description: p.Description,
				}
				p.Description = ""
				s.Properties.Set(name, wrapped)
			}
		}
	}
	return nil
}

// jsonName is the property name encoding/json gives a field: "" for an
// embedded struct whose fields are promoted, ok false for a skipped field.
func jsonName(f reflect.StructField) (name string, ok bool) {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "-" && f.Tag.Get("json") == "-" {
		return "", false
	}
	if f.Anonymous && tag == "" {
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			return "", true
		}
	}
	if !f.IsExported() {
		return "", false
	}
	if tag != "" {
		return tag, true
	}
	return f.Name, true
}
