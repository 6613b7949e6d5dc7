package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/storage"
)

// sqliteFile is the file of a SQLite --db value: "" for a PostgreSQL URL
// or an in-memory database.
func sqliteFile(db string) string {
	if storage.IsPostgres(db) || db == ":memory:" || strings.Contains(db, "mode=memory") {
		return ""
	}
	path := strings.TrimPrefix(db, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path
}

// flagOrigin names a setting the way the user gave it: the environment
// variable when that is where the value came from, else the flag.
func flagOrigin(name, value string) string {
	if v, ok := os.LookupEnv(envName(name)); ok && v == value {
		return envName(name) + "=" + value
	}
	return "--" + name + " " + value
}

// prepareSQLite makes sure the SQLite file of db exists before the store
// opens it. With create (serve, migrate, demo, bench) a missing file is
// created empty with mode 0600 — SQLite gives its -wal and -shm files the
// mode of the database — and logged; without it (admin) a missing file is
// refused, so that a typing mistake in --db does not make a new, empty
// database beside the real one.
func prepareSQLite(db string, create bool, log *slog.Logger) error {
	path := sqliteFile(db)
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", flagOrigin("db", db), err)
	}
	if !create {
		return fmt.Errorf("%s: no such database file; herald serve or herald migrate creates one, or give the path of the existing database", flagOrigin("db", db))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process made it meanwhile
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: create the database file: %w", flagOrigin("db", db), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: create the database file: %w", flagOrigin("db", db), err)
	}
	log.Info("created a new SQLite database", "file", path)
	return nil
}

// lockSQLite makes this process the only server of a SQLite database: it
// takes an exclusive OS lock on the file <db>.lock (holding this process's
// id) for as long as the process runs, or refuses, naming the process
// that holds it. herald admin and herald migrate do not take it: they work
// beside a running server. Nothing to lock for PostgreSQL, which many
// nodes share.
func lockSQLite(db string) (release func(), err error) {
	path := sqliteFile(db)
	if path == "" {
		return func() {}, nil
	}
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: open the lock file %s: %w", flagOrigin("db", db), lockPath, err)
	}
	if err := lockFile(f); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(lockPath); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf("another herald serve (pid %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%s: %s is serving this database (it holds %s); stop it first, or give another --db (herald admin and herald migrate work beside a running server)",
				flagOrigin("db", db), holder, lockPath)
		}
		return nil, fmt.Errorf("%s: lock %s: %w", flagOrigin("db", db), lockPath, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// errLocked is lockFile's answer when another process holds the lock.
var errLocked = errors.New("locked by another process")
