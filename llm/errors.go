package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// ErrorKind classifies a failed model call.
type ErrorKind int

// The kinds of failure. Timeout, RateLimit, Server, Connection and
// BadResponse are transient and retried with backoff; InvalidJSON and Schema may be repaired;
// the others are final.
const (
	KindUnknown       ErrorKind = iota // anything not classified below; final
	KindTimeout                        // an attempt ran past Config.Timeout, or 408
	KindRateLimit                      // 429 other than insufficient_quota
	KindQuota                          // 429 insufficient_quota: the account is out of credit
	KindServer                         // 5xx
	KindConnection                     // refused, reset, closed early, DNS
	KindCanceled                       // the caller's context ended
	KindRefusal                        // the model refused (message.refusal, content filter)
	KindTruncated                      // finish_reason=length
	KindInvalidJSON                    // the answer is not one JSON value
	KindSchema                         // the answer does not match the request's schema
	KindAuth                           // 401, 403
	KindBadRequest                     // 400, 422 and other 4xx; a request the client cannot send
	KindNotFound                       // 404: unknown model or wrong base URL
	KindSchemaInvalid                  // the request's schema does not compile, or the server refused it (400 on response_format)
	KindOversized                      // the answer's body is over the limit (Config.MaxResponseBytes)
	KindCassette                       // the replay cassette has no answer for the request, or a recording failed
	KindBadResponse                    // the server answered with something that is not an OpenAI-compatible response
)

var kindNames = [...]string{
	KindUnknown:     "unknown",
	KindTimeout:     "timeout",
	KindRateLimit:   "rate_limit",
	KindQuota:       "quota",
	KindServer:      "server",
	KindConnection:  "connection",
	KindCanceled:    "canceled",
	KindRefusal:     "refusal",
	KindTruncated:   "truncated",
	KindInvalidJSON: "invalid_json",
	KindSchema:      "schema",
	KindAuth:        "auth",
	KindBadRequest:  "bad_request",
	KindNotFound:    "not_found",

	KindSchemaInvalid: "schema_invalid",
	KindOversized:     "oversized",
	KindCassette:      "cassette",
	KindBadResponse:   "bad_response",
}

