package openaitest

import (
	"strings"
	"sync/atomic"
)

// Always answers every request with r.
func Always(r Reply) Handler {
	return func(*Call) Reply { return r }
}

// Sequence answers its first call with replies[0], its second with
// replies[1], and so on; once they run out the last reply is repeated. It
// counts its own calls, so a Sequence used behind Match or in a per-entity
// map sees only the requests routed to it. It panics without replies.
func Sequence(replies ...Reply) Handler {
	if len(replies) == 0 {
		panic("openaitest.Sequence: no replies")
	}
	var n atomic.Int64
	return func(*Call) Reply {
		i := int(n.Add(1)) - 1
		return replies[min(i, len(replies)-1)]
	}
}

// Match routes a request to the first route whose predicate accepts it and
// to fallback otherwise.
func Match(fallback Handler, routes ...Route) Handler {
	return func(c *Call) Reply {
		for _, r := range routes {
			if r.If(c) {
				return r.Then(c)
			}
		}
		return fallback(c)
	}
}

// Route is one branch of Match.
type Route struct {
	If   func(*Call) bool
	Then Handler
}

// UserContains is a Route predicate: the last user message contains s.
func UserContains(s string) func(*Call) bool {
	return func(c *Call) bool { return strings.Contains(c.LastUserMessage(), s) }
}
