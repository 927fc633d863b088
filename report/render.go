package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
)

//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Option("missingkey=error").Funcs(template.FuncMap{
	"chartView":   Chart.view,
	"pathView":    (*PathChart).view,
	"mapView":     gridView,
	"meters":      meters,
	"meterHeight": func(n int) int { return 24*n + 4 },
	"meterY":      func(i, dy int) int { return 24*i + dy },
	"plus":        func(a, b float64) float64 { return a + b },
}).Parse(pageText))

// Render returns the page of r. A report that could not have come from a
// committed run (no tick, an unknown kind, a chart whose series do not
// match its ticks) is an error saying what is wrong, and nothing is
// rendered.
func Render(r *Report) ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := page.Execute(&b, r); err != nil {
		return nil, fmt.Errorf("report of %s: %w", r.Simulation, err)
	}
	return dropControls(b.Bytes()), nil
}

// dropControls removes the C0 controls but tab, newline and carriage
// return from page, in place: text a model or a shared file wrote may hold
// them (ESC, NUL), and HTML has no place for them. A C0 byte is never part
// of a longer UTF-8 character, so the rest is left whole.
func dropControls(page []byte) []byte {
	out := page[:0]
	for _, c := range page {
		if c >= 0x20 || c == '\t' || c == '\n' || c == '\r' {
			out = append(out, c)
		}
	}
	return out
}

func (r *Report) check() error {
	if r == nil {
		return errors.New("report: nothing to render (no report)")
	}
	if kinds := session.Kinds(); !slices.Contains(kinds, r.Kind) {
		return fmt.Errorf("report of %s: kind %q is none of %s", r.Simulation, r.Kind, strings.Join(kinds, ", "))
	}
	if r.LastTick < 1 {
		return fmt.Errorf("report of %s: no tick committed (last tick %d); run it first", r.Simulation, r.LastTick)
	}
	for _, c := range r.Calls {
		for _, s := range c.Series {
			if len(s.Values) != len(c.Ticks) {
				return fmt.Errorf("report of %s: chart %q: series %q has %d values for %d ticks", r.Simulation, c.Title, s.Name, len(s.Values), len(c.Ticks))
			}
		}
	}
	if pc := r.Paths; pc != nil {
		for _, p := range pc.Paths {
			if len(p.At) != len(pc.Ticks) {
				return fmt.Errorf("report of %s: path of %s has %d places for %d ticks", r.Simulation, p.ID, len(p.At), len(pc.Ticks))
			}
		}
	}
	return nil
}
