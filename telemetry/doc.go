// Package telemetry describes a run in OpenTelemetry terms: a span per run,
// tick, phase and model call, the call's following the GenAI semantic
// conventions (gen_ai.*) and the rest named arbiter.*, and the run's
// metrics (calls, tokens, cost, latency, fallbacks, 429s, calls in flight,
// a tick's wall time against its ideal).
//
// It depends on the OpenTelemetry API only; the SDK, its exporters and
// their configuration live in telemetry/export. A *Telemetry rides on the
// context (With): code that makes a call, a tick or a phase asks From(ctx),
// and with none there (telemetry off, the default) every function here
// returns at once, having allocated nothing.
//
// A run's ticks may overlap (a narrative plays a location's next tick as
// soon as its neighbours allow, and starts calls before their phase
// begins): the spans of a tick and its phases are kept by tick number for
// the run (Ticks), so that every call lands in its own tick's tree
// whichever context started it.
package telemetry
