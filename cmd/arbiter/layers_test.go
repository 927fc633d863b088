package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/arbiter-sim/arbiter/"

// TestCLIImportsFiveProjectPackages: the CLI is a thin face over the
// session layer: it names at most five of the project's packages, besides
// the blank imports of kinds.go that register the kinds it plays.
func TestCLIImportsFiveProjectPackages(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			blank := imp.Name != nil && imp.Name.Name == "_"
			if pkg, ok := strings.CutPrefix(path, module); ok && !(blank && f == "kinds.go") && !slices.Contains(named, pkg) {
				named = append(named, pkg)
			}
		}
	}
	slices.Sort(named)
	var counted []string
	for _, pkg := range named {
		if !slices.Contains(importsLeft, pkg) {
			counted = append(counted, pkg)
		}
	}
	if len(counted) > 5 || len(counted) == 0 {
		t.Errorf("the CLI imports %d project packages, want at most 5: %s", len(counted), strings.Join(counted, ", "))
	}
	for _, pkg := range importsLeft {
		if !slices.Contains(named, pkg) {
			t.Errorf("the CLI no longer imports %s: take it out of importsLeft", pkg)
		}
	}
}

// importsLeft are the project packages the CLI imports beyond the five
// until they go behind the session layer. The test fails when one is no
// longer imported, so the list only shrinks; it is empty now.
var importsLeft []string

// kindName is what names one of this module's kinds or its part of the
// configuration: the kinds' names, their sections' keys, their packages.
var kindName = regexp.MustCompile(`(?i)\b(narratives?|chronicles?|conquests?|duels?)\b|\bgames\.|\bphases\.(intention|resolution|<)|arbiter/(phases|games)`)

// kindNamesLeft are the lines of the shared layers that still name a
// kind, by file: the test fails on any more of them, and on fewer (lower
// the count), until none is left.
var kindNamesLeft = map[string]int{
	"cmd/arbiter/arena.go": 6, "cmd/arbiter/bench.go": 2, "cmd/arbiter/chatcmd.go": 3,
	"cmd/arbiter/evalcmd.go": 2, "cmd/arbiter/export.go": 2, "cmd/arbiter/kindcmds.go": 1,
	"cmd/arbiter/play.go": 1, "cmd/arbiter/promptscmd.go": 2, "cmd/arbiter/report.go": 2,
	"cmd/arbiter/root.go": 2, "cmd/arbiter/story.go": 3, "cmd/arbiter/trycmd.go": 2,
	"cmd/arbiter/usage.go": 1, "session/context.go": 1, "session/ending.go": 1, "session/page.go": 4, "session/prompts.go": 1,
	"session/request.go": 2, "session/saved.go": 1, "session/session.go": 7, "session/story.go": 6,
	"session/tool.go": 2, "session/try.go": 3, "report/build.go": 2, "report/doc.go": 1, "report/report.go": 4,
}

// TestSharedLayersNameNoKind: the CLI, the session layer, the report and
// world hold every kind through the registry, so their source (tests
// aside) names none: not a kind, not its section of the configuration
// (chronicle.window, games.model), not its package, save the registration
// lines of cmd/arbiter/kinds.go. The lines that still do are counted in
// kindNamesLeft.
func TestSharedLayersNameNoKind(t *testing.T) {
	got := map[string]int{}
	for _, dir := range []string{"cmd/arbiter", "session", "report", "world"} {
		files, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			rel, _ := filepath.Rel(repoRoot, path)
			if strings.HasSuffix(path, "_test.go") || rel == "cmd/arbiter/kinds.go" {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(src), "\n") {
				if kindName.MatchString(line) {
					got[rel]++
				}
			}
		}
	}
	for file, n := range got {
		if n > kindNamesLeft[file] {
			t.Errorf("%s: %d lines name a kind, %d allowed: reach the kind through the registry (session.Kind, its optional interfaces, its Section)", file, n, kindNamesLeft[file])
		}
	}
	for file, n := range kindNamesLeft {
		if got[file] < n {
			t.Errorf("%s: %d lines name a kind, fewer than the %d counted: lower kindNamesLeft", file, got[file], n)
		}
	}
	if !kindName.MatchString("chronicle.window") || !kindName.MatchString(`"github.com/arbiter-sim/arbiter/games/duel"`) || kindName.MatchString("the phases of a tick") {
		t.Error("kindName does not match what it must")
	}
}
