package report_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/report"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// evil is text a model could write to break out of the page.
const evil = `</div><script>alert(1)</script><a href="https://evil.example/">x</a><img src=//evil.example/i.png> & "quoted" 'single'`

// tag is an element's start tag; text a model wrote has its < escaped, so
// it never matches.
var tag = regexp.MustCompile(`<[a-zA-Z][^>]*>`)

// remoteAttr is an attribute that would load or link anything from another
// place.
var remoteAttr = regexp.MustCompile(`(?i)\b(src|href|action|srcset|poster|data)\s*=\s*["']?\s*(https?:|//)`)

// remote returns the first reference of page to another place: an
// attribute of a tag, or a url() in CSS.
func remote(page string) string {
	for _, tg := range tag.FindAllString(page, -1) {
		if m := remoteAttr.FindString(tg); m != "" {
			return tg
		}
	}
	if i := strings.Index(page, "url("); i >= 0 {
		return page[i:min(len(page), i+40)]
	}
	return ""
}

func narrativeReport() *report.Report {
	return &report.Report{
		Simulation: "demo", Title: "Title " + evil, Kind: "narrative", Unit: "tick", LastTick: 2,
		Figures: []runner.Field{{Key: "model calls", Value: "22"}},
		Stopped: "stopped: " + evil,
		Timeline: []session.StoryTick{
			{Tick: 1, Locations: []session.StoryLocation{{ID: "hall", Name: "Hall " + evil, Moment: "Moment " + evil, Fallback: true,
				Characters: []session.StoryCharacter{{ID: "ada", Name: "Ada", Intention: "Intends " + evil, IntentionFallback: true,
					Memory: []string{"Remembers " + evil}, From: "hall", To: "yard"}},
				Skipped: []session.SkippedUpdate{{Character: "bo", Reason: "Skipped " + evil}}}}},
			{Tick: 2, Locations: []session.StoryLocation{{ID: "yard", Name: "Yard", Moment: "Quiet.", Characters: []session.StoryCharacter{}}}},
		},
		Paths: &report.PathChart{Locations: []report.Place{{ID: "hall", Name: "Hall " + evil}, {ID: "yard", Name: "Yard"}},
			Ticks: []int{0, 1, 2}, Paths: []report.Path{{ID: "ada", Name: "Ada " + evil, At: []string{"hall", "yard", "yard"}}}},
		Calls: []report.Chart{
			{Title: "Tokens per tick", Unit: "tokens", Ticks: []int{1, 2}, Series: []report.Series{{Name: "intention " + evil, Values: []float64{1200, 25000}}}},
			{Title: "Failed", Unit: "calls", Bars: true, Ticks: []int{1, 2}, Series: []report.Series{{Name: "resolution failed", Values: []float64{0, 2}}}},
		},
		Phases:   []report.PhaseTotal{{Phase: "intention", Calls: 12, Failed: 1, Fallbacks: 1, PromptTokens: 900, CompletionTokens: 300, MeanLatencyMS: 42}},
		TickRuns: map[int]string{2: "run 2 · templates: prompts/ (phase1_intention_system.md)"},
	}
}

func gameReport() *report.Report {
	return &report.Report{
		Simulation: "war", Title: "War", Kind: "conquest", Unit: "turn", LastTick: 1,
		Turns: []session.ReportTurn{{N: 1, Lines: []string{"Log " + evil}, Errors: []session.PlayerError{{Player: "p1", Error: "Order 0: " + evil}},
			Board: session.Board{Fields: []runner.Field{{Key: "p1", Value: "Field " + evil}},
				Map: &session.Grid{Width: 3, Height: 2, Players: []string{"p1", "p2"},
					Points: []session.Point{{ID: "A", X: 0, Y: 0, Owner: "p1", Size: 3, Label: "9", Title: "A (0,0): p1, production 3, 9 ships"},
						{ID: "B", X: 2, Y: 1, Label: "2", Title: "B (2,1): neutral, production 0, 2 ships"}},
					Arrows: []session.Arrow{{Owner: "p1", From: "A", To: "B", Title: "p1: 4 ships A -> B, arrives turn 3"}}},
				Meters: []session.Meter{{Label: "p1 health " + evil, Value: 7, Max: 10}}}}},
		Players: []session.PlayerErrors{{Player: "p1", Seat: "model", Errors: []session.TurnError{{Turn: 1, Error: "Order 0: " + evil}}}, {Player: "p2", Seat: "bot"}},
		Ending: &session.Ending{Over: true, Result: "p1 won at turn 1 (" + evil + ")", Turns: 1, MaxTurns: 40, Final: "Final " + evil,
			Players: []session.EndPlayer{{Player: "p1", Seat: "model", Winner: true, Holds: "2 stars, 13 ships", Invalid: 1, InvalidNoun: "order errors"},
				{Player: "p2", Seat: "bot", Holds: "0 stars, 0 ships", InvalidNoun: "order errors"}}},
		Trends: []report.Chart{{Title: "Ships per player", Unit: "ships", Axis: "turn", Ticks: []int{1}, Series: []report.Series{{Name: "p1", Values: []float64{13}}}}},
	}
}

