package chronicle

import (
	"fmt"

	"github.com/arbiter-sim/arbiter/llm"
)

// chatRequest is the conversation as the model sees it: the system prompt,
// then the messages (the person's as user turns, the model's as assistant
// turns, the system's as user turns starting "System:") — the last Window of
// them when Window is set, after a note that earlier ones are left out — then
// the current timeline, which carries everything the left-out messages built.
// Turns of the same role in a row are joined, for servers that require user
// and assistant to alternate.
func (g *Game) chatRequest(params llm.Params) llm.ChatRequest {
	msgs := []llm.Message{{Role: "system", Content: g.prompt}}
	add := func(role, content string) {
		if last := &msgs[len(msgs)-1]; last.Role == role && len(msgs) > 1 {
			last.Content += "\n\n" + content
			return
		}
		msgs = append(msgs, llm.Message{Role: role, Content: content})
	}
	sent := g.msgs
	if g.Window > 0 && len(sent) > g.Window {
		sent = sent[len(sent)-g.Window:]
		add("user", fmt.Sprintf("System: the %d earliest messages of this conversation are left out; the timeline at the end is complete and current.", len(g.msgs)-len(sent)))
	}
	for _, m := range sent {
		switch m.Role {
		case Person:
			add("user", m.Text)
		case Model:
			add("assistant", m.Text)
		default:
			add("user", "System: "+m.Text)
		}
	}
	add("user", "System: the current timeline.\n"+g.tl.Tree()+"\nWrite your next message to the person.")
	return llm.ChatRequest{EntityKey: "chronicle:" + g.ID, Params: params, Messages: msgs}
}
