package chronicle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
)

// Session is the terminal chat of `arbiter chat`: the person types messages
// and slash commands on In, the conversation is written to Out.
type Session struct {
	Game   *Game
	Client *llm.Client
	Params llm.Params
	In     io.Reader
	Out    io.Writer
	// Clipboard is set when the terminal takes OSC 52: /copy then puts the
	// text on the clipboard; otherwise /copy prints it plain.
	Clipboard bool
}

const help = `Type a message and press Enter; the model answers. Lines that start with
CREATE PERIOD, CREATE EVENT or CREATE PALETTE are commands, yours or the model's.
For a message of several lines, type """ on a line, the lines, then """ again.
When your own commands are rejected, the model is not asked: fix them, or write on.

  /timeline     show the timeline
  /play         end setup and start play (both bookends must exist)
  /raw N        show model message N as it was written, before command parsing
  /reparse N    parse model message N again and apply its commands if they are valid now
  /restart N    delete model message N and everything after it, and ask the model again
  /restart      ask the model again for its last message (or for an answer if it has none)
  /copy N       copy message N to the clipboard (or print it when the terminal cannot)
  /history      show the whole conversation
  /help         show this help
  /quit         leave (Ctrl-D works too); everything is saved as you go
`

// Run reads the person's input until it ends, /quit, or ctx ends (its error
// is then returned). Model failures are shown and the chat goes on; an error
// saving the chronicle ends it.
func (s *Session) Run(ctx context.Context) error {
	s.banner()
	lines := make(chan string)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(s.In)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-done:
				return
			}
		}
	}()
	next := func() (string, bool, error) {
		select {
		case <-ctx.Done():
			return "", false, ctx.Err()
		case l, ok := <-lines:
			return l, ok, nil
		}
	}
	for {
		fmt.Fprint(s.Out, "you> ")
		line, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(s.Out)
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
		quit, err := s.handle(ctx, line)
		if err != nil || quit {
			return err
		}
	}
}

// handle acts on one input; it reports whether the chat should end.
func (s *Session) handle(ctx context.Context, line string) (bool, error) {
	if !strings.HasPrefix(line, "/") {
		first := len(s.Game.msgs) + 1
		added, ask, err := s.Game.Say(line)
		if err != nil {
			return true, err
		}
		s.print(first+1, added[1:]...)
		if ask {
			return false, s.reply(ctx, 0)
		}
		return false, nil
	}
	fields := strings.Fields(line)
	name, args := strings.ToLower(fields[0]), fields[1:]
	switch name {
	case "/quit", "/exit", "/q":
		return true, nil
	case "/help", "/?":
		fmt.Fprint(s.Out, help)
	case "/timeline", "/t":
		s.timeline()
	case "/history":
		s.print(1, s.Game.msgs...)
	case "/play":
		m, err := s.Game.Play()
		if err != nil {
			return s.problem(err)
		}
		s.print(len(s.Game.msgs), m)
	case "/raw", "/reparse", "/copy":
		n, ok := s.number(name, args)
		if !ok {
			return false, nil
		}
		return s.action(name, n)
	case "/restart":
		n := 0 // no model message last: just ask for an answer
		if k := len(s.Game.msgs); k > 0 && s.Game.msgs[k-1].Role == Model {
			n = k
		}
		if len(args) > 0 {
			var ok bool
			if n, ok = s.number(name, args); !ok {
				return false, nil
			}
		}
		return false, s.reply(ctx, n)
	default:
		fmt.Fprintf(s.Out, "! unknown command %s; /help lists the commands\n", fields[0])
	}
	return false, nil
}

// action runs /raw, /reparse or /copy on message n.
func (s *Session) action(name string, n int) (bool, error) {
	switch name {
	case "/raw":
		text, err := s.Game.Raw(n)
		if err != nil {
			return s.problem(err)
		}
		fmt.Fprintf(s.Out, "[%d] model, as written:\n%s\n", n, text)
	case "/reparse":
		note, err := s.Game.Reparse(n)
		if err != nil {
			return s.problem(err)
		}
		s.print(len(s.Game.msgs), note)
	case "/copy":
		text, err := s.Game.CopyText(n)
		if err != nil {
			return s.problem(err)
		}
		if s.Clipboard {
			fmt.Fprintf(s.Out, "%sCopied message %d to the clipboard (%d characters).\n", osc52(text), n, len(text))
		} else {
			fmt.Fprintln(s.Out, text)
		}
	}
	return false, nil
}

// reply asks the model for its next message (n 0), or again in place of
// model message n and what follows it (n > 0). A failed model call is shown
// and changes nothing.
func (s *Session) reply(ctx context.Context, n int) error {
	var (
		added []Message
		err   error
		first int
	)
	switch {
	case n > 0:
		first = n
		added, err = s.Game.Restart(ctx, n, s.Client, s.Params)
	default:
		first = len(s.Game.msgs) + 1
		added, err = s.Game.Reply(ctx, s.Client, s.Params)
	}
	switch {
	case err == nil:
		s.print(first, added...)
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, ErrNoMessage), errors.Is(err, ErrNotModel):
		_, perr := s.problem(err)
		return perr
	}
	if _, ok := errors.AsType[*llm.Error](err); ok {
		fmt.Fprintf(s.Out, "⚠️ Model call failed: %v\n   Nothing was added. Send a message, or /restart to ask again.\n", err)
		return nil
	}
	return err // saving failed
}

// problem shows a refused action; the chat goes on.
func (s *Session) problem(err error) (bool, error) {
	fmt.Fprintf(s.Out, "! %v\n", err)
	return false, nil
}

// number reads the message number argument of a command.
func (s *Session) number(name string, args []string) (int, bool) {
	if len(args) != 1 {
		fmt.Fprintf(s.Out, "! %s needs one message number, e.g. %s 3\n", name, name)
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
	if err != nil || n < 1 {
		fmt.Fprintf(s.Out, "! %s: %q is not a message number (messages are numbered from 1)\n", name, args[0])
		return 0, false
	}
	return n, true
}

// print shows messages numbered from first.
func (s *Session) print(first int, msgs ...Message) {
	for i, m := range msgs {
		n := first + i
		switch m.Role {
		case Model:
			fmt.Fprintf(s.Out, "[%d] model:\n%s\n", n, indent(Display(m)))
		case Person:
			fmt.Fprintf(s.Out, "[%d] you:\n%s\n", n, indent(Display(m)))
		default:
			fmt.Fprintf(s.Out, "[%d] %s\n", n, m.Text)
		}
	}
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func (s *Session) banner() {
	g := s.Game
	fmt.Fprintf(s.Out, "%s\n%s\n\n", g.Title, g.BigPicture)
	fmt.Fprintf(s.Out, "Phase: %s. %d messages so far, saved in %s. /help lists the commands.\n", g.tl.phase(), len(g.msgs), g.path)
	if k := len(g.msgs); k > 0 {
		from := max(0, k-3)
		s.print(from+1, g.msgs[from:]...)
	}
}

func (s *Session) timeline() {
	fmt.Fprintf(s.Out, "%s\nBig picture: %s\n%s", s.Game.Title, s.Game.BigPicture, s.Game.tl.Tree())
}
