package chronicle

import (
	"fmt"

	"github.com/arbiter-sim/arbiter/session"
)

// Chat: a chronicle is played in conversation with the model.
func (g *Game) Chat() session.Chat { return chat{g} }

// chat is the chronicle as `arbiter chat` plays it.
type chat struct{ g *Game }

func (c chat) Heading() (string, string) { return c.g.Title, c.g.BigPicture }

func (chat) View(state any) session.ChatView {
	s := state.(*State)
	v := session.ChatView{Stage: string(s.Timeline.Stage), LastModel: s.LastModelMessage()}
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

func (chat) Help() string {
	return "Lines that start with CREATE PERIOD, CREATE EVENT or CREATE PALETTE are commands, yours or the model's.\n"
}

// Commands: /timeline shows the timeline the conversation built, /play
// ends setup.
func (c chat) Commands() []session.ChatCommand {
	return []session.ChatCommand{
		{Names: []string{"/timeline", "/t"}, Help: "show the timeline", Run: func(state any) (string, any) {
			return fmt.Sprintf("%s\nBig picture: %s\n%s", c.g.Title, c.g.BigPicture, state.(*State).Timeline.Tree()), nil
		}},
		{Names: []string{"/play"}, Help: "end setup and start play (both bookends must exist)", Run: func(any) (string, any) {
			return "", StartPlay{}
		}},
	}
}
