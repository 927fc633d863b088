package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport: `arbiter report` writes the page of a run to a file, whole,
// and says so on stderr; -o - writes it to stdout.
func TestReport(t *testing.T) {
	cleanEnv(t)
	sim := gameCopy(t, "conquest-demo")
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "3"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(out, []byte("an older report"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut := arbiter(t, "report", sim, "-o", out)
	if code != 0 || stdout != "" || !strings.HasPrefix(errOut, "wrote "+out+" (3 turns, ") {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!DOCTYPE html>", "<h1>The Rim Wars</h1>", `<h3>Turn 3<span class="run">run 1</span></h3>`, "</html>\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("%d files beside the report, want it alone (no temporary file left)", len(entries))
	}

	code, stdout, errOut = arbiter(t, "report", sim, "-o", "-")
	if code != 0 || stdout != page || errOut != "" {
		t.Errorf("report -o -: exit %d, %d bytes on stdout (want the %d of the file), stderr %q", code, len(stdout), len(page), errOut)
	}
}

// TestReportOfANarrative: a narrative's page counts ticks, as its kind
// calls them (a game's counts turns).
func TestReportOfANarrative(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if code, _, errOut := arbiter(t, "report", sim, "-o", out); code != 0 || !strings.HasPrefix(errOut, "wrote "+out+" (2 ticks, ") {
		t.Errorf("report: exit %d, stderr %q", code, errOut)
	}
}

// TestReportErrors: each way the command can be misused is one message
// naming what is wrong, exit 2, and no file written.
func TestReportErrors(t *testing.T) {
	cleanEnv(t)
	fresh := demoCopy(t)
	tmp := t.TempDir()
	notDir := filepath.Join(tmp, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no -o", []string{"report", fresh}, "-o: say where to write the page"},
		{"never run", []string{"report", fresh, "-o", filepath.Join(tmp, "r.html")}, "no tick committed yet, nothing to report; run it first (`arbiter run " + fresh + "`)"},
		{"a folder", []string{"report", fresh, "-o", tmp}, "-o " + tmp + ": is a folder"},
		{"missing folder", []string{"report", fresh, "-o", filepath.Join(tmp, "no", "r.html")}, "folder " + filepath.Join(tmp, "no") + " does not exist"},
		{"not a folder", []string{"report", fresh, "-o", filepath.Join(notDir, "r.html")}, notDir + " is not a folder"},
		{"no simulation", []string{"report", filepath.Join(tmp, "nowhere"), "-o", filepath.Join(tmp, "r.html")}, "nowhere"},
		{"two args", []string{"report", fresh, fresh, "-o", "x.html"}, "takes 1 argument, got 2"},
	} {
		code, stdout, errOut := arbiter(t, tc.args...)
		if code != ExitUsage || stdout != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.name, code, stdout, errOut, tc.want)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("%d entries in the output folder, want only the file the test made", len(entries))
	}
}

// TestReportFlags: the flags reach the options.
func TestReportFlags(t *testing.T) {
	t.Parallel()
	var got *ReportOptions
	io, _, _ := TestStreams("")
	cmd := newReportCmd(io, &globals{}, func(_ context.Context, o *ReportOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"sims/a", "--output", "out.html"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Dir != "sims/a" || got.Output != "out.html" {
		t.Errorf("options = %+v", got)
	}
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{812: "812 B", 35200: "35.2 KB", 1_400_000: "1.4 MB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
