package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
)

// Named is one generated schema file: Name is both the json_schema name sent
// to the model and the file stem (Name + ".schema.json"); Value is a value of
// the Go type the schema is generated from; Defs are values of further types
// documented under $defs (see Reflect). Schema, when set, is the schema as
// generated from them and then shaped by what a kind sets on it (the bounds
// a simulation gives an answer's fields): it is what Pretty indents.
type Named struct {
	Name   string
	Value  any
	Defs   []any
	Schema json.RawMessage
}

// FileName is the file a named schema is written to.
func (n Named) FileName() string { return n.Name + ".schema.json" }

// Pretty returns the schema file content: the strict schema indented by two
// spaces, keys in a stable order (struct field order for properties), with a
// trailing newline.
func (n Named) Pretty() ([]byte, error) {
	b := n.Schema
	if b == nil {
		var err error
		if b, err = Generate(n.Value, n.Defs...); err != nil {
			return nil, fmt.Errorf("schema %s: %w", n.Name, err)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, fmt.Errorf("schema %s: %w", n.Name, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Write generates every named schema into dir, each file replaced atomically
// (written to a temporary file, then renamed), so a failed run leaves the old
// files intact. Nothing is written unless every schema generates.
func Write(dir string, named []Named) error {
	contents := make([][]byte, len(named))
	for i, n := range named {
		b, err := n.Pretty()
		if err != nil {
			return err
		}
		contents[i] = b
	}
	for i, n := range named {
		if err := atomicfile.Write(filepath.Join(dir, n.FileName()), contents[i]); err != nil {
			return err
		}
	}
	return nil
}

// StaleError is a schema file that is missing or no longer matches its Go
// type.
type StaleError struct {
	Path    string
	Missing bool
}

func (e *StaleError) Error() string {
	if e.Missing {
		return e.Path + " is missing; run `arbiter schemas generate`"
	}
	return e.Path + " is stale (it no longer matches its Go type); run `arbiter schemas generate`"
}

// Check compares every named schema with its file in dir. Each missing or
// stale file gives a *StaleError naming it and saying to run
// `arbiter schemas generate`; the errors are joined.
func Check(dir string, named []Named) error {
	var errs []error
	for _, n := range named {
		want, err := n.Pretty()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		path := filepath.Join(dir, n.FileName())
		got, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, &StaleError{Path: path, Missing: true})
		case err != nil:
			errs = append(errs, err)
		case !bytes.Equal(got, want):
			errs = append(errs, &StaleError{Path: path})
		}
	}
	return errors.Join(errs...)
}
