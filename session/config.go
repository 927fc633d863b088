package session

import (
	"time"

	"github.com/arbiter-sim/arbiter/internal/memlimit"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/runner"
)

// Params are one phase's model, temperature and max_tokens. A type alias:
// they are the model client's request parameters, which the session hands
// to the kinds and the kinds to the client unchanged; a second type would
// only be copied field by field.
type Params = llm.Params

// ClientConfig is the model client's configuration (the llm.* keys): the
// endpoints a session's calls go to and how calls behave. A type alias:
// the session builds its client from it as it is (adding its logger and
// cassette), so every option the client grows reaches the commands with
// no copy to keep in step.
type ClientConfig = llm.Config

// DefaultClientConfig is the model client's defaults, with its default
// endpoint.
func DefaultClientConfig() ClientConfig {
	c := llm.DefaultConfig()
	c.BreakerCooldown = llm.DefaultBreakerCooldown
	return c
}

// Endpoint is one server of ClientConfig.Endpoints, with limits of its
// own. A type alias, as ClientConfig is: it is part of that configuration.
type Endpoint = llm.Endpoint

// DefaultMaxOutputTokens is llm.max_output_tokens when it is not set: the
// most tokens one call asks the model to write (gpt-4o-mini's limit).
const DefaultMaxOutputTokens = 16384

// ShownURL is an endpoint's URL as arbiter prints it: user information and
// the values of query parameters that may be secrets are redacted.
func ShownURL(raw string) string { return llm.RedactURL(raw) }

// StoredURL is an endpoint's URL as a run's manifest keeps it: as
// ShownURL, without user information or fragment at all.
func StoredURL(raw string) string { return llm.CleanURL(raw) }

// Redacted stands in for a secret removed from what arbiter prints or
// stores (an API key in a run's manifest).
const Redacted = llm.Redacted

// Limits bound a run, whatever its kind (the run.* keys); budgets count
// every run of the simulation.
type Limits struct {
	PhaseTimeout time.Duration // deadline of one phase; 0: none
	TokenBudget  int           // tokens of the simulation; 0: unlimited
	// MaxCost is the US dollars the simulation may spend (0: unlimited),
	// each call priced at its model's entry in Prices.
	MaxCost float64
	Prices  map[string]Price
}

// Price is what a model costs in US dollars per million tokens. A type
// alias: it is the price the runner charges a call at, with its Cost.
type Price = runner.Price

// runner is the runner's configuration of l. A call stored without its
// model (before schema version 3) is priced at the model its phase is
// configured with now, which model gives.
func (l Limits) runner(model func(phase string) string) runner.Config {
	return runner.Config{PhaseTimeout: l.PhaseTimeout, TokenBudget: l.TokenBudget, MaxCost: l.MaxCost, Prices: l.Prices, PhaseModel: model}
}

// phaseModel is the model the session's kind calls phase with, as its
// manifest part says; a phase the kind does not name is the default model.
func (s *Session) phaseModel(phase string) string {
	for _, m := range s.Kind.Manifest().Models {
		if m.Phase == phase {
			return m.Model
		}
	}
	return s.settings.Model
}

// The events and reports a run emits, under the session's name. Type
// aliases: the session hands the runner's values on as they are, and the
// runner is the one place that fills them.
type (
	// Event is one line of a run's event log (TOOL_FAILURE, STATE_ENTRY,
	// RECOVERY_ATTEMPT, ...), as Settings.OnEvent receives it.
	Event = runner.Event
	// PhaseProgress is a phase of a tick under way or done
	// (Settings.OnPhase).
	PhaseProgress = runner.PhaseProgress
	// BatchProgress is a phase's Batch API job in flight
	// (PhaseProgress.Batch).
	BatchProgress = runner.BatchProgress
	// TickReport is one committed tick or turn (Settings.OnTick, Turn).
	TickReport = runner.TickReport
	// RunReport is what a run did, returned by Run.
	RunReport = runner.Report
)

// The manifest of a run under the session's name. Type aliases: the
// session writes and reads them (Manifest, StartRun, Status), the manifest
// package holds their format and their diff.
type (
	Manifest     = manifest.Manifest
	ManifestFile = manifest.File
	// Build is the arbiter binary that wrote a manifest, or runs now
	// (ReadBuild).
	Build = manifest.Build
)

// ReadBuild is the build of the running binary: module version, revision
// and whether its work tree had changes, Go version.
func ReadBuild() Build { return manifest.ReadBuild() }

// MaxConcurrency bounds llm.concurrency and an endpoint's concurrency.
const MaxConcurrency = llm.MaxConcurrency

// GovernMemory keeps the memory of the process near what its ticks hold
// live (memlimit.Govern) until stop is called: a tick builds up all it
// commits, so a process that runs ticks would otherwise hold twice its
// peak. A command calls it once, for its whole process.
func GovernMemory() (stop func()) { return memlimit.Govern() }
