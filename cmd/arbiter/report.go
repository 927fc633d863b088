package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/report"
	"github.com/arbiter-sim/arbiter/session"
)

// ReportOptions are the inputs of `arbiter report`.
type ReportOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
	Output  string // a file, or "-" for stdout
}

func newReportCmd(io *IOStreams, g *globals, runF func(context.Context, *ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "report <simulation-dir> -o <file.html>",
		Short: "Write the run as one self-contained HTML page: timeline, paths, calls, boards",
		Long: `report writes what a run did as one HTML file that needs nothing else (no
script, no remote font or image): the model calls per phase and tick (tokens,
latency, failed calls, fallbacks) as plots, and the kind's own part (below).
The file is replaced whole or not at all; -o - writes the page to stdout.
With --json, what was written: {"path", "bytes", "ticks"} (not with -o -).

The kind's own part of the page, by kind:
` + session.Help("report"),
		Example: "  arbiter report simulations/demo-sim -o report.html",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Output == "" {
				return usageErrorf("-o: say where to write the page (-o report.html, or -o - for stdout)")
			}
			if opts.Output == "-" && g.json {
				return usageErrorf("--json with -o -: stdout holds the page; write it to a file (-o report.html) to have --json say what was written")
			}
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReport(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "the HTML file to write (- for stdout)")
	return cmd
}

func runReport(ctx context.Context, opts *ReportOptions) error {
	if opts.Output != "-" {
		if err := checkOutput("-o", opts.Output, "report.html"); err != nil {
			return usageError(err)
		}
	}
	s, err := openRead(ctx, opts.Globals, opts.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := report.Build(ctx, s)
	if err != nil {
		return err
	}
	if opts.Output == "-" {
		page, err := report.Render(rep)
		if err != nil {
			return err
		}
		_, err = opts.IO.Out.Write(page)
		return err
	}
	size, err := report.WriteFile(opts.Output, rep)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, reportWritten{Path: opts.Output, Bytes: size, Ticks: rep.LastTick})
	}
	fmt.Fprintf(opts.IO.ErrOut, "wrote %s (%s, %s)\n", opts.Output, plural(rep.LastTick, rep.Unit), byteSize(size))
	return nil
}

// reportWritten is what report --json says of the page it wrote.
type reportWritten struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	Ticks int    `json:"ticks"` // the ticks (or turns) the page shows
}

// checkOutput refuses, before any work, a path that cannot take a file:
// a folder, or a file in a folder that does not exist. example is the file
// name the message suggests when path is a folder.
func checkOutput(flag, path, example string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: is a folder; name the file to write (e.g. %s)", flag, path, filepath.Join(path, example))
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: folder %s does not exist", flag, path, dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s: %s is not a folder", flag, path, dir)
	}
	return nil
}

// byteSize prints a size for people: 812 B, 35.2 KB, 1.4 MB.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}
