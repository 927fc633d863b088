package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// issueNumber is how history cites an issue: "issue 27", "(issue 22 item 7)",
// "issues 12, 23", "Issue #4".
var issueNumber = regexp.MustCompile(`(?i)\bissues?\s+#?[0-9]`)

// sourceProblems is what the product's text in file name breaks of the
// rules a reader relies on: a heading of a page (README.md, docs/*.md) or a comment of a Go file
// (not a test) that names an issue number (the text says the rule, not its
// history), and a Go function with five results or more (they return a
// struct).
func sourceProblems(name string, src []byte) ([]string, error) {
	var out []string
	if isPage(name) {
		fenced := false
		sc := bufio.NewScanner(bytes.NewReader(src))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(line, "```") {
				fenced = !fenced
			}
			if !fenced && strings.HasPrefix(line, "#") && issueNumber.MatchString(line) {
				out = append(out, fmt.Sprintf("%s:%d: a heading names an issue: %s", name, n, line))
			}
		}
		return out, sc.Err()
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if issueNumber.MatchString(c.Text) {
				out = append(out, fmt.Sprintf("%s: a comment names an issue: %s", fset.Position(c.Pos()), c.Text))
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok && ft.Results.NumFields() >= 5 {
			out = append(out, fmt.Sprintf("%s: a function returns %d values, not a struct", fset.Position(ft.Pos()), ft.Results.NumFields()))
		}
		return true
	})
	return out, nil
}

// isPage says whether the file at rel (from the repository's root) is a
// page a reader reads: a README.md anywhere, or a page of docs/.
func isPage(rel string) bool {
	return filepath.Base(rel) == "README.md" || (filepath.Dir(rel) == "docs" && strings.HasSuffix(rel, ".md"))
}

func TestSourceProblems(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"README.md", "# Arbiter\n## Scaling out (issue 27)\ntext citing issue 12 is not a heading\n", 1},
		{"README.md", "```sh\n# issue 3 in a shell comment\n```\n## Batch mode\n", 0},
		{"docs/scaling.md", "# Scaling out\n## Batch mode (issue 27 item 2)\n", 1},
		{"prompts/README.md", "# Prompts\n## Data (issue 9)\n", 1},
		{"x.go", "package x\n\n// Run does it (issue 22 item 7).\nfunc Run() {}\n", 1},
		{"x.go", "package x\n\n/* Issues 12, 23 */\nvar s = \"issue 4\" // a string may\n", 1},
		{"x.go", "package x\n\nfunc f() (a, b, c, d int, err error) { return }\n", 1},
		{"x.go", "package x\n\nvar g func() (int, int, int, int, error)\n", 1},
		{"x.go", "package x\n\n// seed 002 retries once.\nfunc f() (int, int, int, error) { return 0, 0, 0, nil }\n", 0},
	} {
		got, err := sourceProblems(tc.name, []byte(tc.src))
		if err != nil || len(got) != tc.want {
			t.Errorf("%s %q: %q, %v; want %d problems", tc.name, tc.src, got, err, tc.want)
		}
	}
}

// TestNoHistoryInTheProduct: no heading of a page and no comment of a Go file
// other than a test names an issue number, and no function returns five
// values. Test names and BENCHMARKS.md, a log of measurements, may.
func TestNoHistoryInTheProduct(t *testing.T) {
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if !isPage(rel) && (!strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		problems, err := sourceProblems(rel, src)
		for _, p := range problems {
			t.Error(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
