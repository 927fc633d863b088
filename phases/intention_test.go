package phases

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
)

func TestIntentionOnePerCharacter(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	res, err := intentionPhase(context.Background(), env, env.Sim.InitialState())
	if err != nil {
		t.Fatal(err)
	}
	if srv.CallCount() != 3 || len(Values(res)) != 3 || len(fallbackIDs(res)) != 0 {
		t.Fatalf("calls %d intentions %v fallback %v; want 3, 3, none", srv.CallCount(), Values(res), fallbackIDs(res))
	}
	for i, id := range []string{"ada", "bo", "cy"} {
		c := results(res)[i]
		if c.Request.EntityKey != "intention:"+id || c.Request.SchemaName != "IntentionResponse" || c.Request.Tick != 1 {
			t.Errorf("request %d: key %q schema %q tick %d", i, c.Request.EntityKey, c.Request.SchemaName, c.Request.Tick)
		}
		if Values(res)[id] == "" {
			t.Errorf("%s has no intention", id)
		}
	}
	for _, c := range srv.Calls() {
		if c.SchemaName() != "IntentionResponse" || !c.Strict() {
			t.Errorf("wire: schema %q strict %v", c.SchemaName(), c.Strict())
		}
	}
}

func TestIntentionFallbackKeepsExternalIntent(t *testing.T) {
	h := openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
		If:   func(c *openaitest.Call) bool { return strings.Contains(c.SystemMessage(), "Bo") },
		Then: openaitest.Always(openaitest.Status(503, "server_error", "", "overloaded")),
	})
	env, _, logs := testEnv(t, h)
	st := env.Sim.InitialState()
	res, err := intentionPhase(context.Background(), env, st)
	if err != nil {
		t.Fatal(err)
	}
	if !fallbacks(res)["bo"] || fallbacks(res)["ada"] || fallbacks(res)["cy"] {
		t.Errorf("fallback %v, want bo only", fallbackIDs(res))
	}
	if Values(res)["bo"] != "steal" {
		t.Errorf("bo's intention %q, want his external_intent %q", Values(res)["bo"], "steal")
	}
	if !strings.Contains(logs.String(), "Phase 1: bo fallback (server: ") {
		t.Errorf("no warning for bo's fallback:\n%s", logs.String())
	}
}

// TestIntentionAnswerOffSchemaFallsBack: an answer that breaks the
// intention schema is refused, since the phase reads what the client has
// checked against that schema without checking it again, and the character
// falls back to its external intent.
func TestIntentionAnswerOffSchemaFallsBack(t *testing.T) {
	for _, answer := range []string{`{"intention":"x","extra":1}`, `{}`, `{"intention":5}`} {
		h := openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
			If:   func(c *openaitest.Call) bool { return strings.Contains(c.SystemMessage(), "Bo") },
			Then: openaitest.Always(openaitest.JSON(answer)),
		})
		env, _, _ := testEnv(t, h)
		res, err := intentionPhase(context.Background(), env, env.Sim.InitialState())
		if err != nil {
			t.Fatal(err)
		}
		if !fallbacks(res)["bo"] || Values(res)["bo"] != "steal" || fallbacks(res)["ada"] {
			t.Errorf("answer %s: fallbacks %v, bo's intention %q; want bo's external intent", answer, fallbackIDs(res), Values(res)["bo"])
		}
		for _, c := range results(res) {
			if c.Request.EntityKey == "intention:bo" && llm.ErrorKindOf(c.Err) != llm.KindSchema {
				t.Errorf("answer %s: bo's call failed with %v, want a schema error", answer, c.Err)
			}
		}
	}
}
