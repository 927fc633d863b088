// Package llm calls OpenAI-compatible chat completion endpoints (OpenAI,
// Ollama, vLLM, llama.cpp, ...) for structured output, through
// github.com/sashabaranov/go-openai.
//
// Each call is a Request for one entity (a character's intention, a
// location's resolution): a system prompt, the entity's recent History, a
// user prompt and the JSON Schema the answer must satisfy, sent as
// response_format json_schema with strict: true. Because not every server
// enforces schemas, every answer is checked again here, in this order:
// refusal, finish_reason, JSON, schema.
//
// Failures are one type, *Error, whose Kind says what went wrong and whether
// it is transient. Transient failures (timeouts, 429 rate limits, 5xx,
// dropped connections) are retried with exponential backoff and full jitter,
// honouring Retry-After, up to Config.MaxAttempts tries. Invalid JSON and
// schema mismatches get up to Config.RepairAttempts corrections, in which the
// model is shown its answer and the exact error. Refusals, truncated answers,
// 400, 401, 403, 404 and an exhausted quota are final. Retries happen in this
// package only.
//
// Rate limits: with the endpoint's published limits (Config.RPM,
// Config.TPM) every attempt is paced under them and none is answered 429.
// Without them, a 429 rate limit is flow control: it is waited out (its
// Retry-After, or the backoff) up to Config.RateLimitWaits times without
// counting as a try, and it halves the client's concurrency, which then
// grows back one step at a time as calls succeed (Client.Stats).
//
// A failed call is a value, not a panic or a cancelled batch: Complete and
// CreateEach return Results that always carry the messages sent, the raw
// answer, attempts, latency and usage, so that every call can be recorded.
//
// History is written by the caller, never by Complete: append
// Result.Exchange (or History.Commit) after the tick commits, so that a
// failed or rolled-back call never reaches the next prompt.
//
// go-openai leaves out a zero temperature, so Params.Temperature 0 means the
// server's default; use a small value such as 0.01 for near-greedy answers.
package llm
