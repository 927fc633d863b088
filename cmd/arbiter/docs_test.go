package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// docLine is one command of a shell block of a page: its line and text,
// continuation lines joined.
type docLine struct {
	page string
	line int
	text string
}

// docCommands returns the commands of the ```sh blocks of a Markdown page:
// a line ending in a backslash goes on with the next; blank lines and
// comment lines are left out.
func docCommands(page string, src string) ([]docLine, error) {
	var out []docLine
	var cur *docLine
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			if fenced && cur != nil {
				return nil, errors.New(page + ": a shell block ends inside a continued line")
			}
			fenced = !fenced && strings.TrimSpace(strings.TrimPrefix(line, "```")) == "sh"
			continue
		case !fenced:
			continue
		}
		text := strings.TrimSpace(line)
		if cur == nil && (text == "" || strings.HasPrefix(text, "#")) {
			continue
		}
		if cur == nil {
			cur = &docLine{page: page, line: n}
		} else {
			cur.text += " "
		}
		body, more := strings.CutSuffix(text, `\`)
		cur.text += strings.TrimSpace(body)
		if !more {
			out = append(out, *cur)
			cur = nil
		}
	}
	return out, sc.Err()
}

func TestDocCommands(t *testing.T) {
	src := "text\n```sh\n# a comment\nbin/arbiter run x \\\n  -n 3   # three\n\necho a | b\n```\n```yaml\nkey: v\n```\n```\nplain\n```\n"
	got, err := docCommands("p.md", src)
	want := []docLine{{"p.md", 4, "bin/arbiter run x -n 3   # three"}, {"p.md", 7, "echo a | b"}}
	if err != nil || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("docCommands: %+v, %v; want %+v", got, err, want)
	}
	if _, err := docCommands("p.md", "```sh\nbin/arbiter run x \\\n```\n"); err == nil {
		t.Error("a block ending inside a continued line: no error")
	}
}

// notRunHere are the commands of the pages that this test does not run,
// each with the reason; every other command runs.
var notRunHere = []struct {
	match  *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`^scripts/`), "the project's scripts: .ci/run runs them, and this test is part of scripts/test.sh"},
	{regexp.MustCompile(`^go build -o bin/arbiter`), "the test builds bin/arbiter so itself"},
	{regexp.MustCompile(`OPENAI_BASE_URL=http://127\.0\.0\.1:11434`), "needs an Ollama server of your own"},
	{regexp.MustCompile(`^parallel `), "needs GNU parallel and, with -S, the machines it names"},
	{regexp.MustCompile(`bench --characters 1000 `), "a benchmark of a 1,000-character world: minutes of CPU"},
}

// docExit is the exit code a page's command is expected to end with when
// no one answers on its standard input: a game a person plays ends with its
// input (130); everything else succeeds.
func docExit(cmd string) int {
	if regexp.MustCompile(`bin/arbiter play `).MatchString(cmd) {
		return ExitInterrupted
	}
	return 0
}

// TestDocsRunAsWritten: every command of a shell block of README.md and
// docs/*.md runs as written, in the page's order, from a folder holding a
// copy of the repository's simulations, schemas and config.yaml with
// bin/arbiter built, against the in-process model server (through
// OPENAI_BASE_URL, as a reader's own endpoint), and ends as docExit says.
// Each page starts from fresh copies.
func TestDocsRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds arbiter and runs every command of the docs")
	}
	bin := buildArbiter(t)
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	pages = append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
	cleanEnv(t)
	fakeModel(t, nil)
	t.Setenv("EDITOR", "true") // the pages' "$EDITOR file" edits nothing
	for _, page := range pages {
		rel, _ := filepath.Rel(repoRoot, page)
		t.Run(rel, func(t *testing.T) {
			src, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			cmds, err := docCommands(rel, string(src))
			if err != nil {
				t.Fatal(err)
			}
			work := docsWorkspace(t, bin)
			for _, c := range cmds {
				runDocCommand(t, work, c)
			}
		})
	}
}

