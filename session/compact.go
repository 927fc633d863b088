package session

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/arbiter-sim/arbiter/internal/filelock"
	"github.com/arbiter-sim/arbiter/store"
)

// Compact drops from the run state of the simulation in dir the prompt and
// answer texts of every tick but the last keep, keeping every count,
// token, cost, state and story (store.Compact); depth is how many past
// exchanges per entity a resumed run sends back (llm.depth), which are
// kept whatever their tick. It takes the simulation's lock, so it is
// refused (ErrInUse) while a run or a chat holds it.
func Compact(ctx context.Context, dir string, keep, depth int) (store.Compacted, error) {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return store.Compacted{}, &InputError{Err: fmt.Errorf("%s: no such simulation folder", dir)}
	case !fi.IsDir():
		return store.Compacted{}, &InputError{Err: fmt.Errorf("%s: not a folder (compact takes a simulation's folder)", dir)}
	}
	unlock, err := filelock.TryLock(dir)
	if errors.Is(err, filelock.ErrLocked) {
		return store.Compacted{}, fmt.Errorf("%s is %w", dir, ErrInUse)
	}
	if err != nil {
		return store.Compacted{}, err
	}
	defer unlock()
	if _, err := os.Lstat(StatePath(dir)); err != nil {
		return store.Compacted{}, &InputError{Err: fmt.Errorf("%s: no run state to compact (no state.db)", dir)}
	}
	st, err := store.Open(ctx, StatePath(dir))
	if err != nil {
		return store.Compacted{}, err
	}
	c, err := st.Compact(ctx, keep, depth)
	return c, errors.Join(err, st.Close())
}

// TextsDroppedThrough is the last tick whose prompt and answer texts
// `arbiter compact` dropped, 0 when it dropped none (or nothing is stored).
func (s *Session) TextsDroppedThrough(ctx context.Context) (int, error) {
	if s.store == nil {
		return 0, nil
	}
	return s.store.TextsDroppedThrough(ctx)
}
