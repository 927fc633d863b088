package chronicle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Stage is the stage of the game.
type Stage string

// The phases: setup (bookends and palette), then play (periods between the
// bookends, events in periods).
const (
	Setup Stage = "setup"
	Play  Stage = "play"
)

// ParseStage reads "setup" or "play".
func ParseStage(s string) (Stage, error) {
	switch p := Stage(strings.ToLower(strings.TrimSpace(s))); p {
	case Setup, Play:
		return p, nil
	}
	return "", fmt.Errorf("phase %q must be setup or play", s)
}

// Tone is the mood of a period or event.
type Tone string

// The tones.
const (
	Light Tone = "light"
	Dark  Tone = "dark"
)

// Bookends mark the first and last periods of the history.
const (
	First = "first"
	Last  = "last"
)

// Timeline is the history built so far. Its JSON form is the one the
// chronicle file holds and `arbiter chronicle parse --timeline` reads; every
// field may be left out.
type Timeline struct {
	BigPicture string   `json:"big_picture,omitempty"`
	Stage      Stage    `json:"phase,omitempty"` // "" reads as setup
	Periods    []Period `json:"periods"`         // in order, first to last
	Palette    Palette  `json:"palette"`
}

// Period is a span of the history; Events are in order.
type Period struct {
	Name        string  `json:"name"`
	Tone        Tone    `json:"tone"`
	Description string  `json:"description"`
	Bookend     string  `json:"bookend,omitempty"` // first | last | ""
	Events      []Event `json:"events"`
}

// Event is something that happened in a period.
type Event struct {
	Name        string `json:"name"`
	Tone        Tone   `json:"tone"`
	Description string `json:"description"`
}

// Palette lists what is in (Yes) and out (No) of the history.
type Palette struct {
	Yes []string `json:"yes"`
	No  []string `json:"no"`
}

// stage is the timeline's stage, setup when unset.
func (t *Timeline) stage() Stage {
	if t.Stage == "" {
		return Setup
	}
	return t.Stage
}

// Clone returns a deep copy.
func (t Timeline) Clone() Timeline {
	c := t
	c.Periods = slices.Clone(t.Periods)
	for i := range c.Periods {
		c.Periods[i].Events = slices.Clone(c.Periods[i].Events)
	}
	c.Palette.Yes = slices.Clone(t.Palette.Yes)
	c.Palette.No = slices.Clone(t.Palette.No)
	return c
}

// normalized fills the defaults: setup phase, empty lists instead of null.
func (t Timeline) normalized() Timeline {
	t = t.Clone()
	t.Stage = t.stage()
	if t.Periods == nil {
		t.Periods = []Period{}
	}
	for i := range t.Periods {
		if t.Periods[i].Events == nil {
			t.Periods[i].Events = []Event{}
		}
	}
	if t.Palette.Yes == nil {
		t.Palette.Yes = []string{}
	}
	if t.Palette.No == nil {
		t.Palette.No = []string{}
	}
	return t
}

// Validate reports every inconsistency of a timeline read from a file, each
// naming its field: empty or repeated names, unknown tones, bookends out of
// place, empty or repeated palette items.
func (t *Timeline) Validate() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if t.Stage != "" && t.Stage != Setup && t.Stage != Play {
		bad("phase %q must be setup or play", t.Stage)
	}
	periods := map[string]int{}
	for i, p := range t.Periods {
		at := fmt.Sprintf("periods[%d]", i)
		checkNamed(bad, at, p.Name, p.Tone)
		if j, dup := periods[key(p.Name)]; dup && p.Name != "" {
			bad("%s.name %q repeats periods[%d]", at, p.Name, j)
		}
		periods[key(p.Name)] = i
		switch {
		case p.Bookend == First && i != 0:
			bad("%s.bookend first: only the first period can be the FIRST bookend", at)
		case p.Bookend == Last && i != len(t.Periods)-1:
			bad("%s.bookend last: only the last period can be the LAST bookend", at)
		case p.Bookend != "" && p.Bookend != First && p.Bookend != Last:
			bad("%s.bookend %q must be first, last or left out", at, p.Bookend)
		}
		events := map[string]int{}
		for j, e := range p.Events {
			eat := fmt.Sprintf("%s.events[%d]", at, j)
			checkNamed(bad, eat, e.Name, e.Tone)
			if k, dup := events[key(e.Name)]; dup && e.Name != "" {
				bad("%s.name %q repeats %s.events[%d]", eat, e.Name, at, k)
			}
			events[key(e.Name)] = j
		}
	}
	seen := map[string]string{}
	for _, list := range []struct {
		kind  string
		items []string
	}{{"yes", t.Palette.Yes}, {"no", t.Palette.No}} {
		for i, it := range list.items {
			at := fmt.Sprintf("palette.%s[%d]", list.kind, i)
			if strings.TrimSpace(it) == "" {
				bad("%s is empty", at)
			} else if prev, dup := seen[key(it)]; dup {
				bad("%s %q repeats %s", at, it, prev)
			}
			seen[key(it)] = at
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

func checkNamed(bad func(string, ...any), at, name string, tone Tone) {
	if strings.TrimSpace(name) == "" {
		bad("%s.name is empty", at)
	}
	if tone != "" && tone != Light && tone != Dark {
		bad("%s.tone %q must be light or dark", at, tone)
	}
}

// key is how names are compared: case and spacing do not matter.
func key(name string) string { return strings.ToLower(strings.Join(strings.Fields(name), " ")) }

// period returns the index of the period named name, or -1.
func (t *Timeline) period(name string) int {
	k := key(name)
	return slices.IndexFunc(t.Periods, func(p Period) bool { return key(p.Name) == k })
}

// bookend returns the index of the FIRST or LAST bookend, or -1.
func (t *Timeline) bookend(which string) int {
	return slices.IndexFunc(t.Periods, func(p Period) bool { return p.Bookend == which })
}

// event returns the index of the event named name in period p, or -1.
func (p *Period) event(name string) int {
	k := key(name)
	return slices.IndexFunc(p.Events, func(e Event) bool { return key(e.Name) == k })
}

// inPalette returns "YES" or "NO" when text is in the palette, or "".
func (t *Timeline) inPalette(text string) string {
	k := key(text)
	match := func(s string) bool { return key(s) == k }
	switch {
	case slices.ContainsFunc(t.Palette.Yes, match):
		return "YES"
	case slices.ContainsFunc(t.Palette.No, match):
		return "NO"
	}
	return ""
}
