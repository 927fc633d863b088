package session

import (
	"errors"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/schemas"
)

// SchemaFile is one schema file of the registered kinds' model outputs.
type SchemaFile struct {
	Path string `json:"path"`
	// Status is written (WriteSchemas), or up_to_date, stale or missing
	// (CheckSchemas).
	Status string `json:"status"`
}

// WriteSchemas writes the schema file of every registered kind's model
// outputs into dir, for `arbiter schemas generate`.
func WriteSchemas(dir string) ([]SchemaFile, error) {
	named := Schemas()
	if err := schemas.Write(dir, named); err != nil {
		return nil, err
	}
	files := make([]SchemaFile, len(named))
	for i, n := range named {
		files[i] = SchemaFile{Path: filepath.Join(dir, n.FileName()), Status: "written"}
	}
	return files, nil
}

// ErrSchemasStale is wrapped by CheckSchemas' error when a schema file in
// dir is missing or differs from what the Go output types generate.
var ErrSchemasStale = errors.New("schema files are not up to date")

// CheckSchemas compares the schema files in dir with the registered kinds'
// model outputs, for `arbiter schemas check`: each file's status, and an
// error saying what is stale or missing (wrapping ErrSchemasStale); when a
// file could not be checked, no status and every problem.
func CheckSchemas(dir string) ([]SchemaFile, error) {
	named := Schemas()
	err := schemas.Check(dir, named)
	status := map[string]string{}
	other := false
	for _, e := range unjoin(err) {
		var se *schemas.StaleError
		switch {
		case errors.As(e, &se) && se.Missing:
			status[se.Path] = "missing"
		case errors.As(e, &se):
			status[se.Path] = "stale"
		case e != nil:
			other = true
		}
	}
	if other {
		return nil, err
	}
	files := make([]SchemaFile, len(named))
	for i, n := range named {
		p := filepath.Join(dir, n.FileName())
		files[i] = SchemaFile{Path: p, Status: "up_to_date"}
		if s, ok := status[p]; ok {
			files[i].Status = s
		}
	}
	if err != nil {
		return files, &stale{err}
	}
	return files, nil
}

type stale struct{ err error }

func (e *stale) Error() string        { return e.err.Error() }
func (e *stale) Unwrap() []error      { return []error{e.err, ErrSchemasStale} }
func (e *stale) Is(target error) bool { return target == ErrSchemasStale }

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
