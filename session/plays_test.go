package session

import (
	"context"
	"slices"
	"testing"

	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// core is a kind with nothing but what every kind must do.
type core struct{}

func (core) Kind() string                                                      { return "core" }
func (core) Load(context.Context, *store.Store, int) (any, error)              { return nil, nil }
func (core) Step(context.Context, *runner.Tick, any, any) (any, error)         { return nil, nil }
func (core) Encode(*store.TickRecord, any, any) error                          { return nil }
func (core) Export(context.Context, *store.Store, any) (any, error)            { return nil, nil }
func (core) Status(context.Context, *store.Store, any) ([]runner.Field, error) { return nil, nil }
func (core) Manifest() ManifestPart                                            { return ManifestPart{} }

type tabled struct{ core }

func (tabled) Table(bool) *Table { return &Table{} }

type chatted struct{ tabled }

func (chatted) Chat() Chat { return nil }

// TestPlaysFollowsTheOptionalInterfaces: the commands that play a kind
// and the sentence saying how come from what it implements, not from a
// list it keeps.
func TestPlaysFollowsTheOptionalInterfaces(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		want []string
		how  string
	}{
		{core{}, []string{"run"}, "`arbiter run d` runs its ticks"},
		{tabled{}, []string{"run", "play"}, "`arbiter run d` plays its model and bot seats; `arbiter play d` seats a person"},
		{chatted{}, []string{"chat"}, "it is played in turns with a person: `arbiter chat d`"},
	} {
		if got := Plays(tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("Plays(%T) = %v, want %v", tc.k, got, tc.want)
		}
		if got := how("d", tc.k); got != tc.how {
			t.Errorf("how(%T) = %q, want %q", tc.k, got, tc.how)
		}
	}
	s := &Session{Dir: "d", Kind: core{}}
	if s.Table(false) != nil || s.Chat() != nil {
		t.Error("a kind with no table and no chat has one")
	}
	if part, err := s.ReportPart(t.Context()); err != nil || part.Unit != "tick" {
		t.Errorf("ReportPart of a kind with none: %+v, %v", part, err)
	}
	if saved, err := s.savedGame(); saved != nil || err != nil {
		t.Errorf("savedGame of a kind that saves none: %v, %v", saved, err)
	}
}
