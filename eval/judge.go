package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/schemas"
	"github.com/arbiter-sim/arbiter/session"
)

// JudgeVerdict is the judge model's answer: whether the answer meets the
// rubric, how well (0 to 1), and why.
type JudgeVerdict struct {
	Pass   bool    `json:"pass" jsonschema_description:"Whether the answer meets the rubric."`
	Score  float64 `json:"score" jsonschema:"minimum=0,maximum=1" jsonschema_description:"How well the answer meets the rubric, from 0 (not at all) to 1 (fully)."`
	Reason string  `json:"reason" jsonschema:"maxLength=400" jsonschema_description:"Why, in one or two sentences."`
}

var judgeSchema = sync.OnceValues(func() (json.RawMessage, error) { return schemas.Generate(JudgeVerdict{}) })

const judgeSystem = `You grade one answer that a model gave in a simulation, against a rubric.
Read the request the model was given and its answer, then say whether the
answer meets the rubric (pass), how well from 0 to 1 (score), and why
(reason). Judge only what the rubric asks.`

// judgeRequest is the judge call for the answer res to the request of j.
func (r *Runner) judgeRequest(a *Assertion, j job, res llm.Result) (llm.Request, error) {
	schema, err := judgeSchema()
	if err != nil {
		return llm.Request{}, err
	}
	answer := res.Raw
	if res.Output != nil {
		answer = string(res.Output)
	}
	prompt := ""
	if n := len(j.call.Messages); n > 0 {
		prompt = j.call.Messages[n-1].Content
	}
	user := fmt.Sprintf("Rubric:\n%s\n\nThe request's prompt:\n%s\n\nThe answer:\n%s\n", a.Rubric, prompt, answer)
	return llm.Request{EntityKey: "judge:" + j.call.Request.EntityKey, Phase: "judge", Tick: j.call.Request.Tick, Params: r.JudgeParams,
		System: judgeSystem, User: user, SchemaName: "JudgeVerdict", Schema: schema, Past: []llm.Exchange{}}, nil
}

// judge asks the judge whether res meets a's rubric. A judge that fails,
// or whose answer fails its schema, is a judge error: counted apart, never
// a pass or a fail. A failed call has nothing to judge: it fails.
func (r *Runner) judge(ctx context.Context, a *Assertion, j job, res llm.Result) Outcome {
	if res.Err != nil {
		return outcome(a.Name, false, "no answer to judge: the call failed")
	}
	if r.Judge == nil {
		return Outcome{Assertion: a.Name, JudgeError: "no judge configured"}
	}
	req, err := r.judgeRequest(a, j, res)
	if err != nil {
		return Outcome{Assertion: a.Name, JudgeError: err.Error()}
	}
	key := requestKey(session.StructuredCall(req).Key, "judge") + "/" + fmt.Sprint(j.repeat)
	var ca cachedAnswer
	hit := false
	if r.DB != nil && !r.NoCache {
		ca, hit, _ = r.DB.answer(ctx, key)
	}
	if !hit {
		jr := r.Judge.Complete(ctx, req)
		ca = cached(jr)
		if r.DB != nil && cacheable(jr) && ctx.Err() == nil {
			_ = r.DB.putAnswer(ctx, key, ca) // a judge answer not cached is asked again
		}
	}
	if ca.Error != "" {
		return Outcome{Assertion: a.Name, JudgeError: fmt.Sprintf("judge %s: %s", ca.ErrorKind, ca.Error)}
	}
	var v JudgeVerdict
	if err := json.Unmarshal(ca.Output, &v); err != nil || v.Score < 0 || v.Score > 1 {
		return Outcome{Assertion: a.Name, JudgeError: fmt.Sprintf("judge answer unreadable: %s", short(string(ca.Output)))}
	}
	o := outcome(a.Name, v.Pass, v.Reason)
	o.Score = &v.Score
	return o
}
