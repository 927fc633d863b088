package phases

import (
	"encoding/json"
	"flag"
	"testing"

	"github.com/arbiter-sim/arbiter/schemas"
)

// update regenerates golden files of package phases, the schema files among
// them: go test ./phases -run SchemaFiles -update
var update = flag.Bool("update", false, "rewrite golden files (../schemas/*.schema.json)")

const schemaDir = "../schemas"

func TestSchemaFiles(t *testing.T) {
	if *update {
		if err := schemas.Write(schemaDir, Schemas()); err != nil {
			t.Fatal(err)
		}
	}
	if err := schemas.Check(schemaDir, Schemas()); err != nil {
		t.Fatalf("%v\n(or: go test ./phases -run SchemaFiles -update)", err)
	}
}

// TestSchemasStrict checks every schema the phases generate, generic and
// specialised, against strict mode.
func TestSchemasStrict(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, b []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range schemas.CheckStrict(b) {
			t.Error(v)
		}
	}
	for _, n := range Schemas() {
		t.Run(n.Name, func(t *testing.T) {
			t.Parallel()
			b, err := n.Pretty()
			check(t, b, err)
		})
	}
	t.Run("IntentionSchema", func(t *testing.T) {
		t.Parallel()
		check(t, intentionSchema(), nil)
	})
	t.Run("ResolutionSchema", func(t *testing.T) {
		t.Parallel()
		b, err := defaultResolutionSchema(3, "common", []string{"ada", "bo"}, []string{"common", "cellar"})
		check(t, b, err)
	})
	t.Run("ResolutionSchema/call 2 of a crowd", func(t *testing.T) {
		t.Parallel()
		b, err := defaultSchemas().resolutionSchema(3, "common", []string{"cy"}, []string{"common", "cellar"}, false)
		check(t, b, err)
		var s struct {
			Properties struct {
				Location struct {
					Properties map[string]map[string]any `json:"properties"`
				} `json:"location"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"moment", "description"} {
			if got := s.Properties.Location.Properties[f]["type"]; got != "null" {
				t.Errorf("location.%s of a call after the first: type %v, want null (call 1 writes it)", f, got)
			}
		}
	})
	t.Run("ResolutionSchema/empty", func(t *testing.T) {
		t.Parallel()
		b, err := defaultResolutionSchema(1, "cellar", nil, []string{"cellar"})
		check(t, b, err)
	})
}
