package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
)

// Page is r as one self-contained HTML page: the variants' figures, the
// comparison with the baseline, then the cases as rows and the variants as
// columns, each answer with its checks (failed ones marked) and what it
// would change, and how each variant's prompts differ from the baseline's.
func Page(r *Result) ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pageData(r)); err != nil {
		return nil, fmt.Errorf("eval page: %w", err)
	}
	return b.Bytes(), nil
}

type pageRow struct {
	Case   Case
	ID     string
	Repeat int
	Cells  []*Answer // one per variant, nil when it has none
	Diffs  []promptDiff
}

type promptDiff struct {
	Variant string
	Part    string
	Lines   []diffLine
}

type diffLine struct {
	Op   string // "=", "+", "-"
	Text string
}

type page struct {
	R    *Result
	Rows []pageRow
}

func pageData(r *Result) page {
	p := page{R: r}
	index := map[[2]int]int{}
	for i := range r.Answers {
		a := &r.Answers[i]
		k := [2]int{a.Case, a.Repeat}
		row, ok := index[k]
		if !ok {
			row = len(p.Rows)
			index[k] = row
			p.Rows = append(p.Rows, pageRow{Case: r.Cases[a.Case], ID: r.Cases[a.Case].ID(), Repeat: a.Repeat + 1, Cells: make([]*Answer, len(r.Variants))})
		}
		for v, info := range r.Variants {
			if info.Name == a.Variant {
				p.Rows[row].Cells[v] = a
			}
		}
	}
	for i := range p.Rows {
		p.Rows[i].Diffs = diffs(r, p.Rows[i].Cells)
	}
	sortRows(p.Rows)
	return p
}

// diffs are each variant's prompts against the baseline's, where they
// differ.
func diffs(r *Result, cells []*Answer) []promptDiff {
	if len(cells) == 0 || cells[0] == nil {
		return nil
	}
	var out []promptDiff
	for v, a := range cells[1:] {
		if a == nil {
			continue
		}
		for _, part := range []struct{ name, base, mine string }{{"system", cells[0].System, a.System}, {"user", cells[0].User, a.User}} {
			if part.base != part.mine {
				out = append(out, promptDiff{Variant: r.Variants[v+1].Name, Part: part.name, Lines: lineDiff(part.base, part.mine)})
			}
		}
	}
	return out
}

func sortRows(rows []pageRow) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && less(rows[j], rows[j-1]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

func less(a, b pageRow) bool {
	if c := compareCases(a.Case, b.Case); c != 0 {
		return c < 0
	}
	return a.Repeat < b.Repeat
}

// lineDiff is the line diff of a into b (longest common subsequence); a
// text too long for it shows b's lines as added after a's removed.
func lineDiff(a, b string) []diffLine {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(x)*len(y) > 1<<20 {
		var out []diffLine
		for _, l := range x {
			out = append(out, diffLine{"-", l})
		}
		for _, l := range y {
			out = append(out, diffLine{"+", l})
		}
		return out
	}
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out = append(out, diffLine{"=", x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, diffLine{"-", x[i]})
			i++
		default:
			out = append(out, diffLine{"+", y[j]})
			j++
		}
	}
	return out
}

var pageTemplate = template.Must(template.New("eval").Funcs(template.FuncMap{
	"pct":      func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"pretty":   prettyJSON,
	"failed":   func(o Outcome) bool { return o.Pass != nil && !*o.Pass },
	"judgeErr": func(o Outcome) bool { return o.Pass == nil },
}).Parse(pageHTML))

func prettyJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

const pageHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>eval {{.R.ID}} of {{.R.Simulation}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#f3f3f3}
pre{white-space:pre-wrap;margin:0;font:12px/1.35 ui-monospace,monospace;max-width:60em}
.pass{color:#1a7f37}.fail{color:#c62828;font-weight:bold}.jerr{color:#8a6d00}
.bad{background:#fff0f0}.verdict-pass{color:#1a7f37}.verdict-fail{color:#c62828}
.add{background:#e6ffec}.del{background:#ffebe9}
ul{margin:.2em 0;padding-left:1.2em}
</style></head><body>
<h1>eval {{.R.ID}}{{with .R.Against}} against eval {{.}}{{end}} of {{.R.Simulation}}</h1>
<p>Suite {{.R.Suite}}, started {{.R.Started.Format "2006-01-02 15:04:05 UTC"}}: {{len .R.Cases}} cases, {{len .R.Variants}} variants, {{.R.Repeat}} {{if eq .R.Repeat 1}}repeat{{else}}repeats{{end}}, {{len .R.Answers}} answers.
{{if .R.Against}}Each variant of eval {{.R.ID}} beside itself in eval {{.R.Against}}; the prompts' differences are against the first column's.{{else if .R.Passed}}<strong class="verdict-pass" id="verdict">Every threshold met.</strong>{{else}}<strong class="verdict-fail" id="verdict">Thresholds not met{{if .R.Interrupted}} (interrupted){{end}}.</strong>{{end}}</p>
<h2>Variants</h2>
{{range .R.Summaries}}<h3>{{.Variant}}</h3>
<table class="summary"><tr><th>phase</th><th>assertion</th><th>pass</th><th>rate</th><th>95% interval</th><th>judge errors</th></tr>
{{range .Rates}}<tr><td>{{.Phase}}</td><td>{{.Assertion}}</td><td>{{.Pass}}/{{.N}}</td>{{if .N}}<td>{{pct .Rate}}</td><td>{{pct .Low}} to {{pct .High}}</td>{{else}}<td>-</td><td>-</td>{{end}}<td>{{.JudgeErrors}}</td></tr>
{{end}}</table>
<p>Schema-valid {{pct .SchemaValid}}, {{.Repairs}} repairs, {{.Fallbacks}} fallbacks, mean tokens {{printf "%.0f" .MeanPromptTokens}} prompt / {{printf "%.0f" .MeanCompletionTokens}} completion, latency p50 {{.P50LatencyMS}} ms, p95 {{.P95LatencyMS}} ms{{if .CostUSD}}, cost ${{printf "%.4f" .CostUSD}}{{end}}.</p>
{{end}}
{{if .R.Comparisons}}<h2>{{if .R.Against}}Against eval {{.R.Against}}{{else}}Against the baseline{{end}}, on the same cases</h2>
<table id="comparisons"><tr><th>variant</th><th>phase</th><th>assertion</th><th>wins</th><th>losses</th><th>ties</th><th>p (sign test)</th></tr>
{{range .R.Comparisons}}<tr><td>{{.Variant}}</td><td>{{.Phase}}</td><td>{{.Assertion}}</td><td>{{.Wins}}</td><td>{{.Losses}}</td><td>{{.Ties}}</td><td>{{printf "%.3f" .P}}</td></tr>
{{end}}</table>{{end}}
<h2>Cases</h2>
<table id="cases"><tr><th>case</th>{{range .R.Variants}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr><td><strong>{{.ID}}</strong>{{if gt $.R.Repeat 1}} #{{.Repeat}}{{end}}
{{range .Diffs}}<details><summary>{{.Variant}}: {{.Part}} prompt differs</summary><pre>{{range .Lines}}{{if eq .Op "+"}}<span class="add">+ {{.Text}}</span>{{else if eq .Op "-"}}<span class="del">- {{.Text}}</span>{{else}}  {{.Text}}{{end}}
{{end}}</pre></details>{{end}}</td>
{{range .Cells}}<td{{if and . .Error}} class="bad"{{end}}>{{with .}}
<pre class="answer">{{if .Output}}{{pretty .Output}}{{else}}{{.Error}}{{end}}</pre>
<ul class="outcomes">{{range .Outcomes}}<li class="{{if failed .}}fail{{else if judgeErr .}}jerr{{else}}pass{{end}}">{{if failed .}}✗{{else if judgeErr .}}?{{else}}✓{{end}} {{.Assertion}}: {{if judgeErr .}}{{.JudgeError}}{{else}}{{.Detail}}{{end}}</li>{{end}}</ul>
{{if .Verdict.Changes}}<details open><summary>would change</summary><ul class="changes">{{range .Verdict.Changes}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
<small>{{.PromptTokens}}+{{.CompletionTokens}} tokens, {{.LatencyMS}} ms{{if .Cached}}, cached{{end}}</small>{{end}}</td>{{end}}</tr>
{{end}}</table>
</body></html>
`
