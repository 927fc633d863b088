package bench

import (
	"bytes"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
)

// WriteFile writes rep as Markdown (WriteMarkdown) to path whole, or leaves
// path as it was: an interrupted bench never leaves half a BENCHMARKS.md.
func WriteFile(path string, rep *Report) error {
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		return err
	}
	return atomicfile.Write(path, md.Bytes())
}
