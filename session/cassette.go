package session

import "github.com/arbiter-sim/arbiter/llm"

// OpenCassette opens the cassette that stands in for the endpoint of a
// session (Settings.Cassette): with record set, every model call and its
// answer are appended to that file; with replay set, calls are answered
// from that file, and a call it has no answer for is asked of the endpoint
// when live, else fails. Close it after the session: a recording that
// recorded nothing into a file it created leaves no file. A file that
// cannot be opened or read is an error naming it (and the line).
func OpenCassette(record, replay string, live bool) (*llm.Cassette, error) {
	if record != "" {
		return llm.RecordCassette(record)
	}
	return llm.ReplayCassette(replay, live)
}
