package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/session"
)

// tickRuns names, for each committed tick, the run that committed it and,
// when it called a model, the prompt templates it rendered with: "run 2 · templates: prompts/
// (phase1_intention_system.md)". A tick run again after a rollback is the
// later run's.
func tickRuns(ctx context.Context, s *session.Session) (map[int]string, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, r := range runs {
		label := fmt.Sprintf("run %d", r.Run)
		// The templates of a run without a model (a game of bots) made
		// no call: they are not named.
		if m, err := r.Manifest(); err == nil && len(m.Templates) > 0 && len(m.Models) > 0 {
			label += " · " + templateSet(s.Dir, m.Templates)
		}
		for t := r.FirstTick; t <= r.LastTick; t++ {
			out[t] = label
		}
	}
	return out, nil
}

// templateSet names the templates a run rendered: "default templates", or
// by the folders whose files stood in for the defaults (a simulation's
// prompts/, an eval variant's folder, by name) and the files: "templates:
// prompts/ (phase1_intention_system.md)".
func templateSet(dir string, files []manifest.File) string {
	var folders []string
	byFolder := map[string][]string{}
	for _, f := range files {
		if f.Source == "default" || f.Source == "" {
			continue
		}
		name := folderName(dir, filepath.Dir(f.Source))
		if _, ok := byFolder[name]; !ok {
			folders = append(folders, name)
		}
		byFolder[name] = append(byFolder[name], f.Name)
	}
	if len(folders) == 0 {
		return "default templates"
	}
	parts := make([]string, len(folders))
	for i, name := range folders {
		slices.Sort(byFolder[name])
		parts[i] = fmt.Sprintf("%s (%s)", name, strings.Join(byFolder[name], ", "))
	}
	return "templates: " + strings.Join(parts, "; ")
}

// folderName is a folder of templates as the page names it: its path in
// the simulation's folder dir ("prompts/"), else its own name ("terse/",
// an eval variant's).
func folderName(dir, folder string) string {
	if absDir, err := filepath.Abs(dir); err == nil {
		if absFolder, err := filepath.Abs(folder); err == nil {
			if rel, err := filepath.Rel(absDir, absFolder); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel) + "/"
			}
		}
	}
	return filepath.Base(folder) + "/"
}
