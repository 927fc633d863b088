package prompts

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRenderStopsPastLimit: a template that would write gigabytes stops at
// MaxRenderedSize with an error naming the template, having used little
// memory.
func TestRenderStopsPastLimit(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, OverrideDir), 0o755)
	path := filepath.Join(dir, OverrideDir, "phase1_intention_system.md")
	// 10,000 x 128 bytes: past the limit within MaxRepeat.
	os.WriteFile(path, []byte("{{range 10000}}"+strings.Repeat("0123456789abcdef", 8)+"{{end}}"), 0o644)
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := r.Render("phase1_intention_system.md", nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
	if te, ok := errors.AsType[*TemplateError](err); !ok || te.Source != path || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("err = %v, want a *TemplateError naming %s and the limit", err, path)
	}
	if out != "" {
		t.Errorf("returned %d bytes", len(out))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*MaxRenderedSize {
		t.Errorf("rendering allocated %d bytes", alloc)
	}
}

// TestDefaultStopsPastLimit: a default template whose data would take it
// past MaxRenderedSize stops there too, with an error naming the default.
func TestDefaultStopsPastLimit(t *testing.T) {
	t.Parallel()
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	d := IntentionData{Character: CharacterData{Name: strings.Repeat("x", MaxRenderedSize)}}
	out, err := r.Render("phase1_intention_system.md", d)
	if te, ok := errors.AsType[*TemplateError](err); !ok || !errors.Is(err, ErrTooLong) || te.Source != "default" {
		t.Fatalf("err = %v, want a *TemplateError from the default caused by ErrTooLong", err)
	}
	if out != "" {
		t.Errorf("returned %d bytes", len(out))
	}
}