// String returns the snake_case name used in logs and events, e.g. "rate_limit".
func (k ErrorKind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// Transient reports whether a failure of this kind may go away when the same
// request is sent again.
func (k ErrorKind) Transient() bool {
	switch k {
	case KindTimeout, KindRateLimit, KindServer, KindConnection, KindBadResponse:
		return true
	}
	return false
}

// Repairable reports whether the model may fix a failure of this kind when
// shown the error.
func (k ErrorKind) Repairable() bool { return k == KindInvalidJSON || k == KindSchema }

// Error is the one error type of a failed model call.
type Error struct {
	Kind       ErrorKind
	Attempts   int           // HTTP attempts made before giving up
	StatusCode int           // HTTP status, 0 when none arrived
	RetryAfter time.Duration // the server's Retry-After of the last attempt, if any
	Code       string        // the API error code, e.g. "insufficient_quota"
	Message    string        // what failed, for a person
	Hint       string        // what to do about it, "" when nothing obvious
	Err        error         // the cause
}

// Error names what failed, how many attempts were made and what to do.
func (e *Error) Error() string {
	var extra []string
	if e.Attempts > 1 {
		extra = append(extra, strconv.Itoa(e.Attempts)+" attempts")
	}
	if e.Hint != "" {
		extra = append(extra, e.Hint)
	}
	if len(extra) == 0 {
		return e.Message
	}
	return e.Message + " (" + strings.Join(extra, "; ") + ")"
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error of the same kind, so errors.Is(err, ErrSchema) holds
// for every schema failure.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind
}

// Transient reports whether the failure may go away on a retry.
func (e *Error) Transient() bool { return e.Kind.Transient() }

// Sentinels for errors.Is; each matches every *Error of its kind.
var (
	ErrTimeout     = sentinel(KindTimeout, "model call timed out")
	ErrRateLimit   = sentinel(KindRateLimit, "rate limited by the model server")
	ErrQuota       = sentinel(KindQuota, "model account quota exhausted")
	ErrServer      = sentinel(KindServer, "model server error")
	ErrConnection  = sentinel(KindConnection, "cannot reach the model server")
	ErrCanceled    = sentinel(KindCanceled, "model call canceled")
	ErrRefusal     = sentinel(KindRefusal, "model refused to answer")
	ErrTruncated   = sentinel(KindTruncated, "answer truncated at the token limit")
	ErrInvalidJSON = sentinel(KindInvalidJSON, "answer is not valid JSON")
	ErrSchema      = sentinel(KindSchema, "answer does not match the schema")
	ErrAuth        = sentinel(KindAuth, "model server rejected the credentials")
	ErrBadRequest  = sentinel(KindBadRequest, "model server rejected the request")
	ErrNotFound    = sentinel(KindNotFound, "model or endpoint not found")
	// ErrSchemaInvalid: the request's schema, not the answer, is at fault.
	ErrSchemaInvalid = sentinel(KindSchemaInvalid, "the request's schema is invalid")
	// ErrOversized: the server sent more than the client reads.
	ErrOversized = sentinel(KindOversized, "answer larger than the limit")
	// ErrCassette: the cassette could not answer the call (replay) or keep it
	// (record); a run stops rather than go on without it.
	ErrCassette = sentinel(KindCassette, "the cassette failed the call")
	// ErrBadResponse: the server, not the model, answered wrongly (HTML, a
	// broken body, a chat completion without choices).
	ErrBadResponse = sentinel(KindBadResponse, "not an OpenAI-compatible response")
)

func sentinel(k ErrorKind, msg string) *Error { return &Error{Kind: k, Message: msg} }

// ErrorKindOf returns the kind of err's *Error, KindUnknown when there is none.
func ErrorKindOf(err error) ErrorKind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return KindUnknown
}

// classifier turns transport and API errors into *Error, naming the endpoint.
type classifier struct {
	baseURL string // redacted
	secrets Secrets
	timeout time.Duration // per attempt
}

// classify explains err, the failure of one attempt made under parent. It
// never looks at error strings.
func (c classifier) classify(parent context.Context, err error) *Error {
	return c.secrets.scrubError(c.explain(parent, err))
}

func (c classifier) explain(parent context.Context, err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if cerr := parent.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return &Error{Kind: KindTimeout, Err: err,
				Message: "deadline of the call ran out waiting for " + c.baseURL}
		}
		return &Error{Kind: KindCanceled, Err: err, Message: "call to " + c.baseURL + " canceled"}
	}
	if apiErr, ok := errors.AsType[*openai.APIError](err); ok && apiErr.HTTPStatusCode > 0 {
		e := c.status(apiErr.HTTPStatusCode, apiErr.Type, codeString(apiErr.Code), apiErr.Message, err)
		if e.Kind == KindBadRequest && apiErr.Param != nil && strings.HasPrefix(*apiErr.Param, "response_format") {
			e.Kind = KindSchemaInvalid
			e.Hint = "the server refused the request's JSON schema"
		}
		return e
	}
	if reqErr, ok := errors.AsType[*openai.RequestError](err); ok && reqErr.HTTPStatusCode > 0 {
		return c.status(reqErr.HTTPStatusCode, "", "", string(reqErr.Body), err)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err):
		return &Error{Kind: KindTimeout, Err: err,
			Message: fmt.Sprintf("timeout after %s waiting for %s", c.timeout, c.baseURL),
			Hint:    "raise llm.timeout if the model is slow"}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: KindCanceled, Err: err, Message: "call to " + c.baseURL + " canceled"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{Kind: KindConnection, Err: err,
			Message: "connection refused to " + c.baseURL, Hint: "is the model server running?"}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: KindConnection, Err: err,
			Message: "connection to " + c.baseURL + " closed before the answer arrived"}
	}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok {
		return &Error{Kind: KindConnection, Err: err,
			Message: fmt.Sprintf("cannot resolve host %q of %s", dnsErr.Name, c.baseURL),
			Hint:    "check llm.base_url"}
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return &Error{Kind: KindConnection, Err: err, Message: "cannot reach " + c.baseURL}
	}
	for _, bad := range []error{
		openai.ErrChatCompletionStreamNotSupported, openai.ErrChatCompletionInvalidModel, openai.ErrReasoningModelMaxTokensDeprecated,
		openai.ErrReasoningModelLimitationsOther, openai.ErrReasoningModelLimitationsLogprobs,
		openai.ErrReasoningEffortUnsupported, openai.ErrReasoningSamplingUnsupported,
		openai.ErrReasoningToolsRequireResponses, openai.ErrContentFieldsMisused,
	} {
		if errors.Is(err, bad) {
			return &Error{Kind: KindBadRequest, Err: err,
				Message: "request not sent to " + c.baseURL + ": " + err.Error(),
				Hint:    "check the model and its parameters"}
		}
	}
	_, syntax := errors.AsType[*json.SyntaxError](err)
	if _, typ := errors.AsType[*json.UnmarshalTypeError](err); syntax || typ {
		return c.badResponse(err, "")
	}
	if _, ok := errors.AsType[*url.Error](err); ok {
		// What is left of the HTTP client's own failures is the
		// connection's, whatever its words (net/http's "server closed idle
		// connection" when a server dies between two requests has no
		// exported error): the endpoint failed, not the call.
		return &Error{Kind: KindConnection, Err: err, Message: "connection to " + c.baseURL + " failed before an answer"}
	}
	return &Error{Kind: KindUnknown, Err: err, Message: "call to " + c.baseURL + " failed: " + err.Error()}
}

