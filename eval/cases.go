package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/arbiter-sim/arbiter/session"
)

// Case is one situation: the call of a phase for an entity at a tick, from
// the committed state before it (changed by State, for a hand-written
// case).
type Case struct {
	Tick   int    `json:"tick"`
	Phase  string `json:"phase"`
	Entity string `json:"entity"`
	// File is the hand-written case's file; "" for a case of a run.
	File string `json:"file,omitempty"`
	// State is a JSON merge patch over the committed state.
	State json.RawMessage `json:"state,omitempty"`
}

// ID names the case in tables and reports: "t3 intention ida", or the
// hand-written case's file name.
func (c Case) ID() string {
	id := fmt.Sprintf("t%d %s %s", c.Tick, c.Phase, c.Entity)
	if c.File != "" {
		id = strings.TrimSuffix(filepath.Base(c.File), filepath.Ext(c.File)) + " (" + id + ")"
	}
	return id
}

// Cases lists the cases of spec in the simulation of s: every committed
// tick of the range, every phase and entity asked for, sampled when spec
// says so, then the hand-written ones. A tick not committed, a phase or
// an entity the simulation does not have is an error saying which exist.
func Cases(ctx context.Context, s *session.Session, spec CaseSpec) ([]Case, error) {
	last := s.LastTick()
	from, to := spec.From, spec.To
	if from == 0 {
		from, to = 1, last
	}
	if last == 0 && len(spec.Files) == 0 {
		return nil, fmt.Errorf("%s has no committed tick: cases are situations of its runs (`arbiter run %s` first), or hand-written (cases.files)", s.Dir, s.Dir)
	}
	if to > last {
		return nil, fmt.Errorf("cases.ticks %d..%d: tick %d is not committed (committed ticks: 1..%d)", from, to, to, last)
	}
	phases, err := s.CallPhases()
	if err != nil {
		return nil, err
	}
	if len(spec.Phases) > 0 {
		phases = spec.Phases
	}
	var out []Case
	seen := map[string]bool{}
	for tick := from; tick <= to && last > 0; tick++ {
		for _, phase := range phases {
			ids, err := s.Entities(ctx, phase, tick)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if len(spec.Entities) == 0 || slices.Contains(spec.Entities, id) {
					out = append(out, Case{Tick: tick, Phase: phase, Entity: id})
					seen[id] = true
				}
			}
		}
	}
	for _, id := range spec.Entities {
		if !seen[id] && last > 0 {
			return nil, fmt.Errorf("cases.entities: %q is called by none of the phases %s", id, strings.Join(phases, ", "))
		}
	}
	out = sample(out, spec.Sample, spec.Seed)
	for _, file := range spec.Files {
		c, err := readCase(file, phases, last)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// sample draws n of cases with seed, kept in their order; n <= 0 or at
// least len(cases) keeps them all.
func sample(cases []Case, n int, seed uint64) []Case {
	if n <= 0 || n >= len(cases) {
		return cases
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := r.Perm(len(cases))[:n]
	slices.Sort(pick)
	out := make([]Case, n)
	for i, j := range pick {
		out[i] = cases[j]
	}
	return out
}

// caseFile is a hand-written case.
type caseFile struct {
	Tick   int            `yaml:"tick"`
	Phase  string         `yaml:"phase"`
	Entity string         `yaml:"entity"`
	State  map[string]any `yaml:"state"`
}

func readCase(path string, phases []string, last int) (Case, error) {
	data, err := readBounded(path, MaxSuiteBytes)
	if err != nil {
		return Case{}, &SuiteError{Path: path, Msg: err.Error()}
	}
	return parseCase(path, data, phases, last)
}

// parseCase reads a hand-written case, data, the file at path, for a
// simulation whose committed ticks are 1..last.
func parseCase(path string, data []byte, phases []string, last int) (Case, error) {
	var f caseFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Case{}, yamlError(path, err)
	}
	switch {
	case f.Tick < 1 || f.Tick > last+1:
		return Case{}, &SuiteError{Path: path, Msg: fmt.Sprintf("tick %d: a case's tick must be committed, or the next (1..%d)", f.Tick, last+1)}
	case !slices.Contains(phases, f.Phase):
		return Case{}, &SuiteError{Path: path, Msg: fmt.Sprintf("phase %q: the simulation's model calls are %s", f.Phase, strings.Join(phases, ", "))}
	case f.Entity == "":
		return Case{}, &SuiteError{Path: path, Msg: "entity: missing"}
	}
	c := Case{Tick: f.Tick, Phase: f.Phase, Entity: f.Entity, File: path}
	if f.State != nil {
		var err error
		if c.State, err = json.Marshal(f.State); err != nil {
			return Case{}, &SuiteError{Path: path, Msg: "state: " + err.Error()}
		}
	}
	return c, nil
}

func compareCases(a, b Case) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Tick, b.Tick), cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Entity, b.Entity))
}
