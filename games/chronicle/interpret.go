package chronicle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/command"
)

// ErrorPrefix starts the system message that tells the model which of its
// messages was rejected and why, in seed 001's words.
const ErrorPrefix = "⚠️ Command parsing error: "

// Interpret reads the commands of a message and checks them in order against
// the timeline and the rules of its phase, each seeing the ones before it.
// It is all or nothing: it returns every command and the timeline after all
// of them, or the first error and no command. tl itself is never changed.
// A message without commands is not an error.
//
// The error is a *command.Error whose Reason is specific and actionable;
// when the message held a palette, or several commands, the reason ends by
// saying that none of them was applied.
func Interpret(tl Timeline, msg string) ([]Command, Timeline, error) {
	stmts := grammar.Parse(msg)
	if len(stmts) == 0 {
		return nil, tl, nil
	}
	phase := tl.stage()
	if err := checkCount(phase, stmts); err != nil {
		return nil, tl, reject(err, stmts)
	}
	scratch := tl.Clone()
	cmds := make([]Command, 0, len(stmts))
	for _, st := range stmts {
		reading, err := st.Resolve(func(c command.Command) error {
			if _, err := scratch.check(fromReading(c)); err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			return nil, tl, reject(phased(err, st, phase), stmts)
		}
		cmd, err := scratch.Apply(fromReading(reading))
		if err != nil { // Resolve accepted it: cannot happen, but never apply half a message
			return nil, tl, reject(err, stmts)
		}
		cmds = append(cmds, cmd)
	}
	return cmds, scratch, nil
}

// checkCount enforces the seed's cases for several commands in a message:
// during setup, one palette (with any number of items) and the two bookend
// periods; during play, one command. Unknown commands are left to fail on
// their own.
func checkCount(phase Stage, stmts []command.Statement) *command.Error {
	var known, periods, palettes int
	var phrases []string
	for _, st := range stmts {
		if st.Spec == nil {
			continue
		}
		known++
		phrases = append(phrases, st.Spec.Phrase)
		switch st.Spec.Name {
		case "period":
			periods++
		case "palette":
			palettes++
		}
	}
	switch {
	case known <= 1:
		return nil
	case phase == Play:
		return rule("Only one command per message during play phase (this message has %d: %s)", known, strings.Join(phrases, ", "))
	case palettes > 1:
		return rule("Only one CREATE PALETTE per message (this message has %d); list all the items under one", palettes)
	case periods > 2:
		return rule("At most two CREATE PERIOD commands per message during setup phase, the FIRST and LAST bookends (this message has %d)", periods)
	}
	return nil
}

// phased says which positions the phase allows when a period has none.
func phased(err error, st command.Statement, phase Stage) error {
	e, ok := errors.AsType[*command.Error](err)
	if !ok || e.Kind != command.Missing || e.Field != "position" || st.Spec == nil || st.Spec.Name != "period" {
		return err
	}
	c := *e
	c.Reason = missingPosition(phase)
	return &c
}

// reject adds to the reason what was not applied because of it.
func reject(err error, stmts []command.Statement) error {
	e, ok := errors.AsType[*command.Error](err)
	if !ok {
		e = &command.Error{Kind: command.Malformed, Reason: err.Error()}
	}
	var notes []string
	for _, st := range stmts {
		if st.Spec != nil && st.Spec.Name == "palette" {
			notes = append(notes, "No palette items were added.")
			break
		}
	}
	if len(stmts) > 1 {
		notes = append(notes, fmt.Sprintf("None of the %d commands in this message were applied.", len(stmts)))
	}
	if len(notes) == 0 {
		return e
	}
	c := *e
	c.Reason = strings.TrimRight(e.Reason, ". ") + ". " + strings.Join(notes, " ")
	return &c
}
