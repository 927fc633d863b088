package llm

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// paceShare is the share of a published limit the pacer uses: the rest is
// room for the network's jitter and, for tokens, the burst.
const paceShare = 0.97

// pacer spaces the client's HTTP attempts under the endpoint's published
// limits, Config.RPM and Config.TPM, so that a server counting them over any
// 60-second window never sees more than its limit and answers no 429.
//
// Requests are spaced evenly (no burst) at paceShare of RPM: any 60 s
// window then holds at most floor(0.97·rpm)+1 <= rpm of them. Tokens are a
// bucket refilled at paceShare of TPM per minute holding at most the other
// 3 % of TPM, so a window counts at most 0.03·tpm + 0.97·tpm; a request is
// charged its estimate (estimateTokens) before it is sent. A request larger
// than the bucket is not clamped to it: it waits until its whole estimate
// has been earned, which keeps the long-run rate right (a clamped charge
// would undercount every large request) and lets one window exceed the
// limit by at most that request's excess over the bucket.
//
// It is a schedule in virtual time rather than two x/time/rate limiters
// because a request must clear both limits at one send time: waiting for
// one limiter's reservation after the other's would send requests closer
// together than either booked. Each booking takes the next send time in
// arrival order, so waiters are served first come, first served.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration // between two requests; 0: no request limit
	rate     float64       // tokens per second; 0: no token limit
	burst    float64       // tokens the bucket holds
	next     time.Time     // earliest send time of the next request
	tokens   float64       // bucket level at last
	last     time.Time     // send time of the latest booking
	seq      uint64        // bookings made
}

// newPacer returns the pacer of the limits, nil when neither is set.
func newPacer(rpm, tpm int) *pacer {
	if rpm <= 0 && tpm <= 0 {
		return nil
	}
	p := &pacer{}
	if rpm > 0 {
		p.interval = time.Duration(float64(time.Minute) / (paceShare * float64(rpm)))
	}
	if tpm > 0 {
		p.rate = paceShare * float64(tpm) / 60
		p.burst = max(1, (1-paceShare)*float64(tpm))
		p.tokens = p.burst
	}
	return p
}

// countsTokens reports whether the pacer needs each request's token
// estimate (there is a token limit).
func (p *pacer) countsTokens() bool { return p != nil && p.rate > 0 }

// booking is one request's place in the schedule.
type booking struct {
	at   time.Time // when the request may be sent
	seq  uint64
	prev pacerState // the schedule before the booking, to give it back
}

type pacerState struct {
	next, last time.Time
	tokens     float64
}

// book gives a request estimated at cost tokens the earliest send time at or
// after now that keeps both limits, and takes it.
func (p *pacer) book(now time.Time, cost int) booking {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := booking{prev: pacerState{p.next, p.last, p.tokens}}
	at := now
	if p.interval > 0 && p.next.After(at) {
		at = p.next
	}
	if p.rate > 0 {
		if p.last.After(at) { // a later booking without a request limit
			at = p.last
		}
		level := p.tokens
		if !p.last.IsZero() {
			level = min(p.burst, level+at.Sub(p.last).Seconds()*p.rate)
		}
		if need := float64(cost) - level; need > 0 {
			at = at.Add(time.Duration(need / p.rate * float64(time.Second)))
			level = float64(cost)
		}
		p.tokens, p.last = level-float64(cost), at
	}
	if p.interval > 0 {
		p.next = at.Add(p.interval)
	}
	p.seq++
	b.at, b.seq = at, p.seq
	return b
}

// cancel gives back a booking whose request was not sent, when no later
// booking was made on top of it; otherwise its place stays taken, which
// only ever sends less.
func (p *pacer) cancel(b booking) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seq == b.seq {
		p.next, p.last, p.tokens = b.prev.next, b.prev.last, b.prev.tokens
		p.seq--
	}
}

// wait books a request of cost tokens and waits for its send time (a nil
// pacer, no limits, does not wait). It
// fails at once with errPastDeadline, giving the booking back, when the
// send time is past ctx's deadline, as rate.Limiter.Wait does; when ctx
// ends first it returns ctx's error.
func (p *pacer) wait(ctx context.Context, now time.Time, cost int) error {
	if p == nil {
		return nil
	}
	b := p.book(now, cost)
	d := b.at.Sub(now)
	if d <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(b.at) {
		p.cancel(b)
		return errPastDeadline
	}
	if err := sleep(ctx, d); err != nil {
		p.cancel(b)
		return err
	}
	return nil
}

// errPastDeadline: the send time the pacer gave is past the call's deadline.
var errPastDeadline = errors.New("the pacer's send time is past the call's deadline")

// estimateTokens is what a request counts against a tokens-per-minute limit
// before it is sent, as OpenAI counts it: its text at 4 bytes a token (the
// messages, the JSON schema of the answer and the tools' definitions) plus
// the completion it allows (max_tokens).
func estimateTokens(cr openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range cr.Messages {
		n += len(m.Role) + len(m.Content) + len(m.Refusal)
		for _, part := range m.MultiContent {
			n += len(part.Text)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	if rf := cr.ResponseFormat; rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
		if b, err := rf.JSONSchema.Schema.MarshalJSON(); err == nil {
			n += len(b)
		}
	}
	for _, t := range cr.Tools {
		if t.Function == nil {
			continue
		}
		n += len(t.Function.Name) + len(t.Function.Description)
		if b, err := json.Marshal(t.Function.Parameters); err == nil {
			n += len(b)
		}
	}
	return (n+3)/4 + max(cr.MaxTokens, cr.MaxCompletionTokens)
}
