package session

import "github.com/arbiter-sim/arbiter/store"

// ErrNotRegularFile is what Open returns, wrapped, when state.db (or its
// -wal or -shm file) is a link, a folder or a device: bad input that the
// person fixes, not a failure of arbiter's. errors.Is target for commands.
var ErrNotRegularFile = store.ErrNotRegularFile
