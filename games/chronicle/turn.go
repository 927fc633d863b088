package chronicle

import "github.com/arbiter-sim/arbiter/llm"

// chatRequest is the whole conversation as the model sees it: the system
// prompt, then every message (the person's as user turns, the model's as
// assistant turns, the system's as user turns starting "System:"), then the
// current timeline. Turns of the same role in a row are joined, for servers
// that require user and assistant to alternate.
func (g *Game) chatRequest(params llm.Params) llm.ChatRequest {
	msgs := []llm.Message{{Role: "system", Content: g.prompt}}
	add := func(role, content string) {
		if last := &msgs[len(msgs)-1]; last.Role == role && len(msgs) > 1 {
			last.Content += "\n\n" + content
			return
		}
		msgs = append(msgs, llm.Message{Role: role, Content: content})
	}
	for _, m := range g.msgs {
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
