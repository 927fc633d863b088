package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestFlatten(t *testing.T) {
	t.Parallel()
	got, err := Flatten(json.RawMessage(`{"llm":{"model":"m","timeout":"60s","concurrency":4,"rate":0.5,"on":true},"prices":[{"model":"m","prompt":1}],"empty":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"llm.model": "m", "llm.timeout": "60s", "llm.concurrency": "4", "llm.rate": "0.5", "llm.on": "true",
		"prices": `[{"model":"m","prompt":1}]`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Flatten = %v\nwant %v", got, want)
	}
	if _, err := Flatten(json.RawMessage(`[1]`)); err == nil {
		t.Error("Flatten of an array: no error")
	}
}

func seedOf(n uint64) *uint64 { return &n }

func base() *Manifest {
	return &Manifest{
		Arbiter:   Build{Version: "(devel)", Revision: "aaaa", Go: "go1.26"},
		Kind:      "narrative",
		BaseURL:   "http://h/v1",
		Models:    []PhaseModel{{"intention", "small"}, {"resolution", "big"}},
		Templates: []File{{"a.md", "default", strings.Repeat("1", 64)}, {"b.md", "default", strings.Repeat("2", 64)}},
		Schemas:   []File{{"S", "generated", strings.Repeat("3", 64)}},
		Config:    map[string]string{"llm.model": "small", "llm.timeout": "60s", "llm.base_url": ""},
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	if d := Diff(base(), base()); len(d) != 0 {
		t.Errorf("Diff of equal manifests = %v, want none", d)
	}
	a, b := base(), base()
	b.Arbiter.Revision, b.Arbiter.Modified = "bbbb", true
	b.BaseURL = "http://other/v1"
	b.Models[1].Model = "bigger"
	b.Templates[0] = File{"a.md", "sims/x/prompts/a.md", strings.Repeat("9", 64)}
	b.Templates = b.Templates[:1]
	b.Schemas[0].SHA256 = strings.Repeat("4", 64)
	b.Seed = seedOf(7)
	b.Config = map[string]string{"llm.model": "small", "llm.timeout": "30s", "llm.base_url": "http://other/v1", "run.max_cost": "2"}
	var lines []string
	for _, c := range Diff(a, b) {
		lines = append(lines, c.String())
	}
	want := []string{
		"arbiter revision: aaaa → bbbb",
		"arbiter modified: false → true",
		"base_url: http://h/v1 → http://other/v1",
		"model resolution: big → bigger",
		"template a.md: default sha256:111111111111 → sims/x/prompts/a.md sha256:999999999999",
		"template b.md: default sha256:222222222222 → (none)",
		"schema S: generated sha256:333333333333 → generated sha256:444444444444",
		"seed: (none) → 7",
		`config llm.base_url: "" → http://other/v1`,
		"config llm.timeout: 60s → 30s",
		"config run.max_cost: (none) → 2",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("Diff =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Same short hash, different content: shown whole.
	c, d := base(), base()
	d.Templates[0].SHA256 = strings.Repeat("1", 63) + "0"
	if got := Diff(c, d); len(got) != 1 || !strings.HasSuffix(got[0].New, strings.Repeat("1", 63)+"0") {
		t.Errorf("Diff of hashes alike in their first 12 digits = %v", got)
	}
}

func TestReadBuild(t *testing.T) {
	t.Parallel()
	b := ReadBuild()
	if b.Version == "" || !strings.HasPrefix(b.Go, "go") {
		t.Errorf("ReadBuild = %+v, want a version and the Go version", b)
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	if got := Hash([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Hash(abc) = %s", got)
	}
}
