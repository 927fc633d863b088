package eval

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/arbiter-sim/arbiter/session"
)

// DefaultSuite is the suite file `arbiter eval SIM` reads when --suite is
// not given, in the simulation's folder.
const DefaultSuite = "evals.yaml"

// SuiteFile is the suite a command reads: given (--suite) when set, else
// DefaultSuite in the simulation's folder dir.
func SuiteFile(dir, given string) string {
	if given != "" {
		return given
	}
	return filepath.Join(dir, DefaultSuite)
}

// MaxRepeat bounds how many times a case is asked of a variant.
const MaxRepeat = 100

// MaxSuiteBytes bounds a suite file; a larger one is refused.
const MaxSuiteBytes = 1 << 20

// Suite is an eval suite as its file says it.
type Suite struct {
	Path  string // the file it was read from
	Cases CaseSpec
	// Repeat is how many times each case is asked of each variant.
	Repeat int
	// Variants are the named variants compared with the baseline (the
	// simulation's own templates and configuration), in file order.
	Variants []Variant
	// Judge configures the model that answers judge assertions; nil when
	// no assertion asks one.
	Judge *JudgeSpec
	// Assertions are each phase's, in file order.
	Assertions map[string][]*Assertion
	// MinPassRate is the threshold of an assertion that sets none.
	MinPassRate float64
}

// CaseSpec says which situations of the simulation's runs are cases.
type CaseSpec struct {
	From, To int      // ticks, inclusive; 0, 0: every committed tick
	Phases   []string // nil: every phase a model answers
	Entities []string // nil: everyone each phase calls
	Sample   int      // at most this many cases, drawn with Seed; 0: all
	Seed     uint64
	Files    []string // hand-written cases, each a file (relative to the suite)
}

// Variant is a named way of making the calls: templates laid over the
// simulation's, and/or another model, temperature, max tokens, endpoint.
type Variant struct {
	Name        string   `yaml:"name"`
	Templates   []string `yaml:"-"` // folders, resolved against the suite's folder
	Model       string   `yaml:"model"`
	Temperature *float32 `yaml:"temperature"`
	MaxTokens   int      `yaml:"max_tokens"`
	// Endpoint is a base URL, or the name of one of llm.endpoints.
	Endpoint string `yaml:"endpoint"`
	// Settings are laid over simulation.yaml's settings: (a JSON merge
	// patch): a narrative's answer lengths and descriptions, which its
	// schemas and templates both read.
	Settings map[string]any `yaml:"settings"`
	line     int
}

// Baseline is the name of the variant that is the simulation as it is.
const Baseline = "baseline"

// JudgeSpec is the judge model's own settings.
type JudgeSpec struct {
	Model string `yaml:"model"`
	// Endpoint is a base URL or the name of one of llm.endpoints; ""
	// is the simulation's own endpoint.
	Endpoint string `yaml:"endpoint"`
	// APIKeyEnv names the environment variable holding the judge
	// endpoint's key ("": the configured key).
	APIKeyEnv   string  `yaml:"api_key_env"`
	Temperature float32 `yaml:"temperature"`
	MaxTokens   int     `yaml:"max_tokens"`
}

// Assertion is one check of every answer of a phase.
type Assertion struct {
	Name  string // as the suite names it, or its kind and argument
	Phase string
	Kind  string // equals, contains, matches, length, no_fallback, max_cost, max_latency, judge, or the kind's
	// MinPassRate is the share of answers that must pass (0..1).
	MinPassRate float64
	Line        int

	pointer   string
	value     any
	re        *regexp.Regexp
	min       *int
	max       *int
	bound     float64
	Rubric    string
	kindCheck func(session.Answer) (bool, string)
}

// common lists the assertions every kind has, with what their argument is.
var common = map[string]string{
	"equals":      "{pointer: /json/pointer, value: V}: the answer's value there equals V",
	"contains":    "{pointer: /json/pointer, value: V}: the string there contains V, or the array there holds V",
	"matches":     "{pointer: /json/pointer, regex: RE}: the string there matches RE (Go syntax)",
	"length":      "{pointer: /json/pointer, min: N, max: N}: the string (in characters) or array there has a length between min and max",
	"no_fallback": "true: a run would use the answer (no fallback)",
	"max_cost":    "USD: the call costs at most this much (needs a price for the model)",
	"max_latency": "duration (\"5s\"): the call took at most this long, retries included",
	"judge":       "RUBRIC, or {rubric: RUBRIC}: the judge model says the answer meets the rubric",
}

// Known lists the assertion names a suite may use with a kind's own, with
// their help, sorted by name.
func Known(kind map[string]session.KindAssertion) []string {
	var out []string
	for name, help := range common {
		out = append(out, name+": "+help)
	}
	for name, a := range kind {
		out = append(out, name+": "+a.Help)
	}
	slices.Sort(out)
	return out
}

