package llm

import (
	"context"
	"errors"
)

// Watch is told of a call's failures as they happen, in the goroutine that
// makes the call, so that a caller can emit each before its recovery
// begins (seed 002: "Emit before recovery"): Failed as soon as an attempt
// fails, before the call is retried or its answer sent back for repair,
// and when the call fails for good, before it returns; Recovered when the
// retry or repair that followed a failure has ended, with whether it got
// past it. Each failure is told at most once, as the same *Error the Result then
// holds (in Recoveries or as Err); a line of a Batch API job the job did
// not answer is told when it is found so, before it is asked live. The
// failures a cassette replays did not happen now: they are in the Result
// only. Either func may be nil.
type Watch struct {
	Failed    func(entity string, err *Error)
	Recovered func(entity string, r Recovery)
}

// watchKey is the context key of WithWatch, callKey that of the call a
// context is of.
type (
	watchKey struct{}
	callKey  struct{}
)

// WithWatch returns ctx with w: every call made under it tells w of its
// failures. It rides on the context, as WithKeep does, because one client
// may serve several runs at once, each with its own event log. The Watch is
// looked up when a failure is told, so a call whose context gains one
// while it runs (a call started before its phase, whose context takes the
// phase's values once the phase begins) tells it from then on, unless a
// failure of the call went untold before: then none of its failures is
// told, and a caller that emits those of the Result keeps them in order.
func WithWatch(ctx context.Context, w Watch) context.Context {
	return context.WithValue(ctx, watchKey{}, w)
}

// watchedCall is one call as its Watch sees it: whose it is, and whether a
// failure of it went untold.
type watchedCall struct {
	entity string
	untold bool
}

// watchCall returns ctx as the context of a call of entity (ctx itself when
// it is one already).
func watchCall(ctx context.Context, entity string) context.Context {
	if c, ok := ctx.Value(callKey{}).(*watchedCall); ok && c.entity == entity {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, &watchedCall{entity: entity})
}

// watcher returns the Watch of ctx and its call, nil when a failure of the
// call went untold or ctx is not a call's.
func watcher(ctx context.Context) (Watch, *watchedCall) {
	c, _ := ctx.Value(callKey{}).(*watchedCall)
	if c == nil || c.untold {
		return Watch{}, nil
	}
	w, _ := ctx.Value(watchKey{}).(Watch)
	return w, c
}

// tellFailed tells the Watch of ctx, if any, that an attempt failed with e.
func tellFailed(ctx context.Context, e *Error) {
	w, c := watcher(ctx)
	if e != nil {
		spanFailed(ctx, e)
	}
	switch {
	case c == nil || e == nil:
	case w.Failed == nil:
		c.untold = true
	default:
		w.Failed(c.entity, e)
	}
}

// tellFinal tells the Watch of ctx, if any, that the call failed for good
// with err (nil: it did not).
func tellFinal(ctx context.Context, err error) {
	var e *Error
	if errors.As(err, &e) {
		tellFailed(ctx, e)
	}
}

// tellRecovered tells the Watch of ctx, if any, that the recovery r ended.
func tellRecovered(ctx context.Context, r Recovery) {
	spanRecovered(ctx, r)
	if w, c := watcher(ctx); c != nil && w.Recovered != nil {
		w.Recovered(c.entity, r)
	}
}
