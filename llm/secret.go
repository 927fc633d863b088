package llm

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
)

// Redacted stands in for a secret removed from text.
const Redacted = "[redacted]"

// minSecret is the shortest value scrubbed: anything shorter ("-", "x") is
// indistinguishable from ordinary text and would mangle every message.
const minSecret = 4

// Secrets removes the credentials of a Config from text: the API key and the
// user information of the base URL (user:password@), in every form they take
// there. It is the one scrubber of the program: the client applies it to
// every byte the server sends and every error it makes, and the commands to
// what they print and store. The zero value scrubs nothing.
type Secrets struct {
	r      *strings.Replacer
	values []string
}

// NewSecrets returns the scrubber of cfg's credentials.
func NewSecrets(cfg Config) Secrets {
	var values []string
	add := func(v string) {
		if len(v) >= minSecret {
			values = append(values, v)
		}
	}
	add(cfg.APIKey)
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.User != nil {
		// The longest forms first, so "user:pass" goes whole rather than
		// leaving the user behind.
		if i := strings.Index(cfg.BaseURL, "@"); i > 0 {
			if j := strings.Index(cfg.BaseURL, "://"); j >= 0 && j+3 < i {
				add(cfg.BaseURL[j+3 : i])
			}
		}
		add(u.User.String())
		if p, ok := u.User.Password(); ok {
			add(p)
			add(url.QueryEscape(p))
		}
		// The user name alone is not a secret, and it is often a plain
		// word ("admin", "user"): scrubbing it would rewrite model answers.
	}
	return secretsOf(values)
}

// joinSecrets scrubs what any of ss scrubs.
func joinSecrets(ss ...Secrets) Secrets {
	var values []string
	for _, s := range ss {
		values = append(values, s.values...)
	}
	return secretsOf(slices.Compact(slices.Sorted(slices.Values(values))))
}

// secretsOf scrubs values.
func secretsOf(values []string) Secrets {
	if len(values) == 0 {
		return Secrets{}
	}
	// strings.Replacer prefers the earlier of two matches at one position.
	slices.SortStableFunc(values, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, Redacted)
	}
	return Secrets{r: strings.NewReplacer(pairs...), values: values}
}

// Scrub returns text with every secret replaced by Redacted.
func (s Secrets) Scrub(text string) string {
	if !s.in(text) { // most texts hold no secret: Contains says so without Replace building a copy
		return text
	}
	return s.r.Replace(text)
}

// in reports whether text holds a secret.
func (s Secrets) in(text string) bool {
	for _, v := range s.values {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

// scrubBytes is Scrub for a body: b itself when it holds no secret.
func (s Secrets) scrubBytes(b []byte) []byte {
	for _, v := range s.values {
		if bytes.Contains(b, []byte(v)) {
			return []byte(s.Scrub(string(b)))
		}
	}
	return b
}

// Empty reports whether there is nothing to scrub.
func (s Secrets) Empty() bool { return s.r == nil }

// scrubError scrubs what a *Error says, in place, and returns it.
func (s Secrets) scrubError(e *Error) *Error {
	if e == nil || s.r == nil {
		return e
	}
	e.Message, e.Hint, e.Code = s.Scrub(e.Message), s.Scrub(e.Hint), s.Scrub(e.Code)
	return e
}

// RedactURL returns raw with its user information (user:password@) and the
// value of every query parameter but the known public ones replaced by
// Redacted, for printing an endpoint; other text is returned as is.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.RawQuery != "" { // an Azure-style ?api-key=... is a credential too
		raw = strings.Replace(raw, "?"+u.RawQuery, "?"+redactQuery(u.RawQuery), 1)
	}
	if u.User == nil {
		return raw
	}
	i := strings.Index(raw, "://")
	j := strings.Index(raw, "@")
	if i < 0 || j < i {
		return raw
	}
	return raw[:i+3] + Redacted + raw[j:]
}

// publicQuery are the query parameters of an endpoint URL known to hold no
// secret (Azure OpenAI's API version); CleanURL redacts every other value.
var publicQuery = []string{"api-version"}

// redactQuery is a URL query with the value of every parameter but the
// known public ones redacted (all of it when it does not parse).
func redactQuery(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return Redacted
	}
	for k, vs := range q {
		if slices.Contains(publicQuery, strings.ToLower(k)) {
			continue
		}
		for i := range vs {
			vs[i] = Redacted
		}
	}
	return q.Encode()
}

// CleanURL returns raw without its credentials, for storing an endpoint
// (a run's manifest): unlike RedactURL, the user information
// (user:password@) is removed, the value of every query parameter but the
// known public ones is redacted, and the fragment is dropped. A URL that
// does not parse is redacted whole, since what it holds cannot be told
// apart.
func CleanURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		u.RawQuery = redactQuery(u.RawQuery)
	}
	return u.String()
}
