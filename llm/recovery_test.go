package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// issue 21 item 13: a tool turn and a chat turn report the transient
// failures retry went past, or tried to, as Complete does, so that the
// runner emits them (seed 002: TOOL_FAILURE, then RECOVERY_ATTEMPT).
func TestToolAndChatCallsReportRetries(t *testing.T) {
	t.Parallel()
	boom := openaitest.Status(500, "server_error", "", "boom")
	call := map[string]struct {
		ok   openaitest.Reply
		send func(t *testing.T, c *Client) ([]Recovery, int, error)
	}{
		"tools": {
			openaitest.ToolCalls(openaitest.Tool("c1", "submit_orders", map[string]any{"orders": []string{}})),
			func(t *testing.T, c *Client) ([]Recovery, int, error) {
				res := c.CompleteTools(t.Context(), ToolRequest{EntityKey: "agent:red", Params: Params{Model: "m"},
					Messages: []Message{{Role: "user", Content: "go"}}, Tools: ordersTools})
				return res.Recoveries, res.Attempts, res.Err
			},
		},
		"chat": {
			openaitest.Content("Hello."),
			func(t *testing.T, c *Client) ([]Recovery, int, error) {
				res := c.Chat(t.Context(), chatRequest())
				return res.Recoveries, res.Attempts, res.Err
			},
		},
	}
	for name, k := range call {
		for _, tt := range []struct {
			name    string
			replies []openaitest.Reply
			fail    bool
			want    string // strategy:success of each recovery
		}{
			{"ok", []openaitest.Reply{k.ok}, false, ""},
			{"500 then ok", []openaitest.Reply{boom, k.ok}, false, "retry:true"},
			{"500 twice", []openaitest.Reply{boom}, true, "retry:false"},
		} {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := openaitest.New(t, openaitest.Sequence(tt.replies...))
				c, _ := newTestClient(t, srv.URL, nil)
				recs, attempts, err := k.send(t, c)
				if (err != nil) != tt.fail || attempts != srv.CallCount() {
					t.Errorf("err %v, %d attempts for %d requests; want failure %v", err, attempts, srv.CallCount(), tt.fail)
				}
				var got []string
				for _, r := range recs {
					if !errors.Is(r.Err, ErrServer) {
						t.Errorf("recovery %+v: want the 500 it went past", r)
					}
					got = append(got, fmt.Sprintf("%s:%v", r.Strategy, r.Success))
				}
				if strings.Join(got, ",") != tt.want {
					t.Errorf("recoveries %v, want %q", got, tt.want)
				}
			})
		}
	}
}
