package store

// schemaVersion is stored in PRAGMA user_version. Raise it, and add a step
// to upgrades, whenever the schema below changes.
const schemaVersion = 11

// readableVersion is the oldest version read-only commands read as it is:
// version 5 changed only how new texts are compressed, which the reader
// of either knows; versions 6 to 9 added tables and columns the reader
// does without (its sums read a missing batch or failure column as 0, a
// missing prompt_truncated as 0).
const readableVersion = 4

// schema creates every table; it is safe to run on an existing database.
// Every per-tick row references its tick (a row of ticks is one committed
// tick or turn with the kind's state as JSON), so nothing can be stored for a
// tick that was not committed. Booleans are 0/1 integers. Version 2 added
// records; version 3 the model of each call and the runs; version 4 the
// texts of requests kept once (calls.request_json refers to them) and the
// running totals that status and resume read; version 5 texts compressed
// by S2 (older arbiters read only DEFLATE bodies); version 6 the endpoint
// that answered each call, the running totals per endpoint and the Batch
// API jobs in flight (see BatchJob); version 7 the tokens of each call
// answered through a Batch API job, in calls and both running totals, so
// that they are priced at the batch discount; version 8 the attempts each
// endpoint failed, so that one that failed every attempt (and so answered
// no call) still has its row; version 9 whether each call's prompt filled
// the model's context (the server cut it), and their running count;
// version 10 stores a run in less: an answer once (a long one in texts,
// parsed_output left out when it is the answer), a long output in texts,
// the texts of a commit compressed together in blocks, and the state of
// most ticks as what changed since the tick before (states); version 11
// the memory entries of a tick in one compressed body (memory_ticks). An older
// database gets what it lacks when opened (see upgrades); the rows it
// holds keep their forms, which every reader reads.
//
// Tables whose rows are short and found by their primary key (texts, now
// that a text's row says where in a block it is; history; intentions) are
// WITHOUT ROWID in a database made since version 11, which stores the key
// once rather than in the row and again in an index; a database made
// before keeps its rowid tables, which every statement reads alike.
const schema = `
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
-- a character's latest memories, read on resume without scanning the run
CREATE INDEX IF NOT EXISTS memories_character ON memories (character_id, tick, seq);

-- memory_ticks: the memory entries of a tick, all in one body (see
-- memories.go), compressed (zstd); a tick that wrote none has no row.
-- Version 11: the ticks stored before keep theirs as rows of memories.
CREATE TABLE IF NOT EXISTS memory_ticks (
	tick INTEGER PRIMARY KEY REFERENCES ticks (tick) ON DELETE CASCADE,
	body BLOB    NOT NULL
);

CREATE TABLE IF NOT EXISTS intentions (
	tick         INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	character_id TEXT    NOT NULL,
	intention    TEXT    NOT NULL,
	fallback     INTEGER NOT NULL CHECK (fallback IN (0, 1)),
	PRIMARY KEY (tick, character_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS outputs (
	tick        INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	location_id TEXT    NOT NULL,
	output_json TEXT    NOT NULL CHECK (json_valid(output_json)),
	fallback    INTEGER NOT NULL CHECK (fallback IN (0, 1)),
	-- the key in texts of a long output (output_json is then 'null'); ''
	-- before version 10
	output_ref  TEXT    NOT NULL DEFAULT '',
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
	fallback          INTEGER NOT NULL CHECK (fallback IN (0, 1)),
	-- the model the request named; '' for calls stored before version 3
	model             TEXT    NOT NULL DEFAULT '',
	-- the endpoint that answered (its name, never its key); '' for calls
	-- no endpoint answered, replayed, or stored before version 6
	endpoint          TEXT    NOT NULL DEFAULT '',
	-- the part of prompt_tokens and completion_tokens a Batch API job
	-- answered (the rest was live: repairs, lines the job left); 0 before
	-- version 7
	batch_prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	batch_completion_tokens INTEGER NOT NULL DEFAULT 0,
	-- 1 when the prompt filled the model's context: the server cut it to
	-- fit (llm.Result.PromptTruncated); 0 before version 9
	prompt_truncated        INTEGER NOT NULL DEFAULT 0,
	-- the key in texts of the raw answer when it is long (raw_response is
	-- then ''); '' before version 10
	answer_ref              TEXT    NOT NULL DEFAULT '',
	-- 1 when the parsed output is the raw answer itself (parsed_output is
	-- then ''); 0 before version 10
	parsed_same             INTEGER NOT NULL DEFAULT 0,
	-- 1 when compact dropped the request and answer texts of the call
	-- (request_json is then '[]', the answer and output ''); 0 before
	-- version 10
	texts_dropped           INTEGER NOT NULL DEFAULT 0,
	-- where request_json is, in a block (see blockRef): request_json is
	-- then ''; NULL when request_json holds it, and before version 10
	request_at              BLOB
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
	-- a long user or assistant text is kept in texts: its key here, '' above
	user_ref      TEXT NOT NULL DEFAULT '',
	assistant_ref TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (entity_key, seq)
) WITHOUT ROWID;

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

-- runs: one row per invocation of a command that committed ticks (run,
-- play, chat), written with its first commit: its manifest (models, base
-- URL without credentials, hashes of the prompts and schemas, seed,
-- version, effective configuration without secrets) and the ticks it
-- committed, first_tick..last_tick.
CREATE TABLE IF NOT EXISTS runs (
	id            INTEGER PRIMARY KEY,
	started_at    TEXT    NOT NULL,
	first_tick    INTEGER NOT NULL REFERENCES ticks (tick) ON DELETE CASCADE,
	last_tick     INTEGER NOT NULL CHECK (last_tick >= first_tick),
	manifest_json TEXT    NOT NULL CHECK (json_valid(manifest_json))
);

-- texts: the long contents of the messages calls sent and of the past
-- exchanges, each kept once by the key calls.request_json and history name
-- it with (the first 16 bytes of its
-- SHA-256, hex), written in the transaction of the first tick that sent it.
CREATE TABLE IF NOT EXISTS texts (
	key  TEXT PRIMARY KEY,
	-- a form byte (0: as is, 1: DEFLATE, 2: S2), then the text; or 3, then
	-- where the text is in a block (see blockRef)
	body BLOB NOT NULL
) WITHOUT ROWID;

-- blocks: the texts a commit wrote, one after the other, compressed
-- together (zstd): the prompts of a phase share most of their words, which
-- a text compressed alone cannot use. Version 10.
CREATE TABLE IF NOT EXISTS blocks (
	id   INTEGER PRIMARY KEY,
	body BLOB NOT NULL
);

-- states: the state of a tick (ticks.state_json is then 'null'), either
-- whole (base 0) or as what changed since the state of tick base, the tick
-- before (see delta.go); compressed (zstd). Version 10.
CREATE TABLE IF NOT EXISTS states (
	tick INTEGER PRIMARY KEY REFERENCES ticks (tick) ON DELETE CASCADE,
	base INTEGER NOT NULL,
	body BLOB    NOT NULL
);

-- totals: the calls summed per phase, entity and model, kept by each
-- commit, so that status and resume read a row per entity rather than
-- every call of the run.
CREATE TABLE IF NOT EXISTS totals (
	phase             TEXT    NOT NULL,
	entity_key        TEXT    NOT NULL,
	model             TEXT    NOT NULL,
	calls             INTEGER NOT NULL,
	failed            INTEGER NOT NULL,
	repairs           INTEGER NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	cached_tokens     INTEGER NOT NULL,
	latency_ms        INTEGER NOT NULL,
	batch_prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	batch_completion_tokens INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (phase, entity_key, model)
) WITHOUT ROWID;

-- endpoint_totals: the calls summed per endpoint that answered them, and
-- the attempts each endpoint failed (refused, 5xx, timeouts, answers not
-- OpenAI-compatible: calls another endpoint, or a retry, then took), kept
-- by each commit as totals is.
CREATE TABLE IF NOT EXISTS endpoint_totals (
	endpoint          TEXT    PRIMARY KEY,
	calls             INTEGER NOT NULL,
	failed            INTEGER NOT NULL,
	repairs           INTEGER NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	cached_tokens     INTEGER NOT NULL,
	latency_ms        INTEGER NOT NULL,
	batch_prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	batch_completion_tokens INTEGER NOT NULL DEFAULT 0,
	endpoint_failures       INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- batch_jobs: a phase's Batch API job, stored before the run waits for it,
-- so that a run killed meanwhile polls the same job when it resumes rather
-- than paying for another; the commit of its tick deletes it. Its tick is
-- not committed yet, so it references none.
CREATE TABLE IF NOT EXISTS batch_jobs (
	phase        TEXT    NOT NULL,
	tick         INTEGER NOT NULL,
	job_id       TEXT    NOT NULL,
	endpoint     TEXT    NOT NULL,
	submitted_at TEXT    NOT NULL,
	PRIMARY KEY (phase, tick)
) WITHOUT ROWID;

-- counts: running counts of rows that status shows ('fallbacks':
-- intentions and outputs that fell back; 'apply_errors';
-- 'truncated_prompts': calls whose prompt filled the model's context).
CREATE TABLE IF NOT EXISTS counts (
	name TEXT PRIMARY KEY,
	n    INTEGER NOT NULL
) WITHOUT ROWID;
`

