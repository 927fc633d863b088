package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
)

// The charts are SVG drawn here: each view below is a chart's geometry in
// pixels, which the template writes out as elements.

// palette is the colours of series, characters and players, in order
// (Tableau 10, readable on white and by most colour-blind readers).
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// neutral is the colour of what no player owns.
const neutral = "#c8c8c8"

func colour(i int) string { return palette[i%len(palette)] }

// dashes are the stroke patterns of lines, in order, and markers the
// shapes of their points: a line that lies on another, or crosses it at a
// point, is still told apart where colours alone would hide it. Their
// counts differ from the palette's, so the first series differ in all
// three.
var (
	dashes  = []string{"", "8 4", "2 3", "10 4 2 4", "5 2", "14 3"}
	markers = []func(x, y float64) string{circle, square, triangle, diamond, triangleDown}
)

// style is the look of series i of a line chart or a path chart.
func style(i int) seriesView {
	return seriesView{Colour: colour(i), Dash: dashes[i%len(dashes)], marker: markers[i%len(markers)]}
}

// The markers, as SVG path data centred on x, y, about 8 pixels across.
func circle(x, y float64) string {
	return fmt.Sprintf("M%s,%sa4,4 0 1,0 8,0a4,4 0 1,0 -8,0Z", coord(x-4), coord(y))
}

func square(x, y float64) string {
	return fmt.Sprintf("M%s,%sh7v7h-7Z", coord(x-3.5), coord(y-3.5))
}

func triangle(x, y float64) string {
	return fmt.Sprintf("M%s,%sl4.5,8h-9Z", coord(x), coord(y-5))
}

func triangleDown(x, y float64) string {
	return fmt.Sprintf("M%s,%sl4.5,-8h-9Z", coord(x), coord(y+5))
}

func diamond(x, y float64) string {
	return fmt.Sprintf("M%s,%sl5,5l-5,5l-5,-5Z", coord(x), coord(y-5))
}

// axisLabel is a tick label of an axis.
type axisLabel struct {
	X, Y float64
	Text string
}

// gridLine is a horizontal line of the plot at a value.
type gridLine struct {
	Y     float64
	Label string
}

// point is one value of a series where it is drawn, with its marker (SVG
// path data) and its tooltip.
type point struct {
	X, Y  float64
	Mark  string
	Title string
}

// bar is one value of a bar series.
type bar struct {
	X, Y, W, H float64
	Title      string
}

// seriesView is one series drawn: a polyline (lines) or bars.
type seriesView struct {
	Name   string
	Colour string
	Dash   string // the polyline's stroke-dasharray, "" for a solid line
	Sample string // the legend's marker, path data in a 28x12 box
	Points string // the polyline's "x,y x,y ..."
	Dots   []point
	Bars   []bar

	marker func(x, y float64) string
}

// dot is a point of s at x, y with its marker.
func (s *seriesView) dot(x, y float64, title string) {
	s.Dots = append(s.Dots, point{X: x, Y: y, Mark: s.marker(x, y), Title: title})
}

// chartView is a Chart laid out.
type chartView struct {
	Title, Unit, Axis     string
	Width, Height         int
	Left, Right, Top, Bot float64
	Grid                  []gridLine
	XLabels               []axisLabel
	Series                []seriesView
	Empty                 bool // every value is zero
	// Notes say which lines lie on one another at every tick.
	Notes []string
}

const (
	chartW, chartH = 960, 260
	marginL        = 64
	marginR        = 16
	marginT        = 16
	marginB        = 36
)

