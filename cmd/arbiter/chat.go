package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-sim/arbiter/session"
)

// chat is the terminal loop of `arbiter chat`: the person types messages and
// slash commands on in, the conversation is written to out, and every move
// is a turn of the session, committed to state.db.
type chat struct {
	s    *session.Session
	conv session.Chat
	in   io.Reader
	out  io.Writer
	// clipboard is set when the terminal takes OSC 52: /copy then puts the
	// text on the clipboard; otherwise /copy prints it plain.
	clipboard bool
	// status, when set (stderr on a terminal), shows how long the model
	// has been writing while a call is out.
	status io.Writer
}

// chatCommands are the chat's own slash commands, listed by /help after the
// kind's.
const chatCommands = `  /raw N        show model message N as it was written, before command parsing
  /reparse N    parse model message N again and apply its commands if they are valid now
  /restart N    delete model message N and everything after it, and ask the model again
  /restart      ask the model again for its last message (or for an answer if it has none)
  /copy N       copy message N to the clipboard (or print it when the terminal cannot)
  /history      show the whole conversation
  /help         show this help
  /quit         leave (Ctrl-D works too); every message is saved as it is made
`

// help is what /help prints: how to write, what a message can hold (the
// kind's lines), then the kind's commands and the chat's.
func (c *chat) help() string {
	var b strings.Builder
	b.WriteString("Type a message and press Enter; the model answers.\n")
	b.WriteString(c.conv.Help())
	b.WriteString(`For a message of several lines, type """ on a line, the lines, then """ again.
When your own commands are rejected, the model is not asked: fix them, or write on.

`)
	for _, k := range c.conv.Commands() {
		fmt.Fprintf(&b, "  %-13s %s\n", k.Names[0], k.Help)
	}
	b.WriteString(chatCommands)
	return b.String()
}

// command runs the kind's slash command called name, if it has one.
func (c *chat) command(ctx context.Context, name string) (bool, error) {
	for _, k := range c.conv.Commands() {
		if slices.Contains(k.Names, name) {
			show, move := k.Run(c.s.State())
			if show != "" {
				fmt.Fprint(c.out, show)
			}
			if move != nil {
				return true, c.moveAndShow(ctx, move, len(c.view().Messages)+1)
			}
			return true, nil
		}
	}
	return false, nil
}

// view is the conversation as the session's state holds it now.
func (c *chat) view() session.ChatView { return c.conv.View(c.s.State()) }

// run reads the person's input until it ends, /quit, or ctx ends (its error
// is then returned). Model failures and refused moves are shown and the chat
// goes on; an error storing a turn ends it.
func (c *chat) run(ctx context.Context) error {
	c.banner()
	in := newLines(c.in)
	defer in.close()
	next := func() (string, bool, error) { return in.next(ctx) }
	for {
		// The prompt numbers the message about to be typed, as /raw N and
		// the messages on screen count.
		fmt.Fprintf(c.out, "[%d] you> ", len(c.view().Messages)+1)
		line, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(c.out)
			return nil
		}
		line = strings.TrimSpace(line)
		if line == `"""` {
			var block []string
			for {
				l, ok, err := next()
				if err != nil {
					return err
				}
				if !ok || strings.TrimSpace(l) == `"""` {
					break
				}
				block = append(block, l)
			}
			line = strings.TrimSpace(strings.Join(block, "\n"))
		}
		if line == "" {
			continue
		}
		quit, err := c.handle(ctx, line)
		if err != nil || quit {
			return err
		}
	}
}

// handle acts on one input; it reports whether the chat should end.
func (c *chat) handle(ctx context.Context, line string) (bool, error) {
	if !strings.HasPrefix(line, "/") {
		first := len(c.view().Messages) + 1
		if err := c.move(ctx, c.conv.Say(line)); err != nil {
			return true, err
		}
		msgs := c.view().Messages
		c.print(first+1, msgs[first:]...) // the person's own message is on screen already
		if msgs[first-1].Rejected {
			return false, nil // the person fixes their commands first
		}
		return false, c.reply(ctx, 0)
	}
	fields := strings.Fields(line)
	name, args := strings.ToLower(fields[0]), fields[1:]
	switch name {
	case "/quit", "/exit", "/q":
		return true, nil
	case "/help", "/?":
		fmt.Fprint(c.out, c.help())
	case "/history":
		c.print(1, c.view().Messages...)
	case "/raw", "/reparse", "/copy":
		n, ok := c.number(name, args)
		if !ok {
			return false, nil
		}
		return false, c.action(ctx, name, n)
	case "/restart":
		n := c.view().LastModel // 0: just ask for an answer
		if len(args) > 0 {
			var ok bool
			if n, ok = c.number(name, args); !ok {
				return false, nil
			}
		}
		return false, c.reply(ctx, n)
	default:
		if ok, err := c.command(ctx, name); ok || err != nil {
			return false, err
		}
		fmt.Fprintf(c.out, "! unknown command %s; /help lists the commands\n", fields[0])
	}
	return false, nil
}

