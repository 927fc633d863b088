package phases

import (
	"context"
	"errors"
	"log/slog"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// Template file names of the default prompts (prompts/*.md), overridable per
// simulation by the same names.
const (
	IntentionSystemTemplate  = "phase1_intention_system.md"
	IntentionUserTemplate    = "phase1_intention_user.md"
	ResolutionSystemTemplate = "phase2a_resolution_system.md"
	ResolutionUserTemplate   = "phase2a_resolution_user.md"
)

// Phase names, used in entity keys, call records and events.
const (
	PhaseIntention  = "intention"
	PhaseResolution = "resolution"
)

// Client runs model calls; *llm.Client implements it. CreateEachThen
// builds request i with build in the worker that sends it and hands each
// result to done (when set) as its call ends. Results come back in index
// order, one per request, and a failed call is a Result with Err set, never
// a reason to stop the batch; only a request that cannot be built is an
// error. Complete makes one call. A Result's Output has passed the
// request's schema (its Accept when set) and Check, as llm.Client.Complete
// sees to: the phases decode it without checking it again.
type Client interface {
	CreateEachThen(ctx context.Context, n int, build func(i int) (llm.Request, error), done func(i int, r llm.Result)) ([]llm.Result, error)
	Complete(ctx context.Context, req llm.Request) llm.Result
	Workers() int // goroutines a fan-out of calls runs (llm.Client.Workers)
	// CompleteBatch makes the calls of a phase as one Batch API job, each
	// answer checked as Complete checks one (llm.Client.CompleteBatch).
	CompleteBatch(ctx context.Context, phase string, reqs []llm.Request, job llm.BatchJob) ([]llm.Result, error)
}

// Env is what every phase needs: the world, its prompts, the model and a logger.
type Env struct {
	Sim     *world.Simulation
	Prompts *prompts.Renderer
	Model   Client
	Params  llm.Params
	Logger  *slog.Logger
	// MaxCharacters is the most characters one game master call resolves
	// (phases.resolution.max_characters; 0: as many as MaxOutputTokens
	// allows), MaxOutputTokens the most tokens a call may ask for
	// (llm.max_output_tokens; 0: DefaultMaxOutputTokens). See perCall.
	MaxCharacters, MaxOutputTokens int
	// answer holds the schemas of the simulation's answers (its
	// settings.answer); nil: the defaults.
	answer *answerSchemas
}

// schemas are the schemas and bounds of the env's answers.
func (e Env) schemas() *answerSchemas {
	if e.answer == nil {
		return defaultSchemas()
	}
	return e.answer
}

// Outcome is what a phase made of one entity (a character, a location): its
// value, whether that value is the fallback of a failed call, and the call.
type Outcome[T any] struct {
	ID       string
	Value    T
	Fallback bool
	Call     llm.Result
	// Skipped are the parts of a usable answer that were not (a game master's
	// update of one character that does not match its schema, or that is
	// missing, or whose group's call failed), reported as apply errors.
	Skipped []ApplyError
	// Parts are the outcomes of each call, in order, of an entity resolved
	// in several (a location's crowd, see Groups); the fields above are
	// then their merge, and Call is call 1's. Nil for one call.
	Parts []Outcome[T]
}

// Values maps each outcome's entity id to its value.
func Values[T any](outs []Outcome[T]) map[string]T {
	m := make(map[string]T, len(outs))
	for _, o := range outs {
		m[o.ID] = o.Value
	}
	return m
}

// renderPair renders the system and user templates of a request. A
// narrative template is given no data but these two types: out-of-order
// ticks rely on all it can reach being the location's and its
// characters' (prompts.TestTemplateDataIsLocal).
func renderPair[D prompts.IntentionData | prompts.ResolutionData](pr *prompts.Renderer, systemName, userName string, data D) (string, string, error) {
	var v any = data // one copy for both renderings
	system, err1 := pr.Render(systemName, v)
	user, err2 := pr.Render(userName, v)
	return system, user, errors.Join(err1, err2)
}

func (e Env) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// debugLogger is the logger with args when it logs debug records, else nil:
// a request is built for every call of a tick, and making a logger and
// formatting messages for records nobody keeps allocated for each.
func (e Env) debugLogger(args ...any) *slog.Logger {
	if e.Logger == nil || !e.Logger.Enabled(context.Background(), slog.LevelDebug) {
		return nil
	}
	return e.Logger.With(args...)
}

// interrupted reports whether the caller cancelled ctx (Ctrl-C): the tick
// is then rolled back, so the calls it cut short are not reported as
// fallbacks. A phase deadline (DeadlineExceeded) is not an interruption:
// its late calls do fall back, and say so.
func interrupted(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// warnsFallback reports whether a call that failed with err gets its
// fallback warning: not when the run was interrupted, nor when the cassette
// failed it (the runner then stops the tick, so no fallback is kept).
func warnsFallback(ctx context.Context, err error) bool {
	return !interrupted(ctx) && !errors.Is(err, llm.ErrCassette)
}