func knownNames(kind map[string]session.KindAssertion) string {
	var names []string
	for name := range common {
		names = append(names, name)
	}
	for name := range kind {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// suiteFile is the file's shape.
type suiteFile struct {
	Cases struct {
		Ticks    yaml.Node `yaml:"ticks"`
		Phases   []string  `yaml:"phases"`
		Entities []string  `yaml:"entities"`
		Sample   int       `yaml:"sample"`
		Seed     uint64    `yaml:"seed"`
		Files    []string  `yaml:"files"`
	} `yaml:"cases"`
	Repeat      int                    `yaml:"repeat"`
	MinPassRate *float64               `yaml:"min_pass_rate"`
	Variants    []yaml.Node            `yaml:"variants"`
	Judge       *JudgeSpec             `yaml:"judge"`
	Assertions  map[string][]yaml.Node `yaml:"assertions"`
}

// SuiteError is a problem of a suite file, at a line when known.
type SuiteError struct {
	Path string
	Line int
	Msg  string
}

func (e *SuiteError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// LoadSuite reads the suite at path for a simulation whose model calls are
// phases, with kind's own assertions. Every problem is a *SuiteError naming
// the file and line; several are joined.
func LoadSuite(path string, phases []string, kind map[string]session.KindAssertion) (*Suite, error) {
	data, err := readBounded(path, MaxSuiteBytes)
	if err != nil {
		return nil, &SuiteError{Path: path, Msg: err.Error()}
	}
	return ParseSuite(path, data, phases, kind)
}

func readBounded(path string, limit int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%d bytes: a suite is at most %d", info.Size(), limit)
	}
	return os.ReadFile(path)
}

// ParseSuite is LoadSuite of data, the file's contents.
func ParseSuite(path string, data []byte, phases []string, kind map[string]session.KindAssertion) (*Suite, error) {
	var f suiteFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, yamlError(path, err)
	}
	p := &parser{path: path, phases: phases, kind: kind}
	s := &Suite{Path: path, Repeat: f.Repeat, MinPassRate: 1, Judge: f.Judge, Assertions: map[string][]*Assertion{}}
	if s.Repeat == 0 {
		s.Repeat = 1
	}
	if s.Repeat < 1 || s.Repeat > MaxRepeat {
		p.fail(0, "repeat: must be 1 to %d, got %d", MaxRepeat, f.Repeat)
	}
	if f.MinPassRate != nil {
		s.MinPassRate = p.rate(0, "min_pass_rate", *f.MinPassRate)
	}
	s.Cases = p.cases(f)
	s.Variants = p.variants(f.Variants)
	for _, phase := range sortedKeys(f.Assertions) {
		if !slices.Contains(phases, phase) {
			p.fail(0, "assertions: phase %q: the simulation's model calls are %s", phase, strings.Join(phases, ", "))
			continue
		}
		for _, n := range f.Assertions[phase] {
			if a := p.assertion(phase, n, s.MinPassRate); a != nil {
				s.Assertions[phase] = append(s.Assertions[phase], a)
			}
		}
	}
	if s.usesJudge() && (s.Judge == nil || s.Judge.Model == "") {
		p.fail(0, "a judge assertion needs judge: with a model (and an endpoint, or the simulation's)")
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return s, nil
}

func (s *Suite) usesJudge() bool {
	for _, list := range s.Assertions {
		for _, a := range list {
			if a.Kind == "judge" {
				return true
			}
		}
	}
	return false
}

// yamlError makes a YAML decoding error a *SuiteError with its line.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var errs []error
		for _, msg := range te.Errors {
			line, rest := 0, msg
			if after, ok := strings.CutPrefix(msg, "line "); ok {
				if n, tail, ok := strings.Cut(after, ": "); ok {
					line, _ = strconv.Atoi(n)
					rest = tail
				}
			}
			errs = append(errs, &SuiteError{Path: path, Line: line, Msg: rest})
		}
		return errors.Join(errs...)
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if after, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(after, ": "); ok {
			line, _ = strconv.Atoi(n)
			msg = tail
		}
	}
	return &SuiteError{Path: path, Line: line, Msg: msg}
}

type parser struct {
	path   string
	phases []string
	kind   map[string]session.KindAssertion
	errs   []error
}

