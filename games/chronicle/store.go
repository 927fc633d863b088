package chronicle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the chronicle's state file in the simulation folder.
const FileName = "chronicle.json"

// fileVersion is the version of the file format.
const fileVersion = 1

// file is the JSON document of a chronicle: the timeline (derived, written
// for people and tools) and the conversation (the record it is derived
// from).
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

// load reads the chronicle file at path; a missing file is an empty one.
func load(path string) (file, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return file{Version: fileVersion}, nil
	}
	if err != nil {
		return file{}, err
	}
	var f file
	if err := decodeStrict(bytes.NewReader(b), &f); err != nil {
		return file{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != fileVersion {
		return file{}, fmt.Errorf("%s: version %d is not %d, the version this arbiter reads", path, f.Version, fileVersion)
	}
	return f, nil
}

// save writes f to path atomically: a temporary file in the same folder,
// synced, then renamed over the old one, so a crash leaves the old file or
// the new one and never half of either.
func save(path string, f file) (err error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(append(b, '\n')); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil { // make the rename durable where the OS allows it
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
