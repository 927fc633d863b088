// Package schemas turns the Go types of model answers into JSON Schemas that
// OpenAI's strict structured-output mode accepts, checks any schema against
// that mode's rules, and keeps the generated *.schema.json files of this
// folder in sync with the Go types.
//
// One reflector configuration (invopop/jsonschema) is followed by a strict
// pass:
//
//   - the root is the expanded object, not a $ref; no $id, no $schema;
//   - every object lists all of its properties in required and has
//     additionalProperties false (a field that may be absent is a pointer);
//   - a pointer field is nullable, written anyOf [T, {"type": "null"}];
//   - nested types are inlined (no $defs unless asked for).
//
// Maps, defaults, oneOf and the other keywords strict mode rejects are not
// rewritten: CheckStrict reports them, and Generate fails, so a type that
// cannot be sent is caught by the tests rather than by the server.
package schemas
