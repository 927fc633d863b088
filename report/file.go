package report

import "github.com/arbiter-sim/arbiter/internal/atomicfile"

// WriteFile renders r and writes the page to path whole, or leaves path as
// it was: a browser or a script never reads half a report. It returns the
// page's size in bytes.
func WriteFile(path string, r *Report) (int, error) {
	page, err := Render(r)
	if err != nil {
		return 0, err
	}
	return len(page), atomicfile.Write(path, page)
}