// move plays one move. A refused move is shown and changes nothing; the
// chat goes on.
func (c *chat) move(ctx context.Context, m any) error {
	_, err := c.s.Turn(ctx, m)
	if errors.Is(err, session.ErrRefused) {
		fmt.Fprintf(c.out, "! %v\n", err)
		return errRefused
	}
	return err
}

// errRefused says a move was refused and shown; it ends nothing.
var errRefused = errors.New("refused")

// moveAndShow plays a move and shows the messages from number first on.
func (c *chat) moveAndShow(ctx context.Context, m any, first int) error {
	if err := c.move(ctx, m); err != nil {
		if errors.Is(err, errRefused) {
			return nil
		}
		return err
	}
	c.print(first, c.view().Messages[first-1:]...)
	return nil
}

// action runs /raw, /reparse or /copy on message n.
func (c *chat) action(ctx context.Context, name string, n int) error {
	switch name {
	case "/raw":
		text, err := c.conv.Raw(c.s.State(), n)
		if err != nil {
			fmt.Fprintf(c.out, "! %v\n", err)
			return nil
		}
		fmt.Fprintf(c.out, "[%d] model, as written:\n%s\n", n, text)
	case "/reparse":
		return c.moveAndShow(ctx, c.conv.Reparse(n), len(c.view().Messages)+1)
	case "/copy":
		text, err := c.conv.Copy(c.s.State(), n)
		if err != nil {
			fmt.Fprintf(c.out, "! %v\n", err)
			return nil
		}
		if c.clipboard {
			// The one escape arbiter writes on purpose: the person asked for it.
			writeControl(c.out, osc52(text))
			fmt.Fprintf(c.out, "Copied message %d to the clipboard (%s).\n", n, plural(len(text), "character"))
		} else {
			fmt.Fprintln(c.out, text)
		}
	}
	return nil
}

// reply asks the model for its next message (n 0), or again in place of
// model message n and what follows it (n > 0). A failed model call is shown
// and changes nothing.
func (c *chat) reply(ctx context.Context, n int) error {
	var (
		move  = c.conv.Reply()
		first = len(c.view().Messages) + 1
	)
	if n > 0 {
		move, first = c.conv.Restart(n), n
	}
	stop := c.working()
	err := c.move(ctx, move)
	stop()
	switch shown, modelFailed := session.ModelFailure(err); {
	case err == nil:
		c.print(first, c.view().Messages[first-1:]...)
		return nil
	case errors.Is(err, errRefused):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case modelFailed:
		fmt.Fprintf(c.out, "⚠️ Model call failed: %v\n   Nothing was added. Send a message, or /restart to ask again.\n", shown)
		return nil
	}
	return err // storing the turn failed
}

// working shows "model is writing… 2.4s" on the status line, refreshed
// every 200ms, until the returned stop is called, which clears the line.
// Without a status line it does nothing.
func (c *chat) working() (stop func()) {
	if c.status == nil {
		return func() {}
	}
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			writeControl(c.status, "\r\033[K")
			fmt.Fprintf(c.status, "model is writing… %.1fs", time.Since(start).Seconds())
			select {
			case <-done:
				writeControl(c.status, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// number reads the message number argument of a command.
func (c *chat) number(name string, args []string) (int, bool) {
	if len(args) != 1 {
		fmt.Fprintf(c.out, "! %s needs one message number, e.g. %s 3\n", name, name)
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
	if err != nil || n < 1 {
		fmt.Fprintf(c.out, "! %s: %q is not a message number (messages are numbered from 1)\n", name, args[0])
		return 0, false
	}
	return n, true
}

// print shows messages numbered from first.
func (c *chat) print(first int, msgs ...session.ChatMessage) {
	for i, m := range msgs {
		n := first + i
		switch m.Role {
		case session.ChatModel:
			fmt.Fprintf(c.out, "[%d] model:\n%s\n", n, indent(m.Shown))
		case session.ChatPerson:
			fmt.Fprintf(c.out, "[%d] you:\n%s\n", n, indent(m.Shown))
		default:
			fmt.Fprintf(c.out, "[%d] %s\n", n, m.Text)
		}
	}
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func (c *chat) banner() {
	st := c.view()
	title, picture := c.conv.Heading()
	fmt.Fprintf(c.out, "%s\n%s\n\n", title, picture)
	fmt.Fprintf(c.out, "Phase: %s. %s so far, saved in %s. /help lists the commands.\n",
		st.Stage, plural(len(st.Messages), "message"), session.StatePath(c.s.Dir))
	if k := len(st.Messages); k > 0 {
		from := max(0, k-3)
		c.print(from+1, st.Messages[from:]...)
	}
}

// osc52 is the terminal escape sequence that puts text on the system
// clipboard (OSC 52, understood by xterm, iTerm2, kitty, WezTerm, Windows
// Terminal, foot, tmux with set-clipboard on, ...).
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
}
