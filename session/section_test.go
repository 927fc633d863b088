package session

import "testing"

type oneSection struct{ PhaseConfig }

func (c *oneSection) Phases() map[string]*PhaseConfig {
	return map[string]*PhaseConfig{"": &c.PhaseConfig}
}
func (c *oneSection) Check(func(string) string) []error { return nil }
func (c *oneSection) Clone() SectionConfig              { d := *c; return &d }

// TestParamsOfAPhase: a phase's model falls back to the shared one, and
// an override (prompts try --model, an eval variant) replaces what it
// sets, nothing else.
func TestParamsOfAPhase(t *testing.T) {
	hot := float32(1.5)
	for _, tc := range []struct {
		name string
		set  Settings
		p    PhaseConfig
		want Params
	}{
		{"its own", Settings{Model: "shared"}, PhaseConfig{Model: "own", Temperature: 0.7, MaxTokens: 600}, Params{Model: "own", Temperature: 0.7, MaxTokens: 600}},
		{"the shared model", Settings{Model: "shared"}, PhaseConfig{Temperature: 0.7, MaxTokens: 600}, Params{Model: "shared", Temperature: 0.7, MaxTokens: 600}},
		{"overridden", Settings{Model: "shared", Override: PhaseOverride{Model: "try", Temperature: &hot, MaxTokens: 9}},
			PhaseConfig{Model: "own", Temperature: 0.7, MaxTokens: 600}, Params{Model: "try", Temperature: 1.5, MaxTokens: 9}},
		{"a model overridden only", Settings{Override: PhaseOverride{Model: "try"}}, PhaseConfig{Temperature: 0.7, MaxTokens: 600}, Params{Model: "try", Temperature: 0.7, MaxTokens: 600}},
	} {
		if got := tc.set.Params(tc.p); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestSectionOf: a kind reads its own section of the settings, or the
// section with no key set when the settings hold none (a test's).
func TestSectionOf(t *testing.T) {
	sec := &Section{Key: "k", New: func() SectionConfig { return &oneSection{} }}
	mine := &oneSection{PhaseConfig{Model: "m"}}
	if got := SectionOf[*oneSection](Settings{Sections: map[string]SectionConfig{"k": mine}}, sec); got != mine {
		t.Errorf("SectionOf = %+v, want the settings' own", got)
	}
	if got := SectionOf[*oneSection](Settings{}, sec); got == nil || got.Model != "" {
		t.Errorf("SectionOf of no section = %+v", got)
	}
}