func render(t *testing.T, r *report.Report) string {
	t.Helper()
	b, err := report.Render(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRenderEscapes: whatever a model wrote shows as text; nothing it wrote
// becomes markup, and the page links or loads nothing from elsewhere.
func TestRenderEscapes(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*report.Report{"narrative": narrativeReport(), "conquest": gameReport()} {
		page := render(t, r)
		if strings.Contains(page, "<script") || strings.Contains(page, "<img") || strings.Contains(page, `<a href="https`) {
			t.Errorf("%s: a model's markup is in the page", name)
		}
		if m := remote(page); m != "" {
			t.Errorf("%s: the page refers to another place: %q", name, m)
		}
		if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n == 0 {
			t.Errorf("%s: the model's text is not shown escaped", name)
		}
		if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'`) {
			t.Errorf("%s: no content security policy", name)
		}
	}
}

// TestRemoteFinds: the checker of TestRenderEscapes finds what it looks for.
func TestRemoteFinds(t *testing.T) {
	t.Parallel()
	for _, page := range []string{`<img src="https://x/y.png">`, `<a HREF='//x/'>`, `<link href=http://x/s.css>`, `<style>b{background:url(x.png)}</style>`} {
		if remote(page) == "" {
			t.Errorf("remote(%q) found nothing", page)
		}
	}
	if m := remote(`<p>&lt;img src="https://x/y.png"&gt;</p><svg viewBox="0 0 1 1">`); m != "" {
		t.Errorf("remote found %q in escaped text", m)
	}
}

// TestRenderNarrative: the page holds every part of the story, marked.
func TestRenderNarrative(t *testing.T) {
	t.Parallel()
	page := render(t, narrativeReport())
	for _, want := range []string{
		"<title>demo — arbiter report</title>",
		`<section id="timeline">`, `<h3>Tick 1</h3>`, `<h3>Tick 2<span class="run">run 2 · templates: prompts/ (phase1_intention_system.md)</span></h3>`, `id="tick-1-hall"`, `id="tick-2-yard"`,
		"Moment &lt;/div&gt;", "Intends &lt;/div&gt;", "Remembers &lt;/div&gt;", "Skipped &lt;/div&gt;",
		`<span class="move">moved hall → yard</span>`,
		`<span class="mark">fallback</span>the game master's call failed`,
		`<section id="paths">`, `<section id="calls">`,
		"<b>model calls</b>22", "2 ticks committed",
		"<td>intention</td><td class=\"n\">12</td>", "42 ms",
		"25k", // the grid's top label of the tokens chart
		"<title>resolution failed, tick 2: 2 calls</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `role="img"`); n != 3 {
		t.Errorf("%d charts, want 3 (paths, tokens, failures)", n)
	}
	// Ada's path: three points, the last two on the yard's row.
	if n := strings.Count(page, "Ada &lt;/div&gt;"); n < 4 {
		t.Errorf("Ada's path has %d labelled points and legend entries, want 3 + 1", n)
	}
	for _, absent := range []string{`<section id="turns">`, `<section id="chronicle">`} {
		if strings.Contains(page, absent) {
			t.Errorf("a narrative page has %s", absent)
		}
	}
}

// TestRenderGame: a game's page shows every turn's board and log and each
// player's errors, and says when there were no model calls.
func TestRenderGame(t *testing.T) {
	t.Parallel()
	page := render(t, gameReport())
	for _, want := range []string{
		`<section id="turns">`, `<div class="turn" id="turn-1">`, "Log &lt;/div&gt;", "Field &lt;/div&gt;",
		`<svg class="starmap"`, "<title>A (0,0): p1, production 3, 9 ships</title>", "<title>B (2,1): neutral, production 0, 2 ships</title>",
		"<title>p1: 4 ships A -&gt; B, arrives turn 3</title>",
		`<svg class="meters"`, "7/10", `width="168"`, // 7 of 10 of a 240-pixel bar
		`<section id="errors">`, `<table class="player-errors" data-player="p1">`, "Order 0: &lt;/div&gt;",
		`<h3>p2 <span class="id">bot</span></h3><p class="none">no errors</p>`,
		"no model calls in this run", "1 turn committed",
		// The page opens with the ending: the winner marked, what each
		// player holds, their order errors; the last line as text.
		`<p class="result"><b>p1 won at turn 1 (&lt;/div&gt;`, `<p class="note">1 of 40 turns played</p>`,
		`<tr class="winner" data-player="p1"><td>p1 <span class="mark win">winner</span></td><td>model</td><td>2 stars, 13 ships</td><td class="n">1</td></tr>`,
		`<tr data-player="p2"><td>p2</td><td>bot</td><td>0 stars, 0 ships</td><td class="n">0</td></tr>`,
		`<p class="final">Final &lt;/div&gt;`,
		`<section id="trends">`, "<title>p1, turn 1: 13 ships</title>", `dy="-4">turn</text>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestRenderChronicle(t *testing.T) {
	t.Parallel()
	r := &report.Report{Simulation: "hist", Title: "History", Kind: "chronicle", Unit: "turn", LastTick: 3, Outline: &session.Outline{
		BigPicture: "A river " + evil, Stage: "play",
		Periods: []session.OutlinePeriod{{Name: "Dusk", Tone: "dark", Bookend: "last", Description: "The end.",
			Events: []session.OutlineEvent{{Name: "The Flood", Tone: "dark", Description: "Water " + evil}}}},
	}}
	r.Outline.Palette.Yes, r.Outline.Palette.No = []string{"boats"}, []string{"magic " + evil}
	page := render(t, r)
	for _, want := range []string{`<section id="chronicle">`, "A river &lt;/div&gt;", "YES: boats", "NO: magic &lt;/div&gt;",
		`<h3>Dusk <span class="id">dark, last bookend</span></h3>`, "<b>The Flood</b>", "Water &lt;/div&gt;", "3 turns committed"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	r.Outline.Periods = nil
	if page := render(t, r); !strings.Contains(page, "no periods yet") {
		t.Error("an empty timeline does not say so")
	}
}

// TestRenderRefuses: a report no run could give is refused, naming what is
// wrong, and nothing is rendered.
func TestRenderRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*report.Report) *report.Report
		want   string
	}{
		{"nil", func(*report.Report) *report.Report { return nil }, "no report"},
		{"no tick", func(r *report.Report) *report.Report { r.LastTick = 0; return r }, "report of demo: no tick committed (last tick 0); run it first"},
		{"kind", func(r *report.Report) *report.Report { r.Kind = "poker"; return r }, `kind "poker" is none of narrative, chronicle, conquest, duel`},
		{"series", func(r *report.Report) *report.Report {
			r.Calls[1].Series[0].Values = []float64{1}
			return r
		}, `chart "Failed": series "resolution failed" has 1 values for 2 ticks`},
		{"path", func(r *report.Report) *report.Report {
			r.Paths.Paths[0].At = r.Paths.Paths[0].At[:1]
			return r
		}, "path of ada has 1 places for 3 ticks"},
	} {
		b, err := report.Render(tc.change(narrativeReport()))
		if err == nil || !strings.Contains(err.Error(), tc.want) || b != nil {
			t.Errorf("%s: Render = %d bytes, %v; want nothing and %q", tc.name, len(b), err, tc.want)
		}
	}
}

// TestRenderChartStyles: lines are drawn dashed and marked, their legend
// shows both, equal lines carry a note; a chart with nothing in it (no
// failed call, no fallback) is one line, not an empty plot.
func TestRenderChartStyles(t *testing.T) {
	t.Parallel()
	r := narrativeReport()
	r.Calls = append(r.Calls[:1],
		report.Chart{Title: "Mean latency", Unit: "ms", Ticks: []int{1, 2}, Series: []report.Series{{Name: "intention", Values: []float64{3, 4}}, {Name: "resolution", Values: []float64{3, 4}}}},
		report.Chart{Title: "Failed calls and fallbacks per tick", Unit: "calls", Bars: true, Ticks: []int{1, 2}, Series: []report.Series{{Name: "intention failed", Values: []float64{0, 0}}}})
	page := render(t, r)
	for _, want := range []string{
		`<p class="chart empty"><b>Failed calls and fallbacks per tick</b> <span class="id">(calls)</span>: none at any tick</p>`,
		`<p class="note">intention and resolution have the same value at every tick: their lines lie on one another (told apart by dashes and markers).</p>`,
		`stroke-dasharray="8 4"`, `<svg class="sample"`, `<path class="dot" d="M`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `role="img"`); n != 3 {
		t.Errorf("%d plots, want 3 (paths, tokens, latency; the empty failures chart is a line)", n)
	}
	if strings.Contains(page, `aria-label="Failed calls and fallbacks per tick"`) {
		t.Error("the empty failures chart is drawn")
	}
}

// TestRenderTruncated: a kind that keeps cut answers has a truncated
// column; others have none.
func TestRenderTruncated(t *testing.T) {
	t.Parallel()
	r := narrativeReport()
	if page := render(t, r); strings.Contains(page, ">truncated</th>") {
		t.Error("a narrative's table has a truncated column")
	}
	r.KeepsCuts = true
	r.Phases = []report.PhaseTotal{{Phase: "chat", Calls: 3, Failed: 0, Truncated: 2, MeanLatencyMS: 5}}
	want := `<td>chat</td><td class="n">3</td><td class="n">0</td><td class="n">2</td><td class="n">0</td>`
	if page := render(t, r); !strings.Contains(page, ">truncated</th>") || !strings.Contains(page, want) {
		t.Errorf("page lacks the truncated column or %q", want)
	}
}
