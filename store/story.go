package store

import (
	"context"
	"fmt"
	"slices"
)

// StoryRows are the narrative rows of a range of ticks, for `arbiter story`:
// each in order of tick, then of character or location (apply errors in the
// order they were recorded).
type StoryRows struct {
	Intentions  []TickIntention
	Outputs     []TickOutput
	Memories    []MemoryRecord
	ApplyErrors []TickApplyError
}

// TickIntention is a character's intention at Tick.
type TickIntention struct {
	Tick int
	IntentionRecord
}

// TickOutput is the game master's decision for a location at Tick.
type TickOutput struct {
	Tick int
	OutputRecord
}

// TickApplyError is an update the apply step of Tick skipped.
type TickApplyError struct {
	Tick int
	ApplyError
}

// Story returns the intentions, outputs, memory entries and apply errors of
// ticks from to to, both included.
func (s *Store) Story(ctx context.Context, from, to int) (_ StoryRows, err error) {
	defer markDamaged(&err)
	var out StoryRows
	err = s.scan(ctx, func(scan func(...any) error) error {
		var r TickIntention
		if err := scan(&r.Tick, &r.CharacterID, &r.Intention, &r.Fallback); err != nil {
			return err
		}
		out.Intentions = append(out.Intentions, r)
		return nil
	}, "SELECT tick, character_id, intention, fallback FROM intentions WHERE tick BETWEEN ? AND ? ORDER BY tick, character_id", from, to)
	if err == nil {
		out.Outputs, err = s.outputs(ctx, from, to)
	}
	if err == nil {
		out.Memories, err = s.memories(ctx, from, to)
	}
	if err == nil {
		err = s.scan(ctx, func(scan func(...any) error) error {
			var r TickApplyError
			if err := scan(&r.Tick, &r.LocationID, &r.CharacterID, &r.Reason); err != nil {
				return err
			}
			out.ApplyErrors = append(out.ApplyErrors, r)
			return nil
		}, "SELECT tick, location_id, character_id, reason FROM apply_errors WHERE tick BETWEEN ? AND ? ORDER BY tick, seq", from, to)
	}
	if err != nil {
		return StoryRows{}, fmt.Errorf("read ticks %d..%d: %w", from, to, err)
	}
	return out, nil
}

// outputs reads the outputs of ticks from to to, a long one from texts.
func (s *Store) outputs(ctx context.Context, from, to int) ([]TickOutput, error) {
	ref := "''"
	if s.version >= 10 {
		ref = "output_ref"
	}
	var (
		out  []TickOutput
		refs []string // of each output, "" when kept whole in its row
	)
	err := s.scan(ctx, func(scan func(...any) error) error {
		var r TickOutput
		var key string
		if err := scan(&r.Tick, &r.LocationID, &r.Output, &r.Fallback, &key); err != nil {
			return err
		}
		out, refs = append(out, r), append(refs, key)
		return nil
	}, "SELECT tick, location_id, output_json, fallback, "+ref+" FROM outputs WHERE tick BETWEEN ? AND ? ORDER BY tick, location_id", from, to)
	if err != nil {
		return nil, err
	}
	texts, err := s.textsOf(ctx, slices.DeleteFunc(slices.Clone(refs), func(r string) bool { return r == "" }))
	if err != nil {
		return nil, err
	}
	for i, key := range refs {
		if key == "" {
			continue
		}
		text, ok := texts[key]
		if !ok {
			return nil, fmt.Errorf("the output of %s at tick %d: text %s is missing", out[i].LocationID, out[i].Tick, key)
		}
		out[i].Output = text
	}
	return out, nil
}

// CallUsage is the usage of the calls of one tick, phase, entity and model.
type CallUsage struct {
	Tick      int    `json:"tick"`
	Phase     string `json:"phase"`
	EntityKey string `json:"entity_key"`
	Model     string `json:"model"` // "" for calls stored before schema version 3
	Usage
}

// UsageRows sums the calls of every committed tick per tick, phase, entity
// and model, in that order.
func (s *Store) UsageRows(ctx context.Context) (_ []CallUsage, err error) {
	defer markDamaged(&err)
	out := []CallUsage{}
	err = s.scan(ctx, func(scan func(...any) error) error {
		var u CallUsage
		if err := scan(append([]any{&u.Tick, &u.Phase, &u.EntityKey, &u.Model}, u.Usage.scanArgs()...)...); err != nil {
			return err
		}
		out = append(out, u)
		return nil
	}, "SELECT tick, phase, entity_key, model, "+s.usageColumns()+" FROM calls GROUP BY tick, phase, entity_key, model ORDER BY tick, phase, entity_key, model")
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	return out, nil
}

// scan runs query and calls row for each row it returns.
func (s *Store) scan(ctx context.Context, row func(scan func(...any) error) error, query string, args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
