package session

// Chat is a kind played as a conversation between a person and the model
// (`arbiter chat`). The kind says what its state shows of the conversation
// and which move each thing the person does is; the terminal loop stays in
// the CLI, and every move is a turn of the session (Turn).
type Chat interface {
	// Heading is the title and the picture shown above the conversation
	// and above its timeline.
	Heading() (title, picture string)
	// View is what state shows of the conversation.
	View(state any) ChatView
	// Raw is model message n as the model wrote it, before its commands
	// were read; Copy is the text of message n. A number that names no
	// such message is an error saying why.
	Raw(state any, n int) (string, error)
	Copy(state any, n int) (string, error)

	// The moves: the person's message, the model's next message, model
	// message n asked for again (with all that follows it dropped), and
	// the commands of model message n read again.
	Say(text string) any
	Reply() any
	Restart(n int) any
	Reparse(n int) any

	// Help is the kind's lines of /help about what a message can hold
	// (its commands), shown after the chat's first line.
	Help() string
	// Commands are the kind's own slash commands, listed by /help before
	// the chat's.
	Commands() []ChatCommand
}

// ChatCommand is a slash command a kind adds to the chat: /timeline shows
// what the conversation built, /play moves it into play.
type ChatCommand struct {
	Names []string // "/timeline", then its short forms ("/t")
	Help  string   // one line: what it does
	// Run is the command on the conversation's state: a text to show, or a
	// move to play (and the messages it adds shown).
	Run func(state any) (show string, move any)
}

// ChatView is a conversation as the chat shows it.
type ChatView struct {
	Stage    string
	Messages []ChatMessage // numbered from 1
	// LastModel is the number of the last message when it is the model's,
	// else 0.
	LastModel int
}

// The writers of a chat's messages; any other (the game's own notes) is
// shown as its Text alone.
const (
	ChatPerson = "person"
	ChatModel  = "model"
)

// ChatMessage is one message of a chat.
type ChatMessage struct {
	Role  string
	Text  string // as written
	Shown string // as the chat shows it (what its commands applied)
	// Rejected is set on a message whose commands were not applied.
	Rejected bool
}
