package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/eval"
	"github.com/arbiter-sim/arbiter/session"
)

// ExitEvalFailed: an eval ran and a threshold of its suite was not met.
const ExitEvalFailed = 5

// EvalOptions are the inputs of `arbiter eval`.
type EvalOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
	Suite   string // --suite; "": SIM/evals.yaml
	// Variants narrows the suite's variants to these (--variant); nil:
	// every one. The baseline is always run.
	Variants []string
	Sample   int // --sample: at most this many cases (the suite's seed); 0: the suite's cases.sample
	Repeat   int // --repeat: each case this many times; 0: the suite's repeat
	NoCache  bool
	JUnit    string
	HTML     string
	Compare  []string // --compare A B: two stored evals
	List     bool
	Watch    bool
}

func newEvalCmd(io *IOStreams, g *globals, runF func(context.Context, *EvalOptions) error) *cobra.Command {
	opts := &EvalOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "eval <simulation-dir> [--suite FILE]",
		Short: "Evaluate prompt and model variants on situations from the simulation's runs",
		Long: `Run an eval suite (default: evals.yaml in the simulation's folder): its cases are
calls of the simulation's committed ticks (cases.ticks, phases, entities, a
seeded sample, or hand-written files that change the state), each made as the
run made it, by the baseline (the simulation's templates and configuration as
they are) and by each variant (templates laid over them, another model,
temperature, max_tokens or endpoint), repeat times.

Every answer is checked: its schema and the kind's own checks always, and the
suite's assertions of its phase (equals, contains, matches, length at a JSON
pointer; no_fallback, max_cost, max_latency; the kind's own, below; judge, a
rubric a judge model grades).

The table gives each variant's pass rates with 95% intervals, schema-valid rate,
repairs, fallbacks, tokens, cost and latency, then each variant against the
baseline on the same cases (wins, losses, ties and the sign test's p). Answers
are cached in eval.db beside state.db by request, so an unchanged variant costs
nothing on a rerun (--no-cache asks again); each eval is stored there too:
--list lists them, --compare A,B compares two (--html FILE: one page with
each variant of B beside itself in A). --variant NAME (repeatable)
runs only the named variants beside the baseline; --sample N and --repeat K
set the suite's cases.sample and repeat for one run. Exit code: 0 when every
threshold (min_pass_rate) is met, 5 when one is not, 2 for bad input, 130 when
interrupted (the answers that came are kept in the cache).

The kinds' own assertions and checks:
` + session.Help("eval"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(opts.Compare) == 1 && len(args) == 2 {
				// --compare 1 2: the second id was read as an argument.
				return usageErrorf("--compare takes two stored evals joined by a comma, --compare A,B (ids from --list, or latest): got --compare %s and 2 arguments", opts.Compare[0])
			}
			return exactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.checkFlags(); err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd.Flags(), map[string]string{"base-url": "llm.base_url", "concurrency": "llm.concurrency"})
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runEval(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Suite, "suite", "", "the suite file (default: evals.yaml in the simulation's folder)")
	f.StringArrayVar(&opts.Variants, "variant", nil, "run only this variant of the suite beside the baseline (repeatable)")
	f.IntVar(&opts.Sample, "sample", 0, "make at most this many of the suite's cases, a seeded sample (cases.sample)")
	f.IntVar(&opts.Repeat, "repeat", 0, "ask each case this many times of each variant (the suite's repeat)")
	f.BoolVar(&opts.NoCache, "no-cache", false, "ask every call again rather than answer from eval.db")
	f.StringVar(&opts.JUnit, "junit", "", "write the result as JUnit XML to this file (for CI)")
	f.StringVar(&opts.HTML, "html", "", "write the result as one self-contained HTML page to this file")
	f.StringSliceVar(&opts.Compare, "compare", nil, "compare two stored evals: --compare A,B (ids from --list, or latest)")
	f.BoolVar(&opts.List, "list", false, "list the evals stored in eval.db")
	f.BoolVar(&opts.Watch, "watch", false, "run again whenever a variant's template file changes")
	f.String("base-url", "", "OpenAI-compatible endpoint (llm.base_url)")
	f.Int("concurrency", 0, "model calls in flight at once (llm.concurrency)")
	return cmd
}