// view lays c out.
func (c Chart) view() chartView {
	v := chartView{Title: c.Title, Unit: c.Unit, Axis: cmp.Or(c.Axis, "tick"), Width: chartW, Height: chartH,
		Left: marginL, Right: chartW - marginR, Top: marginT, Bot: chartH - marginB}
	top := 0.0
	for _, s := range c.Series {
		for _, x := range s.Values {
			top = max(top, x)
		}
	}
	v.Empty = top == 0
	// Four grid steps of a round size; counts step by whole numbers.
	step := niceCeil(top / 4)
	if c.Bars {
		step = math.Ceil(step)
	}
	top = 4 * step
	for i := 0; i <= 4; i++ {
		val := step * float64(i)
		v.Grid = append(v.Grid, gridLine{Y: v.Bot - (v.Bot-v.Top)*float64(i)/4, Label: number(val)})
	}
	n := len(c.Ticks)
	slot := (v.Right - v.Left) / float64(max(n, 1))
	xAt := func(i int) float64 { return v.Left + slot*(float64(i)+0.5) }
	yAt := func(val float64) float64 { return v.Bot - (v.Bot-v.Top)*val/top }
	every := max(1, (n+11)/12) // at most about 12 labels
	for i, t := range c.Ticks {
		if i%every == 0 || i == n-1 {
			v.XLabels = append(v.XLabels, axisLabel{X: xAt(i), Y: v.Bot + 16, Text: strconv.Itoa(t)})
		}
	}
	for si, s := range c.Series {
		sv := seriesView{Name: s.Name, Colour: colour(si)}
		if !c.Bars {
			sv = style(si)
			sv.Name = s.Name
			sv.Sample = sv.marker(14, 6)
		}
		var pts []string
		bw := slot * 0.8 / float64(len(c.Series))
		for i, val := range s.Values {
			if i >= n {
				break
			}
			title := fmt.Sprintf("%s, %s %d: %s %s", s.Name, v.Axis, c.Ticks[i], number(val), c.Unit)
			if c.Bars {
				if val > 0 {
					x := v.Left + slot*float64(i) + slot*0.1 + bw*float64(si)
					sv.Bars = append(sv.Bars, bar{X: x, Y: yAt(val), W: bw, H: v.Bot - yAt(val), Title: title})
				}
				continue
			}
			x, y := xAt(i), yAt(val)
			pts = append(pts, coord(x)+","+coord(y))
			sv.dot(x, y, title)
		}
		sv.Points = strings.Join(pts, " ")
		v.Series = append(v.Series, sv)
	}
	if !c.Bars && !v.Empty {
		names := make([]string, len(c.Series))
		rows := make([][]float64, len(c.Series))
		for i, s := range c.Series {
			names[i], rows[i] = s.Name, s.Values
		}
		for _, same := range alike(names, rows) {
			v.Notes = append(v.Notes, fmt.Sprintf("%s have the same value at every tick: their lines lie on one another (told apart by dashes and markers).", and(same)))
		}
	}
	return v
}

// alike groups the names whose rows are equal, two or more to a group, in
// the order of their first name.
func alike[T comparable](names []string, rows [][]T) [][]string {
	var groups [][]string
	done := make([]bool, len(rows))
	for i := range rows {
		if done[i] {
			continue
		}
		group := []string{names[i]}
		for j := i + 1; j < len(rows); j++ {
			if !done[j] && slices.Equal(rows[i], rows[j]) {
				group, done[j] = append(group, names[j]), true
			}
		}
		if len(group) > 1 {
			groups = append(groups, group)
		}
	}
	return groups
}

