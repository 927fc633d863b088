package report_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/chromiumtest"
)

// TestTurnLogColumnStays (issue 25 item 2): in a game's turns the log
// column starts at the same x on every turn, however wide that turn's
// board is. Headless Chromium lays out a duel's report; a script added to
// a copy of the page (the page itself allows none) writes where each
// turn's log column starts. -update keeps a screenshot in
// testdata/report-duel.png.
func TestTurnLogColumnStays(t *testing.T) {
	bin := chromiumtest.Find(t)
	page := writePage(t, gameRun(t, "duel-demo", 6))
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(string(b), "")
	measure := `<script>for (const d of document.querySelectorAll(".turn > div:last-child")) d.setAttribute("data-x", Math.round(d.getBoundingClientRect().left));</script>`
	html = strings.Replace(html, "</body>", measure+"</body>", 1)
	measured := filepath.Join(t.TempDir(), "measured.html")
	if err := os.WriteFile(measured, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromiumtest.Browse(t, bin, measured, "--window-size=1200,2000", "--dump-dom"))
	xs := regexp.MustCompile(`data-x="(\d+)"`).FindAllStringSubmatch(dom, -1)
	if len(xs) != 6 {
		t.Fatalf("measured %d turns' log columns, want 6", len(xs))
	}
	for _, x := range xs[1:] {
		if x[1] != xs[0][1] {
			t.Errorf("the log column starts at x %s on turn 1 and at x %s on another turn: %v", xs[0][1], x[1], xs)
			break
		}
	}
	if *update {
		chromiumtest.Browse(t, bin, page, "--hide-scrollbars", "--window-size=1200,2000", "--screenshot="+filepath.Join(mustAbs(t, "testdata"), "report-duel.png"))
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