// upgrades are the steps that bring an older database up to schemaVersion,
// run in one transaction after the schema (which adds the tables it lacks):
// upgrades[v] runs on a database of version v or older. A new database
// needs none of them.
var upgrades = map[int]string{
	// Version 3: calls name their model; a call stored earlier has ''.
	2: "ALTER TABLE calls ADD COLUMN model TEXT NOT NULL DEFAULT ''",
	// Version 6: calls name the endpoint that answered; a call stored
	// earlier has ''.
	5: "ALTER TABLE calls ADD COLUMN endpoint TEXT NOT NULL DEFAULT ''",
	// Version 4: the running totals start from the calls stored so far;
	// their requests stay whole (Calls reads either form).
	3: `ALTER TABLE history ADD COLUMN user_ref TEXT NOT NULL DEFAULT '';
		ALTER TABLE history ADD COLUMN assistant_ref TEXT NOT NULL DEFAULT '';
		INSERT INTO totals (phase, entity_key, model, calls, failed, repairs, prompt_tokens, completion_tokens, cached_tokens, latency_ms)
			SELECT phase, entity_key, model, COUNT(*), SUM(error <> '' OR error_kind <> ''), SUM(repairs),
			SUM(prompt_tokens), SUM(completion_tokens), SUM(cached_tokens), SUM(latency_ms)
		FROM calls GROUP BY phase, entity_key, model;
		INSERT INTO counts (name, n) VALUES
			('fallbacks', (SELECT COUNT(*) FROM intentions WHERE fallback) + (SELECT COUNT(*) FROM outputs WHERE fallback)),
			('apply_errors', (SELECT COUNT(*) FROM apply_errors));`,
}

