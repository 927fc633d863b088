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

// TestSharedLayersNameNoKind: the CLI, the session layer, the report and
// world hold every kind through the registry, so their source (tests
// aside) names none: not a kind, not its section of the configuration
// (chronicle.window, games.model), not its package, save the registration
// lines of cmd/arbiter/kinds.go. What a command's help says of a kind, the
// kind says (session.Helper).
func TestSharedLayersNameNoKind(t *testing.T) {
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
			for i, line := range strings.Split(string(src), "\n") {
				if kindName.MatchString(line) {
					t.Errorf("%s:%d names a kind: reach it through the registry (session.Kind, its optional interfaces, its Section): %s", rel, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
	if !kindName.MatchString("chronicle.window") || !kindName.MatchString(`"github.com/arbiter-sim/arbiter/games/duel"`) || kindName.MatchString("the phases of a tick") {
		t.Error("kindName does not match what it must")
	}
}