// runDocCommand runs one command of a page by bash in work, unless
// notRunHere lists it, and fails the test when it ends otherwise than
// docExit says.
func runDocCommand(t *testing.T, work string, c docLine) {
	t.Helper()
	for _, n := range notRunHere {
		if n.match.MatchString(c.text) {
			t.Logf("%s:%d: not run here (%s): %s", c.page, c.line, n.reason, c.text)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", c.text)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s:%d: %v", c.page, c.line, err)
	}
	if want := docExit(c.text); code != want {
		t.Errorf("%s:%d: exit %d, want %d: %s\n%s", c.page, c.line, code, want, c.text, out)
	}
}

// docsWorkspace is a folder laid out as the repository is for a reader:
// bin/arbiter, simulations/ without run state, schemas/*.schema.json and
// config.yaml.
func docsWorkspace(t *testing.T, bin string) string {
	t.Helper()
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "simulations"), os.DirFS(filepath.Join(repoRoot, "simulations"))); err != nil {
		t.Fatal(err)
	}
	runState, _ := filepath.Glob(filepath.Join(work, "simulations", "*", "*.db*"))
	for _, f := range runState {
		os.Remove(f)
	}
	schemas, _ := filepath.Glob(filepath.Join(repoRoot, "schemas", "*.schema.json"))
	files := map[string]string{bin: "bin/arbiter", filepath.Join(repoRoot, "config.yaml"): "config.yaml"}
	for _, s := range schemas {
		files[s] = filepath.Join("schemas", filepath.Base(s))
	}
	for from, to := range files {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		to = filepath.Join(work, to)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// names a file that exists and, with #anchor, a heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	pages = append(pages, filepath.Join(repoRoot, "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(src), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") {
				continue
			}
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), target)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, m[1], err)
				continue
			}
			if anchor != "" && !slices.Contains(headingAnchors(string(b)), anchor) {
				t.Errorf("%s: link %s: no such heading in %s", page, m[1], target)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives the headings of a page:
// lower case, spaces to hyphens, punctuation other than hyphens dropped.
func headingAnchors(src string) []string {
	var out []string
	fenced := false
	for line := range strings.SplitSeq(src, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range text {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestDemoEndsWithTheStory: scripts/demo.sh, run as written against the
// in-process model server (its build stood in for by a go that does
// nothing, bin/arbiter being built already), ends with the story of the
// last tick, each location's moment and who did what, then one line
// pointing at story, report and status.
func TestDemoEndsWithTheStory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds arbiter and runs scripts/demo.sh")
	}
	bin := buildArbiter(t)
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cleanEnv(t)
	fakeModel(t, nil)
	work := docsWorkspace(t, bin)
	stub := t.TempDir()
	for name, body := range map[string]string{
		filepath.Join(work, "scripts", "demo.sh"): string(script),
		filepath.Join(stub, "go"):                 "#!/bin/sh\nexit 0\n",
	} {
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", stub+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd := exec.Command("scripts/demo.sh")
	cmd.Dir = work
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo.sh: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	_, story, found := strings.Cut(out, "tick 3 committed")
	wantEnd := "\nMore: bin/arbiter story simulations/demo-sim (every tick), bin/arbiter report simulations/demo-sim -o report.html (a page of the run), bin/arbiter status simulations/demo-sim (calls, tokens, what the run ran with)\n"
	if !found || !strings.HasSuffix(out, wantEnd) || !strings.Contains(story, "\ntick 3\n") || strings.Contains(story, "tick 2\n") ||
		strings.Contains(out, "model calls:") {
		t.Errorf("demo.sh does not end with tick 3's story and the line pointing on:\n%s", out)
	}
	for _, place := range []string{"Sallow Wharf (wharf): ", "intends:"} {
		if !strings.Contains(story, place) {
			t.Errorf("the demo's story lacks %q:\n%s", place, story)
		}
	}
}
