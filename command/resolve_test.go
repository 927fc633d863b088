package command

import (
	"errors"
	"fmt"
	"testing"
)

// periods is a check that accepts events in the named periods and, for
// AFTER, the named events.
func periods(known map[string][]string) func(Command) error {
	return func(c Command) error {
		events, ok := known[c.Get("period")]
		if !ok {
			return &Error{Kind: Reference, Reason: fmt.Sprintf("Parent period %q not found", c.Get("period"))}
		}
		if a := c.Get("after"); a != "" {
			for _, e := range events {
				if e == a {
					return nil
				}
			}
			return &Error{Kind: Reference, Reason: fmt.Sprintf("Event %q not found", a)}
		}
		return nil
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	msg := "CREATE EVENT The Raid IN The Long Night After Dawn TONE dark DESCRIPTION x"
	for _, tc := range []struct {
		name       string
		known      map[string][]string
		period     string
		after      string
		kind       error
		reason     string
		checkIsNil bool
	}{
		{name: "whole name resolves", known: map[string][]string{"The Long Night After Dawn": nil},
			period: "The Long Night After Dawn"},
		{name: "split resolves", known: map[string][]string{"The Long Night": {"Dawn"}},
			period: "The Long Night", after: "Dawn"},
		{name: "none resolves: the likeliest reading's error", known: map[string][]string{},
			kind: ErrReference, reason: `Parent period "The Long Night After Dawn" not found`},
		{name: "both resolve", known: map[string][]string{"The Long Night After Dawn": nil, "The Long Night": {"Dawn"}},
			kind: ErrAmbiguous, reason: `Ambiguous command: it reads as IN "The Long Night After Dawn" or as IN "The Long Night" AFTER "Dawn"; put the names in quotes`},
		{name: "no check: ambiguous", checkIsNil: true,
			kind: ErrAmbiguous, reason: `Ambiguous command: it reads as IN "The Long Night After Dawn" or as IN "The Long Night" AFTER "Dawn"; put the names in quotes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := one(t, msg)
			check := periods(tc.known)
			if tc.checkIsNil {
				check = nil
			}
			got, err := st.Resolve(check)
			if tc.kind != nil {
				if !errors.Is(err, tc.kind) || err.Error() != tc.reason {
					t.Errorf("err = %v, want %q", err, tc.reason)
				}
				return
			}
			if err != nil || got.Get("period") != tc.period || got.Get("after") != tc.after {
				t.Errorf("Resolve = %v, %v; want period %q after %q", got.Fields, err, tc.period, tc.after)
			}
		})
	}
}

func TestResolveQuotedNamesAreNeverAmbiguous(t *testing.T) {
	t.Parallel()
	both := periods(map[string][]string{"The Long Night After Dawn": nil, "The Long Night": {"Dawn"}})
	got, err := one(t, `CREATE EVENT The Raid IN "The Long Night" AFTER "Dawn" TONE dark DESCRIPTION x`).Resolve(both)
	if err != nil || got.Get("period") != "The Long Night" || got.Get("after") != "Dawn" {
		t.Errorf("Resolve = %v, %v", got.Fields, err)
	}
	got, err = one(t, `CREATE EVENT The Raid IN "The Long Night After Dawn" TONE dark DESCRIPTION x`).Resolve(both)
	if err != nil || got.Get("period") != "The Long Night After Dawn" || got.Has("after") {
		t.Errorf("Resolve = %v, %v", got.Fields, err)
	}
}

func TestResolveSyntaxError(t *testing.T) {
	t.Parallel()
	st := one(t, "CREATE PERIOD X FIRST")
	called := false
	_, err := st.Resolve(func(Command) error { called = true; return nil })
	if !errors.Is(err, ErrMissing) || called {
		t.Errorf("err = %v, check called %v", err, called)
	}
	if _, err := (Statement{Line: 3}).Resolve(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("empty statement: err = %v", err)
	}
}

func TestErrorIs(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("wrapped: %w", &Error{Kind: Rule, Reason: "no"})
	if !errors.Is(err, ErrRule) || errors.Is(err, ErrReference) {
		t.Errorf("errors.Is by kind failed for %v", err)
	}
	if ErrorKind(0).String() != "kind(0)" || Missing.String() != "missing" {
		t.Errorf("String: %q %q", ErrorKind(0), Missing)
	}
}

func TestNewGrammarRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		specs []Spec
	}{
		{"none", nil},
		{"no phrase", []Spec{{Name: "x"}}},
		{"no name", []Spec{{Phrase: "DO"}}},
		{"same phrase", []Spec{{Name: "a", Phrase: "DO IT"}, {Name: "b", Phrase: "do it"}}},
		{"empty key", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Type: Name}}}}},
		{"repeated key", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "k", Type: Name}, {Key: "k", Keyword: "K", Type: Name}}}}},
		{"no kind", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "k"}}}}},
		{"late subject", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "k", Keyword: "K", Type: Name}, {Key: "s", Type: Name}}}}},
		{"flag subject", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "s", Type: Flag}}}}},
		{"enum without values", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "k", Keyword: "K", Type: Enum}}}}},
		{"required in group", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "k", Keyword: "K", Type: Flag, Group: "g", Required: true}}, Groups: []Group{{Name: "g"}}}}},
		{"undeclared group", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "k", Keyword: "K", Type: Flag, Group: "g"}}}}},
		{"keyword twice", []Spec{{Name: "a", Phrase: "DO", Fields: []Field{{Key: "a", Keyword: "K", Type: Flag}, {Key: "b", Keyword: "k", Type: Flag}}}}},
		{"items without kinds", []Spec{{Name: "a", Phrase: "DO", Items: &Items{}}}},
	} {
		if _, err := NewGrammar(tc.specs...); err == nil {
			t.Errorf("%s: NewGrammar accepted %+v", tc.name, tc.specs)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustGrammar did not panic")
		}
	}()
	MustGrammar()
}

func TestGrammarSpecs(t *testing.T) {
	t.Parallel()
	if len(testGrammar.Specs()) != 5 || testGrammar.Spec("event").Phrase != "CREATE EVENT" || testGrammar.Spec("nope") != nil {
		t.Error("Specs/Spec lookup wrong")
	}
}
