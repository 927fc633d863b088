package runner

import (
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
)

// Event names of seed 002's EMIT protocol, plus the lifecycle events of a tick.
const (
	ToolFailure     = "TOOL_FAILURE"
	StateEntry      = "STATE_ENTRY"
	RecoveryAttempt = "RECOVERY_ATTEMPT"
	Message         = "MESSAGE" // a free-text EMIT, e.g. "Insufficient model data"
)

// Event is one EMIT line of the run's event log.
type Event struct {
	Tick   int
	Name   string
	Fields []Field // in order; empty for a Message
	Text   string  // the text of a Message event
}

// Field is one key=value pair of an Event.
type Field struct{ Key, Value string }

// String renders the event in seed 002's form, e.g.
//
//	EMIT: TOOL_FAILURE tool=resolution:common error="timeout after 30s (3 attempts)"
//	EMIT: STATE_ENTRY state=ERROR error_type=timeout
//	EMIT: "Phase deadline reached, using partial results"
func (e Event) String() string {
	var b strings.Builder
	b.WriteString("EMIT: ")
	if e.Name == Message {
		b.WriteString(strconv.Quote(e.Text))
		return b.String()
	}
	b.WriteString(e.Name)
	for _, f := range e.Fields {
		b.WriteByte(' ')
		b.WriteString(f.Key)
		b.WriteByte('=')
		b.WriteString(quoteIfNeeded(f.Value))
	}
	return b.String()
}

func quoteIfNeeded(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		return strconv.Quote(v)
	}
	return v
}

func stateEntry(tick int, state string, extra ...Field) Event {
	return Event{Tick: tick, Name: StateEntry, Fields: append([]Field{{"state", state}}, extra...)}
}

func errorEntry(tick int, errorType string) Event {
	return stateEntry(tick, "ERROR", Field{"error_type", errorType})
}

// toolFailure is seed 002's TOOL_FAILURE; a model error's kind (rate_limit,
// server, refusal, ...) is detail here, not an error type.
func toolFailure(tick int, tool string, err error) Event {
	return Event{Tick: tick, Name: ToolFailure, Fields: []Field{{"tool", tool}, {"error", err.Error()}, {"kind", llm.ErrorKindOf(err).String()}}}
}

func recovery(tick int, strategy string, success bool) Event {
	return Event{Tick: tick, Name: RecoveryAttempt, Fields: []Field{{"strategy", strategy}, {"success", strconv.FormatBool(success)}}}
}

func message(tick int, text string) Event {
	return Event{Tick: tick, Name: Message, Text: text}
}
