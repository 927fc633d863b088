package chronicle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/world"
)

// FileName is where arbiter before state.db saved a chronicle, in the
// simulation folder; such a file is imported once as the first turn.
const FileName = "chronicle.json"

// fileVersion is the version of that file's format.
const fileVersion = 1

// file is the JSON document of a saved chronicle: the timeline (derived,
// written for people and tools) and the conversation (the record it is
// derived from).
type file struct {
	Version int `json:"version"`
	Timeline
	Messages []Message `json:"messages"`
}

// ReadTimeline reads a timeline from JSON: a bare timeline, or a whole
// chronicle file (its messages are ignored). Unknown fields are errors, so
// that a misspelt field is not silently dropped, and so is any
// inconsistency found by Timeline.Validate.
func ReadTimeline(r io.Reader) (Timeline, error) {
	var f file
	if err := decodeStrict(r, &f); err != nil {
		return Timeline{}, err
	}
	if err := f.Validate(); err != nil {
		return Timeline{}, err
	}
	return f.Timeline.normalized(), nil
}

func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, err)
		}
		if errors.Is(err, io.EOF) {
			return errors.New("empty file: want a JSON object")
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// maxSaved is the largest chronicle.json read: a saved conversation, far
// larger than an authored file may be.
const maxSaved = 64 << 20

// ReadSaved reads the game that an earlier version of arbiter saved in
// path (a chronicle.json): its conversation, as the first turn of a
// chronicle to Import. The timeline in the file is derived and checked
// again when the conversation is replayed.
func ReadSaved(path string) (*State, error) {
	b, err := world.ReadFileUpTo(filepath.Dir(path), path, maxSaved)
	if errors.Is(err, world.ErrFile) {
		return nil, fmt.Errorf("%s: not read: %w", path, err)
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := decodeStrict(bytes.NewReader(b), &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("%s: version %d is not %d, the version this arbiter reads", path, f.Version, fileVersion)
	}
	if f.Messages == nil {
		f.Messages = []Message{}
	}
	return &State{Timeline: f.Timeline.normalized(), Messages: f.Messages}, nil
}
