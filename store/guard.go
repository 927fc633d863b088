package store

import (
	"fmt"
	"sync/atomic"
	"unicode/utf8"
)

// What a call row keeps of its longest texts: a raw answer or a request
// (repair requests carry the rejected answer back) longer than this is
// stored as its prefix with its full length noted. The model client already
// refuses bodies over llm.max_response_bytes; this bounds what one tick adds
// to state.db whatever the limit is set to.
const (
	MaxStoredRaw     = 64 << 10
	MaxStoredRequest = 256 << 10
)

// SetScrub makes every text the store writes from then on (a call's
// request, answer and error, event lines, apply errors, a stop's error and
// events) pass through scrub first: the session gives it the model client's
// secrets, so no credential reaches state.db whatever layer let it through.
func (s *Store) SetScrub(scrub func(string) string) {
	s.scrub.Store(&scrub)
}

// clean returns text scrubbed of secrets.
func (s *Store) clean(text string) string {
	if f := s.scrub.Load(); f != nil && *f != nil {
		return (*f)(text)
	}
	return text
}

// bounded returns text cut to at most limit bytes (on a character
// boundary) with its full length noted, or text itself when it fits.
func bounded(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n… [cut: the first %d of %d bytes stored]", cut, len(text))
}

// scrubber is the hook SetScrub sets; nil scrubs nothing.
type scrubber = atomic.Pointer[func(string) string]
