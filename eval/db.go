package eval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// DBFile is the file beside state.db that holds a simulation's eval
// answers and results; a run's state.db never holds them.
const DBFile = "eval.db"

// DB is a simulation's eval.db: the answers cache, by request, and the
// results of past evals.
type DB struct {
	db       *sql.DB
	get, put *sql.Stmt // the answers' lookup and insert, prepared once
}

// OpenDB opens (creating) the eval.db of the simulation in dir.
func OpenDB(ctx context.Context, dir string) (*DB, error) {
	path := filepath.Join(dir, DBFile)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// One connection: the eval's workers take turns at the file in Go
	// rather than in SQLite's busy handler, which sleeps.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `
		CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL);
		CREATE TABLE IF NOT EXISTS evals (id INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT NOT NULL, suite TEXT NOT NULL, result TEXT NOT NULL);`); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &DB{db: db}
	if d.get, err = db.PrepareContext(ctx, "SELECT answer FROM answers WHERE key = ?"); err == nil {
		d.put, err = db.PrepareContext(ctx, "INSERT OR REPLACE INTO answers (key, answer) VALUES (?, ?)")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Close closes the file.
func (d *DB) Close() error { return d.db.Close() }

// answer is looked up by key; ok is false when none is cached.
func (d *DB) answer(ctx context.Context, key string) (a cachedAnswer, ok bool, err error) {
	var text string
	err = d.get.QueryRowContext(ctx, key).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("read cached answer: %w", err)
	}
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return a, false, nil // an unreadable entry is a miss, asked again
	}
	return a, true, nil
}

// putAnswer caches a under key, as soon as it arrives: an eval killed
// after it loses only the answers in flight.
func (d *DB) putAnswer(ctx context.Context, key string, a cachedAnswer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = d.put.ExecContext(ctx, key, string(b))
	if err != nil {
		return fmt.Errorf("cache answer: %w", err)
	}
	return nil
}

// Save stores r and sets its ID.
func (d *DB) Save(ctx context.Context, r *Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	res, err := d.db.ExecContext(ctx, "INSERT INTO evals (started, suite, result) VALUES (?, ?, ?)", r.Started.Format(time.RFC3339), r.Suite, string(b))
	if err != nil {
		return fmt.Errorf("store eval result: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	r.ID = id
	_, err = d.db.ExecContext(ctx, "UPDATE evals SET result = json_set(result, '$.id', ?) WHERE id = ?", id, id)
	return err
}

// Stored is the result of eval id ("latest" or "" the newest).
func (d *DB) Stored(ctx context.Context, id string) (*Result, error) {
	q, args := "SELECT result FROM evals WHERE id = ?", []any{id}
	if id == "" || id == "latest" {
		q, args = "SELECT result FROM evals ORDER BY id DESC LIMIT 1", nil
	}
	var text string
	err := d.db.QueryRowContext(ctx, q, args...).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no stored eval %q (`arbiter eval --list` lists them)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read eval %s: %w", id, err)
	}
	var r Result
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return nil, fmt.Errorf("read eval %s: %w", id, err)
	}
	return &r, nil
}

// Listed is one stored eval, as --list shows it.
type Listed struct {
	ID          int64     `json:"id"`
	Started     time.Time `json:"started"`
	Suite       string    `json:"suite"`
	Variants    []string  `json:"variants"` // the baseline first
	Cases       int       `json:"cases"`
	Answers     int       `json:"answers"`
	Passed      bool      `json:"passed"`
	Interrupted bool      `json:"interrupted"`
}

// List lists the stored evals, oldest first, each with what it compared
// and its verdict (read from the stored result by SQLite, not decoded).
func (d *DB) List(ctx context.Context) ([]Listed, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT id, started, suite,
		(SELECT json_group_array(json_extract(value, '$.name')) FROM json_each(result, '$.variants')),
		json_array_length(result, '$.cases'), json_array_length(result, '$.answers'),
		coalesce(json_extract(result, '$.passed'), 0), coalesce(json_extract(result, '$.interrupted'), 0)
		FROM evals ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list evals: %w", err)
	}
	defer rows.Close()
	var out []Listed
	for rows.Next() {
		var l Listed
		var started, variants string
		var cases, answers sql.NullInt64
		if err := rows.Scan(&l.ID, &started, &l.Suite, &variants, &cases, &answers, &l.Passed, &l.Interrupted); err != nil {
			return nil, fmt.Errorf("list evals: %w", err)
		}
		l.Started, _ = time.Parse(time.RFC3339, started)
		l.Cases, l.Answers = int(cases.Int64), int(answers.Int64)
		if err := json.Unmarshal([]byte(variants), &l.Variants); err != nil {
			return nil, fmt.Errorf("list evals: eval %d: %w", l.ID, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
