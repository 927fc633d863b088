package session

import (
	"context"
	"fmt"
	"os"
)

// ImportedSuffix is added to a saved game's file (Importer) once
// the game is imported into state.db; the file is kept, renamed, as a
// backup.
const ImportedSuffix = ".imported"

// savedGame is the game an earlier version saved beside the authored
// files (Importer), nil when there is none or the kind saved none.
func (s *Session) savedGame() (*Saved, error) {
	if im, ok := s.Kind.(Importer); ok {
		return im.Saved(s.Dir)
	}
	return nil, nil
}

// importSaved makes a game that an earlier version saved in a file the
// first turn of a simulation that has none, then renames the file so it
// is imported once. A simulation that already has turns leaves the file
// alone (and says so in the log).
func (s *Session) importSaved(ctx context.Context) error {
	saved, err := s.savedGame()
	if err != nil {
		return &InputError{Err: err}
	}
	if saved == nil {
		return nil
	}
	if s.LastTick() > 0 {
		if s.settings.Logger != nil {
			s.settings.Logger.Warn(fmt.Sprintf("%s was not imported: the %s already has %d turns in state.db", saved.Path, s.Sim.Kind, s.LastTick()))
		}
		return nil
	}
	if _, err := s.runner.Turn(ctx, saved.Move); err != nil {
		return &InputError{Err: fmt.Errorf("importing %s: %w", saved.Path, err)}
	}
	return os.Rename(saved.Path, saved.Path+ImportedSuffix)
}