// columns are the columns added to tables that an older database may have
// or may have just been given whole by the schema (a table new since its
// version): columns[v] are added, each only where it is missing, to a
// database of version v or older, before upgrades[v] runs.
var columns = map[int][]column{
	// Version 7: calls and the running totals count the tokens a Batch
	// API job answered; every call stored earlier was priced live, so 0.
	6: {
		{"calls", "batch_prompt_tokens", ""}, {"calls", "batch_completion_tokens", ""},
		{"totals", "batch_prompt_tokens", ""}, {"totals", "batch_completion_tokens", ""},
		{"endpoint_totals", "batch_prompt_tokens", ""}, {"endpoint_totals", "batch_completion_tokens", ""},
	},
	// Version 8: the running totals per endpoint count the attempts it
	// failed; those of earlier runs were not kept, so 0.
	7: {{"endpoint_totals", "endpoint_failures", ""}},
	// Version 9: calls say whether their prompt filled the model's
	// context; no call stored earlier was checked, so 0 (and no count).
	8: {{"calls", "prompt_truncated", ""}},
	// Version 10: answers, outputs and states in their shorter forms; the
	// rows stored earlier keep the whole ones.
	9: {
		{"calls", "answer_ref", "TEXT NOT NULL DEFAULT ''"}, {"calls", "parsed_same", ""}, {"calls", "texts_dropped", ""}, {"calls", "request_at", "BLOB"},
		{"outputs", "output_ref", "TEXT NOT NULL DEFAULT ''"},
	},
}

// column is a column added to table: a count, 0 in the rows it finds,
// unless decl says otherwise.
type column struct{ table, name, decl string }
