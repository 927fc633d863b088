package report_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
	"github.com/arbiter-sim/arbiter/internal/chromiumtest"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/report"
)

var update = flag.Bool("update", false, "rewrite testdata/*.png from the pages headless Chromium renders")

// writePage builds and renders the report of dir into a file.
func writePage(t *testing.T, dir string) string {
	t.Helper()
	r, err := report.Build(context.Background(), open(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	b, err := report.Render(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the report of %d ticks is %d bytes", r.LastTick, len(b))
	return path
}

// TestChromium renders the reports of a narrative run, of a conquest game
// and of two chronicles (one reply whole, one cut at max_tokens) in
// headless Chromium and checks the document it built: every part there,
// the model's markup as text (no script or image element came of it), the
// charts drawn, an empty one as a line. A screenshot of each must be a page, not a blank;
// -update keeps them under testdata for people to look at.
func TestChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	for _, tc := range chromiumCases() {
		t.Run(tc.name, func(t *testing.T) {
			page := writePage(t, tc.dir(t))
			checkDOM(t, string(chromiumtest.Browse(t, bin, page, "--dump-dom")), tc.want, tc.count)
			checkScreenshot(t, bin, page, tc.shot, tc.height)
		})
	}
}

// chromiumCase is a run whose report TestChromium renders: the document
// holds each of want, and count times each key of count; the screenshot
// shot is height pixels high.
type chromiumCase struct {
	name, shot string
	dir        func(*testing.T) string
	height     int
	want       []string
	count      map[string]int
}

func chromiumCases() []chromiumCase {
	return []chromiumCase{
		{
			name: "narrative", shot: "report.png", height: 2600,
			dir: func(t *testing.T) string { return narrativeRun(t, 3) },
			want: []string{
				"<h1>The Low Water at Vesper Lock</h1>", "3 ticks committed",
				`<h3>Tick 1<span class="run">run 1 · default templates</span></h3>`, `<h3>Tick 3<span class="run">run 1 · default templates</span></h3>`,
				"Sallow Wharf", "The Undercroft",
				`<span class="move">moved wharf → lock</span>`,
				// Hollis's memory and the Drowned Bell's moment, as text.
				`Saw "&lt;b&gt;CLOSED&lt;/b&gt;" &amp; &lt;script&gt;alert("x")&lt;/script&gt; on the door`,
				`A lamp gutters. &lt;img src="http://evil.example/x.png" onerror="alert(1)"&gt;`,
				"The ferryman would not meet my eyes.",
				`<span class="mark">fallback</span>the game master's call failed`,
				"<title>Pip after tick 2: The Undercroft</title>",
				// Two characters who never move lie side by side, said so.
				`<p class="note">Hollis Penrake and Inspector Oriel Vance were at the same place at every tick: their paths are drawn side by side.</p>`,
				`stroke-dasharray="8 4"`,
				"Tokens per tick", "Mean latency of a call", "Failed calls and fallbacks per tick",
				"<td>resolution</td><td class=\"n\">15</td><td class=\"n\">3</td><td class=\"n\">3</td>",
			},
			count: map[string]int{`<div class="tick"`: 3, `role="img"`: 4, `<div class="location"`: 15, "<script": 0, "<img": 0, "<b>CLOSED": 0},
		},
		{
			name: "conquest", shot: "report-conquest.png", height: 1400,
			dir: func(t *testing.T) string { return gameRun(t, "conquest-demo", 8) },
			want: []string{
				"<h1>The Rim Wars</h1>", "8 turns committed", `<h3>Turn 1<span class="run">run 1</span></h3>`, `<h3>Turn 8<span`,
				"8 of 40", `<section id="errors">`, "no model calls in this run",
				// The page opens with where the game stands, the figures
				// with what the rules refused, the calls last.
				`<div class="ending" id="ending">` + "\n" + `<p class="result">not over: played to turn 8 of 40</p>`,
				`<p class="note">8 of 40 turns played</p>`, `<th class="n">order errors</th>`,
				`<ul class="figures" id="figures"><li><b>order errors</b>`, `<li><b>model calls</b>none</li></ul>`,
				`<a href="#turns">Turns</a><a href="#calls">Model calls</a>`,
				`<section id="trends">`, `aria-label="Ships per player"`, `aria-label="Stars per player"`, "<title>p1, turn 8: ",
				`<p class="note map-legend">A star is drawn in its owner's colour, larger the more it produces; its letter is its id, and the number under it the ships there`,
			},
			count: map[string]int{`<div class="turn"`: 8, `<svg class="starmap"`: 8, "<script": 0, `<tr data-player=`: 2},
		},
		{
			// A duel played to its end: the winner, how, and the last blow.
			name: "duel-ending", shot: "report-duel-ending.png", height: 1100,
			dir: func(t *testing.T) string { return gameRun(t, "duel-demo", 30) },
			want: []string{`<p class="result"><b>`, "won", `<span class="mark win">winner</span>`, `<th class="n">refused choices</th>`,
				`<p class="final">The last of turn `, "health "},
			count: map[string]int{`<span class="mark win">winner</span>`: 1, `<section id="trends">`: 0, "<script": 0},
		},
		{
			// No call failed, none fell back: that chart is one line.
			name: "chronicle", shot: "report-chronicle.png", height: 1100,
			dir: func(t *testing.T) string {
				return chronicleRun(t, openaitest.Content("CREATE EVENT The Flood IN Dusk TONE dark DESCRIPTION Water rose."))
			},
			want: []string{"<b>failed calls</b>0", "<b>truncated</b>0",
				`<p class="chart empty"><b>Failed and truncated calls and fallbacks per tick</b> <span class="id">(calls)</span>: none at any tick</p>`,
				`aria-label="Tokens per tick"`},
			count: map[string]int{`aria-label="Failed and truncated calls and fallbacks per tick"`: 0, "<script": 0},
		},
		{
			// A reply cut at max_tokens is kept: truncated, not failed.
			name: "chronicle-truncated", shot: "report-chronicle-truncated.png", height: 1100,
			dir: func(t *testing.T) string {
				return chronicleRun(t, openaitest.Truncated("CREATE EVENT The Flood IN Dusk TONE dark DESCRIPTION Water rose over the"))
			},
			want: []string{"<b>failed calls</b>0", "<b>truncated</b>1", ">truncated</th>",
				`<td>chat</td><td class="n">1</td><td class="n">0</td><td class="n">1</td>`, "<title>chat truncated, tick 2: 1 calls</title>"},
			count: map[string]int{`aria-label="Failed and truncated calls and fallbacks per tick"`: 1, "<script": 0},
		},
	}
}

// checkDOM checks the document Chromium built: it holds each of want, and
// each key of count that many times; when it does not, it is logged.
func checkDOM(t *testing.T, dom string, want []string, count map[string]int) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(dom, w) {
			t.Errorf("the rendered document lacks %q", w)
		}
	}
	for s, n := range count {
		if got := strings.Count(dom, s); got != n {
			t.Errorf("the rendered document has %d × %q, want %d", got, s, n)
		}
	}
	if t.Failed() {
		t.Logf("document:\n%s", dom)
	}
}

// checkScreenshot takes a screenshot of page 1280 pixels wide and height
// high, and checks it is that size and a page, not a blank; -update keeps
// it as testdata/shot.
func checkScreenshot(t *testing.T, bin, page, shot string, height int) {
	t.Helper()
	b := chromiumtest.Screenshot(t, bin, page, height)
	if *update {
		if err := atomicfile.Write(filepath.Join("testdata", shot), b); err != nil {
			t.Fatal(err)
		}
	}
}
