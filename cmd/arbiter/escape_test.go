package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// hostileText is what a model, a server or a shared file may write to take
// over a terminal: OSC 52 (sets the clipboard), OSC 0 (the window title), a
// cleared screen, NUL, DEL and a C1 CSI.
const hostileText = "clip\x1b]52;c;cm0gLXJmIH4=\a title\x1b]0;pwned\a clear\x1b[2J nul\x00 del\x7f c1\u009b2J bare\x1b end"

// visibleForms are how hostileText must reach the terminal: escaped, as text.
var visibleForms = []string{`\x1b]52;c;`, `\x1b]0;pwned\a`, `\x1b[2J`, `\x00`, `\u007f`, `\u009b2J`}

// checkPrintable fails the test when out holds a control character other
// than newline and tab, raw, or lacks the visible form of hostileText.
func checkPrintable(t *testing.T, what, out string) {
	t.Helper()
	noRawControl(t, what, out)
	for _, v := range visibleForms {
		if !strings.Contains(out, v) {
			t.Errorf("%s: %s not shown as text:\n%s", what, v, out)
		}
	}
}

// noRawControl fails the test when out holds a control character other
// than newline and tab, raw.
func noRawControl(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range strings.ReplaceAll(out, "\r\n", "\n") {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			t.Errorf("%s: raw control %U at byte %d: %q", what, r, i, out[max(0, i-40):min(len(out), i+40)])
			return
		}
	}
}

// hostileAnswers answers every call validly from its schema, with
// hostileText in every free text the model writes.
func hostileAnswers() openaitest.Handler {
	return func(c *openaitest.Call) openaitest.Reply {
		v, err := openaitest.Instance(c, nil)
		if err != nil {
			return openaitest.Status(400, "invalid_request_error", "", err.Error())
		}
		b, _ := json.Marshal(v)
		h, _ := json.Marshal(hostileText)
		b = []byte(strings.ReplaceAll(string(b), ` #`, string(h[1:len(h)-1])+` #`))
		var out any
		json.Unmarshal(b, &out)
		return openaitest.JSON(out)
	}
}

// TestFaultTerminalEscapeChat: a model's chat message with OSC 52, OSC 0 and
// a cleared screen is shown with them escaped, as it arrives and by /raw.
func TestFaultTerminalEscapeChat(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Always(openaitest.Content(hostileText)))
	dir := chronicleCopy(t)
	code, out, errOut := arbiterIn(t, "Hello.\n/raw 2\n/copy 2\n/quit\n", "chat", dir)
	if code != 0 {
		t.Fatalf("chat: exit %d\n%s%s", code, out, errOut)
	}
	checkPrintable(t, "chat", out)
	if strings.Count(out, `\x1b]52;c;cm0gLXJmIH4=`) < 3 {
		t.Errorf("the message, /raw and /copy (no clipboard here) should each show it escaped:\n%s", out)
	}
}

// TestFaultTerminalEscapeStory: memories and intentions a model wrote are
// stored as written and told by story (and its log lines) escaped.
func TestFaultTerminalEscapeStory(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, hostileAnswers())
	sim := demoCopy(t)
	if code, out, errOut := arbiter(t, "run", sim); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := arbiter(t, "story", sim)
	if code != 0 || !strings.Contains(out, "remembers:") {
		t.Fatalf("story: exit %d\n%s%s", code, out, errOut)
	}
	checkPrintable(t, "story", out)
	noRawControl(t, "story stderr", errOut)
}

// TestFaultTerminalEscapeErrorLine: a server's error body reaches the final
// quorum_failure line, and the log's fallback warnings, escaped.
func TestFaultTerminalEscapeErrorLine(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Always(openaitest.Status(401, "invalid_request_error", "invalid_api_key", hostileText)))
	sim := demoCopy(t)
	code, out, errOut := arbiter(t, "run", sim)
	if code != ExitModel || !strings.Contains(errOut, "arbiter: quorum_failure") || !strings.Contains(errOut, "first error:") {
		t.Fatalf("run: exit %d, want %d with the quorum_failure line\n%s%s", code, ExitModel, out, errOut)
	}
	checkPrintable(t, "stderr", errOut)
	noRawControl(t, "stdout", out)
}

// hostileTitle gives the simulation in dir a title holding hostileText,
// written with YAML's escapes as an author (or an attacker sharing the
// folder) could.
func hostileTitle(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "simulation.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A JSON string is a YAML double-quoted one, once DEL and C1 are
	// escaped too (YAML refuses them raw).
	h, _ := json.Marshal(hostileText)
	h = []byte(strings.NewReplacer("\x7f", `\x7f`, "\u009b", `\u009b`).Replace(string(h)))
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "title:") {
			l = "title: " + string(h)
		}
		lines = append(lines, l)
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}

// TestFaultTerminalEscapeStatus: a title with NUL, ESC and C1 controls in
// simulation.yaml is printed escaped by status (text and --json).
func TestFaultTerminalEscapeStatus(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	hostileTitle(t, sim)
	code, out, errOut := arbiter(t, "status", sim)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	checkPrintable(t, "status", out)
	code, out, _ = arbiter(t, "status", sim, "--json")
	var st struct{ Title string }
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Title != hostileText {
		t.Errorf("status --json: exit %d, %v, title %q: the JSON must keep the title's value", code, err, st.Title)
	}
	noRawControl(t, "status --json", out)
}

// TestFaultTerminalEscapePlayScreen: what reaches a game's screen from a
// shared file or a typed line is escaped, on a colour terminal too, where the
// kind's own colours still pass.
func TestFaultTerminalEscapePlayScreen(t *testing.T) {
	cleanEnv(t)
	dir := withSeats(t, "conquest-demo", "p1: person")
	hostileTitle(t, dir)
	io, out, errOut := TestStreams("SEND 1 FROM A TO \x1b]0;pwned\a\n\ny\n/quit\n")
	io.OutTTY, io.OutColor = true, true
	code := Execute(context.Background(), io, []string{"play", dir})
	if code != 0 {
		t.Fatalf("play: exit %d\n%s%s", code, out, errOut)
	}
	screen := strings.NewReplacer("\x1b[1m", "", "\x1b[1;31m", "", "\x1b[33m", "", "\x1b[32m", "", "\x1b[36m", "", "\x1b[0m", "").Replace(out.String())
	if !strings.Contains(screen, `\x1b]0;`) {
		t.Errorf("the typed star is not shown escaped:\n%s", screen)
	}
	noRawControl(t, "play screen", screen)
}

// TestFaultTerminalEscapeReport: `report -o -` writes the page with no raw
// control but newline and tab; the HTML file drops the C0 controls.
func TestFaultTerminalEscapeReport(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, hostileAnswers())
	sim := demoCopy(t)
	hostileTitle(t, sim)
	if code, out, errOut := arbiter(t, "run", sim); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := arbiter(t, "report", sim, "-o", "-")
	if code != 0 || !strings.Contains(out, "</html>") {
		t.Fatalf("report -o -: exit %d\n%s", code, errOut)
	}
	noRawControl(t, "report -o -", out)
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := arbiter(t, "report", sim, "-o", page); code != 0 {
		t.Fatalf("report -o file: exit %d\n%s", code, errOut)
	}
	b, _ := os.ReadFile(page)
	for i, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' {
			t.Fatalf("report file: C0 control %#x at byte %d", c, i)
		}
	}
}
