package localmodel

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// modelfileTemplate is testdata/Modelfile.tmpl, which scripts/local-model.sh
// reads too. Its TEMPLATE is Ollama's Go template syntax, so the path goes in
// by plain substitution of ggufPlaceholder, not by text/template.
//
//go:embed testdata/Modelfile.tmpl
var modelfileTemplate string

const ggufPlaceholder = "@GGUF_PATH@"

// DefaultGGUFName is the model file looked for next to the repository.
const DefaultGGUFName = "stories260K.gguf"

// RenderModelfile returns the Modelfile for the GGUF file at ggufPath, which
// must be absolute (Ollama resolves a relative FROM against the Modelfile's
// directory, and a FROM that is not a file is taken as a model to pull).
func RenderModelfile(ggufPath string) (string, error) {
	if !filepath.IsAbs(ggufPath) {
		return "", fmt.Errorf("GGUF path %q is not absolute", ggufPath)
	}
	if strings.ContainsAny(ggufPath, "\"\r\n") {
		return "", fmt.Errorf("GGUF path %q: a Modelfile cannot quote a path with quotes or newlines", ggufPath)
	}
	if strings.Count(modelfileTemplate, ggufPlaceholder) != 1 {
		return "", errors.New("testdata/Modelfile.tmpl: want exactly one " + ggufPlaceholder)
	}
	return strings.Replace(modelfileTemplate, ggufPlaceholder, ggufPath, 1), nil
}

// DefaultGGUF resolves the model file: $ARBITER_GGUF when set, else
// models/stories260K.gguf of the repository root (the
// nearest directory above the working directory holding go.mod). The result is
// absolute and exists, or the error says which variable to set.
func DefaultGGUF() (string, error) {
	if p := os.Getenv("ARBITER_GGUF"); p != "" {
		abs, err := checkGGUF(p)
		if err != nil {
			return "", fmt.Errorf("ARBITER_GGUF=%s: %w", p, err)
		}
		return abs, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("no model file: set ARBITER_GGUF to a .gguf file path (%w)", err)
	}
	p := filepath.Join(root, "models", DefaultGGUFName)
	abs, err := checkGGUF(p)
	if err != nil {
		return "", fmt.Errorf("no model file at %s: set ARBITER_GGUF to a .gguf file path (%w)", p, err)
	}
	return abs, nil
}

func checkGGUF(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", abs)
	}
	return abs, nil
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// ModelName derives an Ollama model name from a GGUF file name:
// "stories260K.gguf" gives "stories260k". Characters Ollama does not accept
// in a name become '-'.
func ModelName(ggufPath string) string {
	base := strings.TrimSuffix(filepath.Base(ggufPath), filepath.Ext(ggufPath))
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.TrimLeft(b.String(), "_-.")
	if name == "" {
		return "arbiter-local"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}
