// Package command reads the plain-English commands that models (and people)
// write into a conversation, such as
//
//	CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity
//
// A Grammar is a set of Specs, one per command: the phrase that starts it
// ("CREATE PERIOD"), its fields (a subject name, keyword clauses holding a
// name, an enum value, a number or free text, flags such as FIRST) and,
// optionally, a list of item lines that follow it ("- YES: Magic exists").
// Games describe their commands as data; the reading rules live here once.
//
// Reading is lenient on tokens and strict on structure. Keywords match in
// any case; whitespace is free; a keyword may be followed by ":", "=" or
// " - "; markdown around a command (bold, backticks, bullets, numbered lists,
// headings, quotes, code fences) is ignored; names may be quoted or not.
// Only lines that start with a command phrase are commands, so commands can
// sit inside prose. Free text runs to the end of its paragraph (or to a line
// that starts another command, or a line starting with a field keyword that
// has not been given yet, like "TONE: dark").
//
// Unquoted names may hold keyword words ("The First Age", "Before the
// Flood"). Parse therefore returns every complete reading of a statement,
// and Statement.Resolve keeps the one whose references the game accepts; when
// several are accepted the command is ambiguous, which is an error that says
// to quote the names. In a command whose phrase is written in capitals, a
// keyword word written in capitals is always a keyword, so a name holding one
// ("The Long Night AFTER Dawn") must be quoted.
//
// Structure is strict: a missing required field, a value outside its enum,
// a clause given twice, two clauses of one group (FIRST and AFTER), or text
// that fits nowhere is an *Error whose Reason says what is wrong in words
// meant for the person and the model alike. Whether one bad command voids the
// whole message (chronicle) or only itself (conquest orders) is the game's
// choice: Parse reports each statement on its own.
package command