// badResponse is the error of an answer that is not an OpenAI-compatible
// response (what is wrong with it in what, when the body decoded): a
// failure of the endpoint, not of the model, so another endpoint takes the
// call and the circuit breaker counts it.
func (c classifier) badResponse(err error, what string) *Error {
	msg := c.baseURL + " answered with something that is not an OpenAI-compatible response"
	if what != "" {
		msg += ": " + what
	}
	return &Error{Kind: KindBadResponse, Err: err, Message: msg, Hint: "check llm.base_url; it usually ends in /v1"}
}

// status classifies an HTTP error answer.
func (c classifier) status(code int, errType, apiCode, msg string, err error) *Error {
	e := &Error{StatusCode: code, Code: apiCode, Err: err}
	head := fmt.Sprintf("%d %s from %s", code, strings.ToLower(http.StatusText(code)), c.baseURL)
	if msg = oneLine(msg); msg != "" {
		head += ": " + msg
	}
	e.Message = head
	switch {
	case code == http.StatusTooManyRequests && (apiCode == "insufficient_quota" || errType == "insufficient_quota"):
		e.Kind = KindQuota
		e.Hint = "the account is out of credit; check its plan and billing"
	case code == http.StatusTooManyRequests:
		e.Kind = KindRateLimit
	case code == http.StatusUnauthorized:
		e.Kind = KindAuth
		e.Hint = "check OPENAI_API_KEY"
	case code == http.StatusForbidden:
		e.Kind = KindAuth
		e.Hint = "check OPENAI_API_KEY and its access to the model"
	case apiCode == "context_length_exceeded":
		e.Kind = KindBadRequest
		e.Hint = "the request is longer than the model's context window"
	case code == http.StatusNotFound:
		e.Kind = KindNotFound
		e.Hint = "check llm.model and llm.base_url"
	case code == http.StatusRequestTimeout:
		e.Kind = KindTimeout
	case code >= 500:
		e.Kind = KindServer
	default:
		e.Kind = KindBadRequest
	}
	return e
}

func isNetTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

// codeString renders an API error code, which servers send as string or number.
func codeString(code any) string {
	switch c := code.(type) {
	case nil:
		return ""
	case string:
		return c
	case int:
		return strconv.Itoa(c)
	default:
		return fmt.Sprint(c)
	}
}

// oneLine flattens a server message to one line of bounded length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const limit = 300
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
