package main

import (
	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// CassetteOptions are the --record and --replay flags of the commands that
// call a model (run, chat, play).
type CassetteOptions struct {
	Record  string // --record FILE: every model call and its answer written to FILE
	Replay  string // --replay FILE: model calls answered from FILE
	Missing string // --replay-missing: "error" (the default) or "live"
}

// Values of --replay-missing.
const (
	missingError = "error"
	missingLive  = "live"
)

func addCassetteFlags(cmd *cobra.Command, o *CassetteOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Record, "record", "", "write every model call and its answer to this cassette (JSONL, appended, no credentials)")
	f.StringVar(&o.Replay, "replay", "", "answer every model call from this cassette; no endpoint is needed or contacted")
	f.StringVar(&o.Missing, "replay-missing", "", "a call the cassette has no answer for: error (the default; the run stops, exit 3, last tick kept) or live (ask the endpoint)")
}

// check says what is wrong with the flags, as a usage error.
func (o CassetteOptions) check() error {
	switch {
	case o.Record != "" && o.Replay != "":
		return usageErrorf("--record and --replay cannot be used together: a run either records a cassette or replays one")
	case o.Missing != "" && o.Missing != missingError && o.Missing != missingLive:
		return usageErrorf("--replay-missing must be %s or %s, got %q", missingError, missingLive, o.Missing)
	case o.Missing != "" && o.Replay == "":
		return usageErrorf("--replay-missing needs --replay FILE")
	}
	return nil
}

// use opens the cassette the flags ask for as the one set's model client
// goes through (a replay whose misses are errors needs no endpoint). done
// closes the cassette (a recording that recorded nothing into a file it
// created leaves no file) and returns a write that failed. A cassette that
// cannot be opened or read is a usage error naming the file (and the line).
func (o CassetteOptions) use(set *session.Settings) (done func() error, err error) {
	if set.LLM == nil || o.Record == "" && o.Replay == "" {
		return func() error { return nil }, nil
	}
	if set.Cassette, err = session.OpenCassette(o.Record, o.Replay, o.Missing == missingLive); err != nil {
		return nil, usageError(err)
	}
	return set.Cassette.Close, nil
}
