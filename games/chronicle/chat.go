package chronicle

import "github.com/arbiter-sim/arbiter/session"

// Chat: a chronicle is played in conversation with the model.
func (g *Game) Chat() session.Chat { return chat{g} }

// chat is the chronicle as `arbiter chat` plays it.
type chat struct{ g *Game }

func (c chat) Heading() (string, string) { return c.g.Title, c.g.BigPicture }

func (chat) View(state any) session.ChatView {
	s := state.(*State)
	v := session.ChatView{Stage: string(s.Timeline.Stage), Timeline: s.Timeline.Tree(), LastModel: s.LastModelMessage()}
	v.Messages = make([]session.ChatMessage, len(s.Messages))
	for i, m := range s.Messages {
		v.Messages[i] = session.ChatMessage{Role: string(m.Role), Text: m.Text, Shown: Display(m), Rejected: m.Rejected}
	}
	return v
}

func (chat) Raw(state any, n int) (string, error) { return state.(*State).Raw(n) }

func (chat) Copy(state any, n int) (string, error) {
	m, err := state.(*State).Message(n)
	return m.Text, err
}

func (chat) Say(text string) any { return Say{Text: text} }
func (chat) Reply() any          { return Reply{} }
func (chat) Restart(n int) any   { return Restart{N: n} }
func (chat) Reparse(n int) any   { return Reparse{N: n} }
func (chat) StartPlay() any      { return StartPlay{} }