// checkFlags refuses flags that do not go together, rather than leaving
// one unheeded: --list and --compare read stored evals, so the flags of a
// run of the suite do nothing there.
func (opts *EvalOptions) checkFlags() error {
	if len(opts.Compare) != 0 && len(opts.Compare) != 2 {
		return usageErrorf("--compare takes two stored evals joined by a comma, --compare A,B (ids from --list, or latest), got %d", len(opts.Compare))
	}
	if opts.Sample < 0 {
		return usageErrorf("--sample must be at least 1, got %d", opts.Sample)
	}
	if opts.Repeat < 0 || opts.Repeat > eval.MaxRepeat {
		return usageErrorf("--repeat must be 1 to %d, got %d", eval.MaxRepeat, opts.Repeat)
	}
	if !opts.List && len(opts.Compare) == 0 {
		return nil
	}
	stored := "--compare"
	if opts.List {
		stored = "--list"
	}
	for _, f := range []struct {
		given bool
		name  string
	}{{opts.List && len(opts.Compare) > 0, "--compare"}, {opts.Watch, "--watch"}, {opts.NoCache, "--no-cache"}, {opts.JUnit != "", "--junit"},
		{opts.List && opts.HTML != "", "--html"}, {len(opts.Variants) > 0, "--variant"}, {opts.Suite != "", "--suite"},
		{opts.Sample > 0, "--sample"}, {opts.Repeat > 0, "--repeat"}} {
		if f.given {
			return usageErrorf("%s reads the evals stored in eval.db and runs none: %s is for a run of the suite", stored, f.name)
		}
	}
	return nil
}

func runEval(ctx context.Context, opts *EvalOptions) error {
	if opts.List || len(opts.Compare) == 2 {
		return runStoredEvals(ctx, opts)
	}
	if opts.Watch {
		return watchEval(ctx, opts)
	}
	res, err := evalOnce(ctx, opts)
	if res == nil {
		return err
	}
	if werr := writeEvalOutputs(opts, res); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	if !res.Passed {
		return &exitError{code: ExitEvalFailed, err: fmt.Errorf("%s", failedThresholds(res))}
	}
	return nil
}

