package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/games/chronicle"
)

// ImportedSuffix is added to a chronicle.json once its game is imported
// into state.db; the file is kept, renamed, as a backup.
const ImportedSuffix = ".imported"

// readSaved reads the chronicle.json an earlier version saved in dir; nil
// when there is none.
func readSaved(dir string) (*chronicle.State, error) {
	st, err := chronicle.ReadSaved(filepath.Join(dir, chronicle.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return st, err
}

// importSaved makes a chronicle.json of an earlier version the first turn
// of a chronicle that has none, then renames the file so it is imported
// once. A chronicle that already has turns leaves the file alone (and says
// so in the log).
func (s *Session) importSaved(ctx context.Context) error {
	path := filepath.Join(s.Dir, chronicle.FileName)
	saved, err := readSaved(s.Dir)
	if err != nil {
		return &InputError{Err: err}
	}
	if saved == nil {
		return nil
	}
	if s.LastTick() > 0 {
		if s.settings.Logger != nil {
			s.settings.Logger.Warn(fmt.Sprintf("%s was not imported: the chronicle already has %d turns in state.db", path, s.LastTick()))
		}
		return nil
	}
	if _, err := s.runner.Turn(ctx, chronicle.Import{State: saved}); err != nil {
		return &InputError{Err: fmt.Errorf("importing %s: %w", path, err)}
	}
	return os.Rename(path, path+ImportedSuffix)
}
