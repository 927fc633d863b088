package chronicle

import "time"

// Role says who wrote a message.
type Role string

// The roles of a conversation.
const (
	Person Role = "person" // the person at the terminal
	Model  Role = "model"  // the model
	System Role = "system" // the game: command errors, what was applied, phase changes
)

// Message is one message of the conversation. Everything goes in the
// history: the model's messages as written (malformed commands included),
// the system's messages and the person's.
type Message struct {
	Role Role      `json:"role"`
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// Applied are the commands this message applied to the timeline, in
	// order. On a person's or model's message they are its own commands;
	// on a system message they come from a reparse of message Source.
	Applied []Command `json:"applied,omitempty"`
	// Source is the number of the message a system message is about
	// (its error, what it applied, its reparse), 0 for none.
	Source int `json:"source,omitempty"`
	// Rejected is set on a message whose commands were not applied.
	Rejected bool `json:"rejected,omitempty"`
	// Stage, on a system message, is the phase the game moved to.
	Stage Stage `json:"phase,omitempty"`
}
