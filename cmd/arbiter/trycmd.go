package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/eval"
	"github.com/arbiter-sim/arbiter/session"
)

// TryOptions are the inputs of `arbiter prompts try`.
type TryOptions struct {
	IO        *IOStreams
	Globals   *globals
	Config    *Config
	Dir       string
	Phase     string
	Entity    string
	Tick      int // the tick the call belongs to; 0: the next one
	Templates []string
	Model     string
	Variant   string // --variant: a variant of the eval suite
	Suite     string // --suite; "": SIM/evals.yaml
	Repeat    int
	Cassette  CassetteOptions
}

func newTryCmd(io *IOStreams, g *globals, runF func(context.Context, *TryOptions) error) *cobra.Command {
	opts := &TryOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "try <simulation-dir> --phase P [--entity E] [--tick N] [--variant NAME] [--templates DIR] [--model M] [--repeat K]",
		Short: "Send one call as a run would make it and show the answer, its checks and what it would change",
		Long: `Render the call that phase P makes for entity E at tick N exactly as ` + "`arbiter run`" + `
would make it (the committed state before tick N, the entity's past exchanges as
of then, and for a resolution of a committed tick that tick's stored
intentions), send it, and print the answer: its schema check, the kind's own
checks (what a run would skip of it), what it would change in the world,
repairs, tokens, latency and cost.

Nothing is committed: state.db is opened read-only, and a run may be writing
it meanwhile. --tick defaults to the next tick. --templates DIR lays the
templates in DIR over the simulation's own (prompts/), file by file, so a
changed template is tried before it replaces the one in use; --model sends the
call to another model; --variant NAME makes the call as that variant of the
eval suite (evals.yaml, or --suite FILE) makes it: its templates, answer
settings, model, temperature, max tokens and endpoint (--templates and --model
are laid over it). --repeat K asks K times (answers differ). --replay FILE
answers from a cassette instead of the endpoint.

The exit code is 0 when every answer passed its schema and the kind's checks,
3 when one did not (the answers are printed first), 2 for bad input.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Repeat < 1 {
				return usageErrorf("--repeat must be at least 1, got %d", opts.Repeat)
			}
			if opts.Suite != "" && opts.Variant == "" {
				return usageErrorf("--suite %s names the suite whose variant --variant gives: give --variant NAME too", opts.Suite)
			}
			if opts.Tick < 0 {
				return usageErrorf("--tick must be at least 1, got %d", opts.Tick)
			}
			if err := opts.Cassette.check(); err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd.Flags(), map[string]string{"depth": "llm.depth", "base-url": "llm.base_url"})
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runTry(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Phase, "phase", "", "the phase of the call: "+strings.Join(session.AllPhases(), ", ")+" (prompts --help lists each kind's)")
	f.StringVar(&opts.Entity, "entity", "", "whom the call is for, as its phase says (prompts --help)")
	f.IntVar(&opts.Tick, "tick", 0, "the tick the call belongs to, from the committed state before it (default: the next tick)")
	f.StringArrayVar(&opts.Templates, "templates", nil, "a folder of templates laid over the simulation's (repeatable)")
	f.StringVar(&opts.Model, "model", "", "the model the call goes to (default: the phase's configured model)")
	f.StringVar(&opts.Variant, "variant", "", "make the call as this variant of the eval suite does (baseline: the simulation as it is)")
	f.StringVar(&opts.Suite, "suite", "", "the eval suite --variant names (default: evals.yaml in the simulation's folder)")
	f.IntVar(&opts.Repeat, "repeat", 1, "how many times to ask")
	f.Int("depth", 0, "past exchanges of the entity sent back (llm.depth)")
	f.String("base-url", "", "OpenAI-compatible endpoint (llm.base_url)")
	f.StringVar(&opts.Cassette.Replay, "replay", "", "answer from this cassette instead of the endpoint")
	_ = cmd.MarkFlagRequired("phase")
	return cmd
}

// withModel is set with every phase's model replaced by model ("" keeps
// them).
func withModel(set session.Settings, model string) session.Settings {
	if model == "" {
		return set
	}
	set.Model, set.Override.Model = model, model
	return set
}

// tryReport is what `prompts try --json` writes: one entry per answer.
type tryReport struct {
	Phase    string            `json:"phase"`
	Entity   string            `json:"entity"`
	Tick     int               `json:"tick"`
	Model    string            `json:"model"`
	Variant  string            `json:"variant,omitempty"`
	Messages []session.Message `json:"messages"`
	Answers  []tryAnswerJSON   `json:"answers"`
}

type tryAnswerJSON struct {
	Output     json.RawMessage `json:"output"`
	Raw        string          `json:"raw"`
	Error      string          `json:"error,omitempty"`
	ErrorKind  string          `json:"error_kind,omitempty"`
	Verdict    session.Verdict `json:"checks"`
	Attempts   int             `json:"attempts"`
	Repairs    int             `json:"repairs"`
	Prompt     int             `json:"prompt_tokens"`
	Completion int             `json:"completion_tokens"`
	LatencyMS  int64           `json:"latency_ms"`
	CostUSD    *float64        `json:"cost_usd"`
	Endpoint   string          `json:"endpoint,omitempty"`
}

func runTry(ctx context.Context, opts *TryOptions) error {
	set, err := opts.Config.settings(true, "")
	if err != nil {
		return err
	}
	if opts.Variant != "" {
		v, err := tryVariant(opts, set)
		if err != nil {
			return err
		}
		set = variantSettings(opts.Config, set, v)
	}
	set = withModel(set, opts.Model)
	set.Templates = append(slices.Clip(set.Templates), opts.Templates...)
	done, err := opts.Cassette.use(&set)
	if err != nil {
		return err
	}
	defer done()
	s, err := session.Open(ctx, opts.Dir, set, session.ReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	tick := opts.Tick
	if tick == 0 {
		tick = s.LastTick() + 1
	}
	call, _, err := s.Call(ctx, opts.Phase, opts.Entity, tick)
	if err != nil {
		return err
	}
	req := call.Request
	client, err := s.TryClient(opts.Globals.logger(opts.IO))
	if err != nil {
		return err
	}
	rep := tryReport{Phase: req.Phase, Entity: req.EntityKey, Tick: req.Tick, Model: req.Params.Model, Variant: opts.Variant, Messages: call.Messages}
	failed := 0
	for range opts.Repeat {
		t, err := s.Try(ctx, client, opts.Phase, opts.Entity, tick)
		if err != nil {
			return err
		}
		a := tryAnswerOf(t, opts.Config.prices())
		if a.Error != "" || len(a.Verdict.Problems) > 0 {
			failed++
		}
		rep.Answers = append(rep.Answers, a)
	}
	if ex := opts.Globals.exporter(); ex != nil {
		if err := ex.Write(opts.IO, rep); err != nil {
			return err
		}
	} else {
		writeTry(opts.IO.Out, rep, opts.Variant, set.Templates)
	}
	if failed > 0 {
		return &exitError{code: ExitModel, err: fmt.Errorf("%d of %d answers failed their checks", failed, opts.Repeat)}
	}
	return nil
}

// tryVariant is the variant of the eval suite that --variant names; a
// suite that does not load, or names no such variant, is refused before
// any call.
func tryVariant(opts *TryOptions, set session.Settings) (eval.Variant, error) {
	path := eval.SuiteFile(opts.Dir, opts.Suite)
	s, err := session.Load(opts.Dir, set)
	if err != nil {
		return eval.Variant{}, err
	}
	suite, err := eval.LoadSuite(path, modelPhases(s), s.KindAssertions())
	if err != nil {
		return eval.Variant{}, usageError(err)
	}
	v, ok := suite.Variant(opts.Variant)
	if !ok {
		return v, usageErrorf("--variant %s: no variant %q in %s (%s; %s is the simulation as it is)", opts.Variant, opts.Variant, path, suite.VariantNames(), eval.Baseline)
	}
	return v, nil
}

func tryAnswerOf(t *session.Trial, prices map[string]session.Price) tryAnswerJSON {
	r := t.Result
	a := tryAnswerJSON{Output: r.Output, Raw: r.Raw, Verdict: t.Verdict, Attempts: r.Attempts, Repairs: r.Repairs,
		Prompt: r.Usage.PromptTokens, Completion: r.Usage.CompletionTokens, LatencyMS: r.Latency.Milliseconds(), Endpoint: r.Endpoint}
	if r.Err != nil {
		a.Error, a.ErrorKind = r.Err.Error(), session.ErrorKind(r.Err)
	}
	if why := session.Truncated(r); why != "" && a.Error == "" {
		a.Error, a.ErrorKind = why, "prompt_truncated"
	}
	if p, ok := prices[t.Call.Request.Params.Model]; ok {
		c := p.Cost(r.Usage.PromptTokens, r.Usage.CompletionTokens)
		a.CostUSD = &c
	}
	return a
}

// writeTry prints the call once, then each answer with its checks.
func writeTry(w io.Writer, rep tryReport, variant string, templates []string) {
	over := ""
	if variant != "" {
		over = ", variant " + variant
	}
	if len(templates) > 0 {
		over += ", templates " + strings.Join(templates, " over ") + " over the simulation's"
	}
	fmt.Fprintf(w, "# %s call %s at tick %d (model %s%s)\n", rep.Phase, rep.Entity, rep.Tick, rep.Model, over)
	if n := len(rep.Messages); n > 0 {
		fmt.Fprintf(w, "%d messages sent (%d earlier exchanges); `arbiter prompts render` shows them\n", n, (n-2)/2)
	}
	for i, a := range rep.Answers {
		fmt.Fprintf(w, "\n===== answer %d of %d =====\n", i+1, len(rep.Answers))
		writeTryAnswer(w, a)
	}
}

func writeTryAnswer(w io.Writer, a tryAnswerJSON) {
	cost := "cost unknown (no price for the model)"
	if a.CostUSD != nil {
		cost = fmt.Sprintf("$%.6f", *a.CostUSD)
	}
	fmt.Fprintf(w, "%s, %d attempt(s), %d repair(s), %d prompt + %d completion tokens, %s\n",
		time.Duration(a.LatencyMS)*time.Millisecond, a.Attempts, a.Repairs, a.Prompt, a.Completion, cost)
	switch {
	case a.Error != "":
		fmt.Fprintf(w, "answer: FAILED (%s): %s\n", a.ErrorKind, a.Error)
		if a.Raw != "" {
			fmt.Fprintf(w, "raw answer:\n%s\n", a.Raw)
		}
	default:
		var pretty bytes.Buffer
		if json.Indent(&pretty, a.Output, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(a.Output)
		}
		fmt.Fprintf(w, "%s\nschema: valid\n", pretty.String())
	}
	if len(a.Verdict.Problems) == 0 {
		fmt.Fprintln(w, "kind checks: passed")
	} else {
		fmt.Fprintln(w, "kind checks: FAILED")
		for _, p := range a.Verdict.Problems {
			fmt.Fprintf(w, "  - %s\n", p)
		}
	}
	if len(a.Verdict.Changes) > 0 {
		fmt.Fprintln(w, "would change:")
		for _, c := range a.Verdict.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
}
