package chronicle

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// PromptFile is the name of the system prompt; a simulation's
// prompts/chronicle_system.md overrides the default.
const PromptFile = "chronicle_system.md"

//go:embed chronicle_system.md
var defaultPrompt string

// promptData is what the system prompt template sees.
type promptData struct {
	Title      string
	BigPicture string
}

// renderPrompt renders the simulation's override of the system prompt, or
// the default. A missing key is an error, not "<no value>".
func renderPrompt(dir string, data promptData) (string, error) {
	src, name := defaultPrompt, PromptFile
	path := filepath.Join(dir, "prompts", PromptFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		src, name = string(b), path
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return "", fmt.Errorf("prompt %s: %w", name, err)
	}
	var out strings.Builder
	if err := tmpl.Execute(&out, data); err != nil {
		return "", fmt.Errorf("prompt %s: %w", name, err)
	}
	return out.String(), nil
}
