package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqlitePragmas are set on every connection: WAL for concurrent readers,
// a busy timeout for other processes (herald admin beside herald serve),
// NORMAL sync (durable at each WAL checkpoint, safe against corruption),
// foreign keys, and IMMEDIATE transactions so that read-then-write
// transactions never fail to upgrade their lock. Temporary storage is in
// memory: the statement journals of the group commit's savepoints (a copy
// of each page a savepoint changes first) would otherwise be written to a
// temporary file, a system call per page. The WAL is checkpointed by the
// store's checkpointer every 100 ms; SQLite's own checkpoint inside a
// commit comes only at 10,000 pages (40 MB), should that one fall behind.
// A new database is made with incremental auto-vacuum, so that the pages
// the job retention frees can be given back (dialect.reclaim); on an
// existing one the pragma changes nothing.
func sqlitePragmas() []string {
	return []string{"busy_timeout(10000)", "auto_vacuum(INCREMENTAL)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)", "temp_store(MEMORY)", "wal_autocheckpoint(10000)"}
}

func sqliteDialect() dialect {
	return dialect{
		ID:           "INTEGER PRIMARY KEY AUTOINCREMENT",
		lastInsertID: true,
		// Up to 8 MB (of 4 KB pages) at a time; a database made before
		// auto_vacuum was set reuses its free pages without shrinking.
		reclaim:   "PRAGMA incremental_vacuum(2048)",
		inProcess: true,
		isUnique: func(err error) bool {
			var se *sqlite.Error
			if errors.As(err, &se) {
				c := se.Code()
				return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
			}
			return false
		},
		isBusy: func(err error) bool {
			var se *sqlite.Error
			if errors.As(err, &se) {
				c := se.Code() & 0xff
				return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
			}
			return false
		},
	}
}

// sqliteDSN builds the driver DSN for a path, a file: URI or ":memory:".
func sqliteDSN(path string) (dsn string, memory bool, err error) {
	if path == "" {
		return "", false, errors.New("storage: empty database path")
	}
	// A private in-memory database lives as long as its one connection.
	private := path == ":memory:"
	if private {
		path = "file::memory:"
	}
	var q url.Values
	base := path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		base = path[:i]
		if q, err = url.ParseQuery(path[i+1:]); err != nil {
			return "", false, fmt.Errorf("storage: database DSN %q: %w", path, err)
		}
	} else {
		q = url.Values{}
	}
	if !strings.HasPrefix(base, "file:") {
		base = "file:" + base
	}
	memory = private || q.Get("mode") == "memory"
	if len(q["_pragma"]) == 0 {
		for _, p := range sqlitePragmas() {
			if memory && strings.HasPrefix(p, "journal_mode") {
				continue
			}
			q.Add("_pragma", p)
		}
	}
	if q.Get("_txlock") == "" {
		q.Set("_txlock", "immediate")
	}
	return base + "?" + q.Encode(), memory, nil
}

func openSQLite(ctx context.Context, path string) (*Store, error) {
	dsn, memory, err := sqliteDSN(path)
	if err != nil {
		return nil, err
	}
	open := func(conns int) (*bun.DB, error) {
		sqldb, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, err
		}
		sqldb.SetMaxOpenConns(conns)
		sqldb.SetMaxIdleConns(conns)
		sqldb.SetConnMaxLifetime(0)
		sqldb.SetConnMaxIdleTime(0)
		db := bun.NewDB(sqldb, sqlitedialect.New())
		// A connection's first statement switches the file to WAL, which
		// needs a moment alone with the file: when other processes open a
		// new database at the same time, it answers SQLITE_BUSY at once
		// instead of waiting. Try again for a while.
		var err2 error
		for wait := 10 * time.Millisecond; ; wait *= 2 {
			if err2 = db.PingContext(ctx); err2 == nil || !sqliteDialect().isBusy(err2) || wait > 2*time.Second {
				break
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if err2 != nil {
			sqldb.Close()
			return nil, fmt.Errorf("storage: open SQLite database %q: %w", path, err2)
		}
		return db, nil
	}
	// One writer connection: SQLite has one writer at a time anyway, and
	// queueing writers in Go is fairer than spinning on SQLITE_BUSY.
	w, err := open(1)
	if err != nil {
		return nil, err
	}
	var s *Store
	if memory {
		s = newStore(w, w, sqliteDialect(), w.Close)
	} else {
		r, err := open(4)
		if err != nil {
			w.Close()
			return nil, err
		}
		cp := startCheckpointer(r.DB, checkpointEvery)
		s = newStore(w, r, sqliteDialect(), func() error { cp.stop(); return nil }, r.Close, w.Close)
	}
	s.groupCommit(1, sqliteBatch)
	return s, nil
}
