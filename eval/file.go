package eval

import (
	"fmt"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
)

// WritePage writes r's page to path, whole or not at all.
func WritePage(path string, r *Result) error {
	page, err := Page(r)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, page); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	return nil
}

// WriteJUnit writes r as JUnit XML to path, whole or not at all.
func WriteJUnit(path string, r *Result) error {
	if err := atomicfile.Write(path, JUnit(r)); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