// and joins names as a sentence does: "a", "a and b", "a, b and c".
func and(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// niceCeil is the smallest of 1, 2, 2.5, 5 times a power of ten at or
// above x (0.25 for 0: an empty chart still has a scale), so the grid
// lines fall on round numbers.
func niceCeil(x float64) float64 {
	if x <= 0 {
		return 0.25
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// number prints a value for people: whole numbers plainly, tens of
// thousands with a k, fractions with at most two decimals.
func number(x float64) string {
	switch {
	case x >= 10000:
		return strconv.FormatFloat(x/1000, 'f', -1, 64) + "k"
	case x == math.Trunc(x):
		return strconv.FormatFloat(x, 'f', 0, 64)
	default:
		return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
	}
}

func coord(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// pathView is a PathChart laid out: a row per location, a column per tick.
type pathView struct {
	Width, Height int
	Left, Right   float64
	Top, Bot      float64
	Rows          []axisLabel
	XLabels       []axisLabel
	Paths         []seriesView
	// Notes say which characters were at the same place at every tick:
	// their paths are drawn side by side.
	Notes []string
}

// rowH is the least height of a location's row, and lane the room of
// each character in it: characters at the same place at the same tick
// are drawn a lane apart, more than a marker is wide (about 8 pixels), so
// every path and every marker shows whoever shares the place.
const (
	rowH = 34.0
	lane = 10.0
)

func (pc *PathChart) view() pathView {
	v := pathView{Width: chartW, Left: 150, Right: chartW - marginR, Top: marginT}
	h := max(rowH, lane*float64(len(pc.Paths))+10)
	v.Bot = v.Top + h*float64(len(pc.Locations))
	v.Height = int(v.Bot) + marginB
	row := map[string]int{}
	for i, l := range pc.Locations {
		row[l.ID] = i
		v.Rows = append(v.Rows, axisLabel{X: v.Left - 8, Y: v.Top + h*(float64(i)+0.5), Text: l.Name})
	}
	n := len(pc.Ticks)
	slot := (v.Right - v.Left) / float64(max(n, 1))
	xAt := func(i int) float64 { return v.Left + slot*(float64(i)+0.5) }
	every := max(1, (n+11)/12)
	for i, t := range pc.Ticks {
		if i%every == 0 || i == n-1 {
			v.XLabels = append(v.XLabels, axisLabel{X: xAt(i), Y: v.Bot + 16, Text: strconv.Itoa(t)})
		}
	}
	name := map[string]string{}
	for _, l := range pc.Locations {
		name[l.ID] = l.Name
	}
	for ci, p := range pc.Paths {
		sv := style(ci)
		sv.Name, sv.Sample = p.Name, sv.marker(14, 6)
		off := lane * (float64(ci) - float64(len(pc.Paths)-1)/2)
		var pts []string
		for i, loc := range p.At {
			r, ok := row[loc]
			if !ok || i >= n {
				continue
			}
			x, y := xAt(i), v.Top+h*(float64(r)+0.5)+off
			pts = append(pts, coord(x)+","+coord(y))
			sv.dot(x, y, fmt.Sprintf("%s after tick %d: %s", p.Name, pc.Ticks[i], name[loc]))
		}
		sv.Points = strings.Join(pts, " ")
		v.Paths = append(v.Paths, sv)
	}
	names := make([]string, len(pc.Paths))
	rows := make([][]string, len(pc.Paths))
	for i, p := range pc.Paths {
		names[i], rows[i] = p.Name, p.At
	}
	for _, same := range alike(names, rows) {
		v.Notes = append(v.Notes, fmt.Sprintf("%s were at the same place at every tick: their paths are drawn side by side.", and(same)))
	}
	return v
}

// mapView is a Grid laid out in cells.
type mapView struct {
	Width, Height int
	Legend        []seriesView // a name and a colour per player, then neutral
	Stars         []starView
	Fleets        []fleetView
}

type starView struct {
	X, Y, R     float64
	Colour      string
	ID, Ships   string
	Title       string
	LabelY      float64
	ShipsLabelY float64
}

type fleetView struct {
	X1, Y1, X2, Y2 float64
	Colour         string
	Title          string
}

const cell = 44

func gridView(m *session.Grid) mapView {
	v := mapView{Width: max(m.Width, 1) * cell, Height: max(m.Height, 1) * cell}
	owner := map[string]string{"": neutral}
	for i, p := range m.Players {
		owner[p] = colour(i)
		v.Legend = append(v.Legend, seriesView{Name: p, Colour: colour(i)})
	}
	v.Legend = append(v.Legend, seriesView{Name: "neutral", Colour: neutral})
	centre := map[string][2]float64{}
	for _, s := range m.Points {
		x, y := (float64(s.X)+0.5)*cell, (float64(s.Y)+0.5)*cell
		centre[s.ID] = [2]float64{x, y}
		c, ok := owner[s.Owner]
		if !ok {
			c = neutral
		}
		v.Stars = append(v.Stars, starView{X: x, Y: y, R: 6 + 2*float64(min(max(s.Size, 0), 5)), Colour: c,
			ID: s.ID, Ships: s.Label, LabelY: y + 4, ShipsLabelY: y + cell/2 - 2, Title: s.Title})
	}
	for _, f := range m.Arrows {
		a, okA := centre[f.From]
		b, okB := centre[f.To]
		if !okA || !okB {
			continue
		}
		c, ok := owner[f.Owner]
		if !ok {
			c = neutral
		}
		v.Fleets = append(v.Fleets, fleetView{X1: a[0], Y1: a[1], X2: b[0], Y2: b[1], Colour: c, Title: f.Title})
	}
	return v
}

// meterView is a Meter as a bar of the full width W.
type meterView struct {
	Label string
	Text  string
	W     float64
	Fill  float64
	Color string
}

func meters(ms []session.Meter) []meterView {
	var out []meterView
	for i, m := range ms {
		w := 240.0
		fill := 0.0
		if m.Max > 0 {
			fill = w * float64(min(max(m.Value, 0), m.Max)) / float64(m.Max)
		}
		out = append(out, meterView{Label: m.Label, Text: fmt.Sprintf("%d/%d", m.Value, m.Max), W: w, Fill: fill, Color: colour(i)})
	}
	return out
}
