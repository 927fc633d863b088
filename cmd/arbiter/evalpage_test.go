package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
	"github.com/arbiter-sim/arbiter/internal/chromiumtest"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/eval-page.png from the page headless Chromium renders")

// TestEvalPageInChromium: the page of demo-sim's own suite, with an answer
// that carries markup, rendered by headless Chromium: the variants' figures,
// the comparison, each case with both variants' answers side by side, the
// prompt's difference between them, what a resolution would change, a
// failed assertion marked; the model's markup shown as text. -update keeps
// a screenshot in testdata/eval-page.png.
func TestEvalPageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	cleanEnv(t)
	comply := openaitest.FromSchema(nil)
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if c.SchemaName() == "IntentionResponse" && strings.Contains(c.SystemMessage(), "Ida") {
			return openaitest.Content(`{"intention": "go <b>now</b><script>alert(1)</script>"}`)
		}
		return comply(c)
	})
	sim := tryDemo(t)
	suite, _ := os.ReadFile(filepath.Join(sim, "evals.yaml"))
	writeSuite(t, sim, strings.Replace(string(suite), "    - no_fallback: true\n  resolution:",
		"    - no_fallback: true\n    - {name: says go, matches: {pointer: /intention, regex: \"^go\"}}\n  resolution:", 1))
	page := filepath.Join(t.TempDir(), "eval.html")
	if code, out, errOut := arbiter(t, "eval", sim, "--html", page); code != ExitEvalFailed {
		t.Fatalf("eval exit %d, want 5 (says go fails)\n%s\n%s", code, out, errOut)
	}
	dom := string(chromiumtest.Browse(t, bin, page, "--dump-dom"))
	for _, want := range []string{
		"<h1>eval 1 of demo-sim</h1>", `id="verdict">Thresholds not met.`,
		"<h3>baseline</h3>", "<h3>terse</h3>", `<table id="comparisons">`,
		"<th>baseline</th><th>terse</th>", "t2 resolution wharf",
		"terse: user prompt differs", `<span class="add">+ What do you, `, "One short sentence of at most 80 characters",
		`<li class="fail">✗ says go: `, `<li class="pass">✓ schema: valid</li>`,
		"would change", "remembers: characters/",
		`go &lt;b&gt;now&lt;/b&gt;&lt;script&gt;alert(1)&lt;/script&gt;`, `<li class="pass">✓ says go: `,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	if n := strings.Count(dom, `<pre class="answer">`); n != 44 {
		t.Errorf("the page shows %d answers, want 44 (22 cases x 2 variants)", n)
	}
	if strings.Contains(dom, "<script") {
		t.Error("the page holds a script")
	}
	shot := chromiumtest.Screenshot(t, bin, page, 1600)
	if *updateGolden {
		if err := atomicfile.Write(filepath.Join(repoRoot, "cmd", "arbiter", "testdata", "eval-page.png"), shot); err != nil {
			t.Fatal(err)
		}
	}
}
