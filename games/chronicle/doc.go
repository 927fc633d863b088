// Package chronicle is a game in which a person and a model build a history
// together, after the tabletop game Microscope: a big picture, two bookend
// periods (the FIRST and the LAST), a palette of what is in (YES) and out
// (NO) of the history, then periods in order between the bookends and events
// in order inside periods, each light or dark in tone.
//
// The game has two phases. In setup, the bookends and the palette are
// created; the person moves the game to play, where periods go AFTER or
// BEFORE another period and events go IN a period.
//
// The model (and the person) change the timeline by writing plain-English
// commands in their messages, read by the shared reader of package command:
//
//	CREATE PERIOD <name> FIRST|LAST|AFTER <period>|BEFORE <period> TONE light|dark DESCRIPTION <text>
//	CREATE EVENT <name> IN <period> [AFTER <event>|BEFORE <event>] TONE light|dark DESCRIPTION <text>
//	CREATE PALETTE
//	- YES: <item>
//	- NO: <item>
//
// A message is applied all or nothing (seed 001): if any of its commands is
// malformed, names something that does not exist, is placed in a way the
// phase does not allow, or is one command too many, none applies, and a
// system message "⚠️ Command parsing error: <reason>" joins the
// conversation, where the model sees it on its next turn. Nothing is retried
// automatically; the person decides: ask again, reparse the message, restart
// from it, create the item by hand, or move on.
//
// Game is the chronicle's kind for the runner: each move (Say, Reply,
// Restart, Reparse, StartPlay) is one turn, committed whole to the
// simulation's state.db with the model call it made. The timeline is
// derived: it is rebuilt by replaying the commands recorded on the messages,
// which is what lets "restart from here" drop a message and everything after
// it. A chronicle.json saved by an earlier version is read by ReadSaved and
// imported as the first turn. The terminal chat lives in the CLI.
package chronicle
