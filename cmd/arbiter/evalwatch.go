package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/arbiter-sim/arbiter/eval"
	"github.com/arbiter-sim/arbiter/session"
)

// watchEval runs the eval, then again each time a template file of the
// simulation or of a variant, or the suite, changes, until interrupted.
// Answers of an unchanged variant come from the cache, so a rerun asks
// only the calls whose prompts changed.
func watchEval(ctx context.Context, opts *EvalOptions) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	for {
		res, err := evalOnce(ctx, opts)
		if ctx.Err() != nil {
			return watchEnded
		}
		if res != nil {
			if werr := writeEvalOutputs(opts, res); werr != nil {
				return werr
			}
		}
		if err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "arbiter: %v\n", err)
		}
		watchFolders(w, opts)
		fmt.Fprintln(opts.IO.ErrOut, "eval --watch: waiting for a template or the suite to change (Ctrl-C ends)")
		if err := nextChange(ctx, w); ctx.Err() != nil {
			return watchEnded
		} else if err != nil {
			return err
		}
	}
}

// watchEnded is how --watch ends: interrupted (Ctrl-C), exit 130.
var watchEnded = fmt.Errorf("%w: eval --watch ended; the answers are kept in %s", session.ErrInterrupted, eval.DBFile)

// watchFolders watches the suite's folder, the simulation's prompts/ and
// every variant's templates.
func watchFolders(w *fsnotify.Watcher, opts *EvalOptions) {
	dirs := []string{filepath.Dir(eval.SuiteFile(opts.Dir, opts.Suite)), filepath.Join(opts.Dir, "prompts")}
	if s, err := session.Load(opts.Dir, session.Settings{}); err == nil {
		if phases, err := s.CallPhases(); err == nil {
			if suite, err := eval.LoadSuite(eval.SuiteFile(opts.Dir, opts.Suite), phases, s.KindAssertions()); err == nil {
				for _, v := range suite.Variants {
					dirs = append(dirs, v.Templates...)
				}
			}
		}
	}
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			_ = w.Add(d) // a folder already watched is fine
		}
	}
}

// nextChange waits for a write, creation, removal or rename, then for the
// burst of events an editor's save makes to settle.
func nextChange(ctx context.Context, w *fsnotify.Watcher) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-w.Errors:
			return err
		case ev := <-w.Events:
			if ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Remove|fsnotify.Rename) == 0 || !authored(ev.Name) {
				continue
			}
			settle := time.NewTimer(200 * time.Millisecond)
			for quiet := false; !quiet; {
				select {
				case <-ctx.Done():
					settle.Stop()
					return ctx.Err()
				case <-w.Events:
				case <-settle.C:
					quiet = true
				}
			}
			return nil
		}
	}
}

// authored: a change to name is one an author made (a template, the
// suite), not a database beside them.
func authored(name string) bool {
	switch filepath.Ext(name) {
	case ".md", ".yaml", ".yml":
		return true
	}
	return false
}
