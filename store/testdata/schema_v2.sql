-- The schema of version 2 (arbiter before the model of each call and the
-- runs), kept to build a version 2 database in the upgrade test.
CREATE TABLE IF NOT EXISTS ticks (
	tick         INTEGER PRIMARY KEY CHECK (tick > 0),
	committed_at TEXT    NOT NULL,
	state_json   TEXT    NOT NULL CHECK (json_valid(state_json))
);

CREATE TABLE IF NOT EXISTS memories (
	tick         INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	character_id TEXT    NOT NULL,
	seq          INTEGER NOT NULL,
	entry        TEXT    NOT NULL,
	PRIMARY KEY (tick, character_id, seq)
);

CREATE TABLE IF NOT EXISTS intentions (
	tick         INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	character_id TEXT    NOT NULL,
	intention    TEXT    NOT NULL,
	fallback     INTEGER NOT NULL CHECK (fallback IN (0, 1)),
	PRIMARY KEY (tick, character_id)
);

CREATE TABLE IF NOT EXISTS outputs (
	tick        INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	location_id TEXT    NOT NULL,
	output_json TEXT    NOT NULL CHECK (json_valid(output_json)),
	fallback    INTEGER NOT NULL CHECK (fallback IN (0, 1)),
	PRIMARY KEY (tick, location_id)
);

CREATE TABLE IF NOT EXISTS calls (
	id                INTEGER PRIMARY KEY,
	tick              INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	phase             TEXT    NOT NULL,
	entity_key        TEXT    NOT NULL,
	request_json      TEXT    NOT NULL,
	raw_response      TEXT    NOT NULL,
	parsed_output     TEXT    NOT NULL,
	latency_ms        INTEGER NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	cached_tokens     INTEGER NOT NULL,
	attempts          INTEGER NOT NULL,
	repairs           INTEGER NOT NULL,
	error_kind        TEXT    NOT NULL,
	error             TEXT    NOT NULL,
	fallback          INTEGER NOT NULL CHECK (fallback IN (0, 1))
);
CREATE INDEX IF NOT EXISTS calls_tick ON calls (tick);

CREATE TABLE IF NOT EXISTS events (
	tick INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	seq  INTEGER NOT NULL,
	line TEXT    NOT NULL,
	PRIMARY KEY (tick, seq)
);

CREATE TABLE IF NOT EXISTS apply_errors (
	tick         INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	location_id  TEXT    NOT NULL,
	character_id TEXT    NOT NULL,
	reason       TEXT    NOT NULL,
	PRIMARY KEY (tick, seq)
);

-- meta: facts about the whole run; 'kind' is the simulation kind that
-- committed the first tick, so another kind never reads its state.
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

-- records: the rows of a kind's streams (a chronicle's messages, a game's
-- order errors), each written at the tick that added or replaced it. Row n
-- of a stream at tick t is its row with the largest tick <= t.
CREATE TABLE IF NOT EXISTS records (
	tick   INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	stream TEXT    NOT NULL,
	n      INTEGER NOT NULL,
	body   TEXT    NOT NULL CHECK (json_valid(body)),
	PRIMARY KEY (stream, n, tick)
);

CREATE TABLE IF NOT EXISTS history (
	entity_key TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	tick       INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	user       TEXT    NOT NULL,
	assistant  TEXT    NOT NULL,
	PRIMARY KEY (entity_key, seq)
);

-- stops: why a run ended without committing the tick it was on (quorum
-- failure, interrupt, budget, an error), with that tick's events. Not tick
-- state: nothing here references ticks.
CREATE TABLE IF NOT EXISTS stops (
	id         INTEGER PRIMARY KEY,
	tick       INTEGER NOT NULL,
	reason     TEXT    NOT NULL,
	error      TEXT    NOT NULL,
	events     TEXT    NOT NULL,
	stopped_at TEXT    NOT NULL
);