// evalOnce opens the simulation, reads the suite, builds every variant and
// runs the eval, storing its result. An interrupted eval returns what it
// has with the interruption.
func evalOnce(ctx context.Context, opts *EvalOptions) (_ *eval.Result, err error) {
	ctx, untrace, err := traced(ctx, opts.IO, opts.Config, "eval", opts.Dir, "")
	if err != nil {
		return nil, err
	}
	defer func() { untrace(err) }()
	set, err := opts.Config.settings(true, "")
	if err != nil {
		return nil, err
	}
	base, err := session.Open(ctx, opts.Dir, set, session.ReadOnly)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	phases, err := base.CallPhases()
	if err != nil {
		return nil, err
	}
	suite, err := eval.LoadSuite(eval.SuiteFile(opts.Dir, opts.Suite), phases, base.KindAssertions())
	if err != nil {
		return nil, usageError(err)
	}
	if err := keepVariants(suite, opts.Variants); err != nil {
		return nil, err
	}
	if opts.Sample > 0 {
		suite.Cases.Sample = opts.Sample
	}
	if opts.Repeat > 0 {
		suite.Repeat = opts.Repeat
	}
	cases, err := eval.Cases(ctx, base, suite.Cases)
	if err != nil {
		return nil, usageError(err)
	}
	r, closeArms, err := evalRunner(ctx, opts, set, suite)
	if err != nil {
		return nil, err
	}
	defer closeArms()
	db, err := eval.OpenDB(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r.DB, r.NoCache, r.Prices = db, opts.NoCache, opts.Config.prices()
	r.Progress = evalProgress(opts.IO)
	res, err := r.Run(ctx, cases)
	if opts.IO.ErrTTY {
		writeControl(opts.IO.ErrOut, "\r\033[K")
	}
	if res == nil {
		return nil, err
	}
	if serr := db.Save(context.WithoutCancel(ctx), res); serr != nil {
		return res, errors.Join(err, serr)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%w: the %d answers that came are kept in %s; run the eval again to ask the rest", session.ErrInterrupted, len(res.Answers), eval.DBFile)
	}
	return res, err
}

// keepVariants narrows suite to the variants names (every one when names
// is empty); the baseline is run whatever names say, as the others are
// compared with it. A name the suite does not have is refused.
func keepVariants(suite *eval.Suite, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var kept []eval.Variant
	for _, n := range names {
		v, ok := suite.Variant(n)
		switch {
		case !ok:
			return usageErrorf("--variant %s: no variant %q in %s (%s; %s is the simulation as it is)", n, n, suite.Path, suite.VariantNames(), eval.Baseline)
		case n != eval.Baseline && !slices.ContainsFunc(kept, func(k eval.Variant) bool { return k.Name == n }):
			kept = append(kept, v)
		}
	}
	suite.Variants = kept
	return nil
}

// evalProgress is the progress line on a terminal's stderr.
func evalProgress(io *IOStreams) func(done, total, cached int) {
	if !io.ErrTTY {
		return nil
	}
	var mu sync.Mutex // the workers report at once
	return func(done, total, cached int) {
		mu.Lock()
		defer mu.Unlock()
		writeControl(io.ErrOut, "\r\033[K")
		fmt.Fprintf(io.ErrOut, "eval: %d/%d answers (%d cached)", done, total, cached)
	}
}

// evalRunner builds the baseline and every variant of suite, each opened
// with its own templates and settings (a template that does not parse is
// an error naming its file before any call), and the judge.
func evalRunner(ctx context.Context, opts *EvalOptions, set session.Settings, suite *eval.Suite) (*eval.Runner, func(), error) {
	r := &eval.Runner{Suite: suite}
	var opened []*session.Session
	closeAll := func() {
		for _, s := range opened {
			s.Close()
		}
	}
	clients := map[string]*session.Client{}
	variants := append([]eval.Variant{{Name: eval.Baseline}}, suite.Variants...)
	for _, v := range variants {
		arm, err := openArm(ctx, opts, set, v, clients)
		if arm.Session != nil {
			opened = append(opened, arm.Session)
		}
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		r.Arms = append(r.Arms, arm)
	}
	if suite.Judge != nil {
		c, params, err := judgeClient(opts, suite)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		r.Judge, r.JudgeParams = c, params
	}
	return r, closeAll, nil
}

// openArm opens the simulation as variant v makes its calls; variants on
// one endpoint share its client.
func openArm(ctx context.Context, opts *EvalOptions, set session.Settings, v eval.Variant, clients map[string]*session.Client) (eval.Arm, error) {
	s, err := session.Open(ctx, opts.Dir, variantSettings(opts.Config, set, v), session.ReadOnly)
	if err != nil {
		if v.Name != eval.Baseline {
			err = fmt.Errorf("variant %s: %w", v.Name, err)
		}
		return eval.Arm{}, err
	}
	arm := eval.Arm{Name: v.Name, Session: s, Endpoint: v.Endpoint, Templates: v.Templates}
	if arm.Client = clients[v.Endpoint]; arm.Client == nil {
		if arm.Client, err = s.TryClient(opts.Globals.logger(opts.IO)); err != nil {
			return arm, err
		}
		clients[v.Endpoint] = arm.Client
	}
	return arm, nil
}

// variantSettings are set as variant v changes them: its templates laid
// over the simulation's, its settings over simulation.yaml's, its model,
// temperature and max tokens for every phase, its endpoint.
func variantSettings(cfg *Config, set session.Settings, v eval.Variant) session.Settings {
	vs := withModel(set, v.Model)
	vs.Templates, vs.SimSettings = v.Templates, v.Settings
	if v.Temperature != nil {
		vs.Override.Temperature = v.Temperature
	}
	if v.MaxTokens > 0 {
		vs.Override.MaxTokens = v.MaxTokens
	}
	if v.Endpoint != "" {
		vs.LLM = endpointLLM(cfg, v.Endpoint, "")
	}
	return vs
}

// endpointLLM is the client configuration of the simulation's config with
// its calls sent to endpoint: the name of one of llm.endpoints, or a base
// URL; keyEnv, when set, names the variable holding its key.
func endpointLLM(cfg *Config, endpoint, keyEnv string) func() (session.ClientConfig, error) {
	return func() (session.ClientConfig, error) {
		c := cfg.llmConfig(endpoint)
		c.Endpoints, c.PhaseEndpoints = nil, nil
		for _, e := range cfg.LLM.Endpoints {
			if e.Name == endpoint {
				c.BaseURL, c.APIKey = strings.TrimRight(e.BaseURL, "/"), e.Key()
			}
		}
		if keyEnv != "" {
			c.APIKey = os.Getenv(keyEnv)
		}
		if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
			names := []string{}
			for _, e := range cfg.LLM.Endpoints {
				names = append(names, e.Name)
			}
			return c, usageErrorf("endpoint %q: neither a base URL (http://...) nor one of llm.endpoints (%s)", endpoint, strings.Join(slices.DeleteFunc(names, func(s string) bool { return s == "" }), ", "))
		}
		return c, nil
	}
}

// judgeClient is the judge's client: its own endpoint and key when the
// suite names them, else the simulation's.
func judgeClient(opts *EvalOptions, suite *eval.Suite) (*session.Client, session.Params, error) {
	j := suite.Judge
	params := session.Params{Model: j.Model, Temperature: j.Temperature, MaxTokens: j.MaxTokens}
	if params.MaxTokens == 0 {
		params.MaxTokens = 400
	}
	cfgOf := func() (session.ClientConfig, error) {
		url, err := opts.Config.endpoint()
		return opts.Config.llmConfig(url), err
	}
	if j.Endpoint != "" || j.APIKeyEnv != "" {
		cfgOf = endpointLLM(opts.Config, cmpOr(j.Endpoint, opts.Config.LLM.BaseURL), j.APIKeyEnv)
	}
	c, err := cfgOf()
	if err != nil {
		return nil, params, fmt.Errorf("%s: judge: %w (set judge.endpoint, or configure the simulation's endpoint)", suite.Path, err)
	}
	client, err := session.NewClient(c)
	if err != nil {
		return nil, params, fmt.Errorf("%s: judge: %w", suite.Path, err)
	}
	return client, params, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
