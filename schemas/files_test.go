package schemas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteThenCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	named := []Named{{Name: "Sample", Value: sample{}}, {Name: "WithEmpty", Value: withEmpty{}, Defs: []any{inner{}}}}
	if err := Write(dir, named); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, named); err != nil {
		t.Fatalf("Check after Write: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "Sample.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"properties\": {\n") || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("file is not pretty-printed with a trailing newline:\n%s", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("dir holds %d entries, want the 2 schema files only", len(entries))
	}
}

func TestCheckReportsStaleAndMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	named := []Named{{Name: "Sample", Value: sample{}}, {Name: "WithEmpty", Value: withEmpty{}}}
	if err := Write(dir, named); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "Sample.schema.json")
	if err := os.WriteFile(stale, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "WithEmpty.schema.json")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	err := Check(dir, named)
	var se *StaleError
	if !errors.As(err, &se) {
		t.Fatalf("Check = %v, want a *StaleError", err)
	}
	for _, want := range []string{stale + " is stale", missing + " is missing", "run `arbiter schemas generate`"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error %q does not contain %q", err, want)
		}
	}
}

func TestWriteWritesNothingOnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type bad struct {
		M map[string]string `json:"m"`
	}
	err := Write(dir, []Named{{Name: "Sample", Value: sample{}}, {Name: "Bad", Value: bad{}}})
	if err == nil || !strings.Contains(err.Error(), "schema Bad") {
		t.Fatalf("Write = %v, want an error naming schema Bad", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Write left %d files behind", len(entries))
	}
}

// TestPrettyOfShapedSchema: a Named with its Schema set is that schema,
// indented, not its Go type's as reflected.
func TestPrettyOfShapedSchema(t *testing.T) {
	t.Parallel()
	plain, err := Named{Name: "Sample", Value: sample{}}.Pretty()
	if err != nil {
		t.Fatal(err)
	}
	shaped, err := Named{Name: "Sample", Value: sample{}, Schema: []byte(`{"type":"object","properties":{"x":{"type":"string","maxLength":8}}}`)}.Pretty()
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"x\": {\n      \"type\": \"string\",\n      \"maxLength\": 8\n    }\n  }\n}\n"; string(shaped) != want || string(plain) == want {
		t.Errorf("Pretty = %s, want %s", shaped, want)
	}
}