func (p *parser) fail(line int, format string, args ...any) {
	p.errs = append(p.errs, &SuiteError{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) rate(line int, key string, v float64) float64 {
	if math.IsNaN(v) || v < 0 || v > 1 {
		p.fail(line, "%s: must be between 0 and 1, got %v", key, v)
		return 1
	}
	return v
}

func (p *parser) cases(f suiteFile) CaseSpec {
	c := CaseSpec{Phases: f.Cases.Phases, Entities: f.Cases.Entities, Sample: f.Cases.Sample, Seed: f.Cases.Seed}
	if n := f.Cases.Ticks; n.Kind != 0 {
		from, to, err := parseTicks(n.Value)
		if err != nil || n.Kind != yaml.ScalarNode {
			p.fail(n.Line, "cases.ticks: want N or FROM..TO (ticks 1 and up), got %q", n.Value)
		}
		c.From, c.To = from, to
	}
	for _, ph := range c.Phases {
		if !slices.Contains(p.phases, ph) {
			p.fail(0, "cases.phases: %q: the simulation's model calls are %s", ph, strings.Join(p.phases, ", "))
		}
	}
	if c.Sample < 0 {
		p.fail(0, "cases.sample: must be at least 1, got %d", c.Sample)
	}
	dir := filepath.Dir(p.path)
	for _, file := range f.Cases.Files {
		c.Files = append(c.Files, filepath.Join(dir, file))
	}
	return c
}

// parseTicks reads "N" or "FROM..TO".
func parseTicks(s string) (int, int, error) {
	a, b, ranged := strings.Cut(strings.TrimSpace(s), "..")
	from, err := strconv.Atoi(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, err
	}
	to := from
	if ranged {
		if to, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
			return 0, 0, err
		}
	}
	if from < 1 || to < from {
		return 0, 0, errors.New("bad range")
	}
	return from, to, nil
}

var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (p *parser) variants(nodes []yaml.Node) []Variant {
	var out []Variant
	seen := map[string]int{Baseline: 0}
	for i := range nodes {
		n := &nodes[i]
		var raw struct {
			Variant   `yaml:",inline"`
			Templates yaml.Node `yaml:"templates"`
		}
		if err := decodeStrict(n, &raw); err != nil {
			p.fail(n.Line, "variants: %v", err)
			continue
		}
		v := raw.Variant
		v.line = n.Line
		switch first, dup := seen[v.Name]; {
		case !variantName.MatchString(v.Name):
			p.fail(n.Line, "variants: name %q: want letters, digits, '-', '_' or '.' (at most 64)", v.Name)
		case dup && v.Name == Baseline:
			p.fail(n.Line, "variants: %q is the simulation as it is; name the variant otherwise", v.Name)
		case dup:
			p.fail(n.Line, "variants: %q named twice (first at line %d)", v.Name, first)
		}
		seen[v.Name] = n.Line
		v.Templates = p.templates(&raw.Templates)
		if v.MaxTokens < 0 || v.Temperature != nil && (*v.Temperature < 0 || *v.Temperature > 2) {
			p.fail(n.Line, "variants: %s: max_tokens must be positive and temperature 0 to 2", v.Name)
		}
		if len(v.Templates) == 0 && v.Model == "" && v.Temperature == nil && v.MaxTokens == 0 && v.Endpoint == "" && len(v.Settings) == 0 {
			p.fail(n.Line, "variants: %s changes nothing: give templates, settings, model, temperature, max_tokens or endpoint", v.Name)
		}
		out = append(out, v)
	}
	return out
}

// templates reads a variant's templates: one folder or a list, each
// relative to the suite's folder.
func (p *parser) templates(n *yaml.Node) []string {
	var list []string
	switch n.Kind {
	case 0:
		return nil
	case yaml.ScalarNode:
		list = []string{n.Value}
	case yaml.SequenceNode:
		if err := n.Decode(&list); err != nil {
			p.fail(n.Line, "templates: %v", err)
		}
	default:
		p.fail(n.Line, "templates: want a folder or a list of folders")
	}
	dir := filepath.Dir(p.path)
	for i, t := range list {
		if !filepath.IsAbs(t) {
			list[i] = filepath.Join(dir, t)
		}
	}
	return list
}

func decodeStrict(n *yaml.Node, out any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// duration reads a YAML value as a duration ("5s", or seconds).
func duration(v any) (time.Duration, bool) {
	switch t := v.(type) {
	case string:
		d, err := time.ParseDuration(t)
		return d, err == nil && d > 0
	case int:
		return time.Duration(t) * time.Second, t > 0
	case float64:
		return time.Duration(t * float64(time.Second)), t > 0
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Variant is the variant of the suite named name, and whether it has one;
// Baseline is the simulation as it is, a Variant that changes nothing.
func (s *Suite) Variant(name string) (Variant, bool) {
	if name == Baseline {
		return Variant{Name: Baseline}, true
	}
	i := slices.IndexFunc(s.Variants, func(v Variant) bool { return v.Name == name })
	if i < 0 {
		return Variant{}, false
	}
	return s.Variants[i], true
}

// VariantNames says which variants the suite names, for an error about
// one it does not: "its variants: terse, chatty" or "it names none".
func (s *Suite) VariantNames() string {
	if len(s.Variants) == 0 {
		return "it names none"
	}
	names := make([]string, len(s.Variants))
	for i, v := range s.Variants {
		names[i] = v.Name
	}
	return "its variants: " + strings.Join(names, ", ")
}
