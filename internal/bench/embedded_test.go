package bench

import (
	"context"
	"database/sql"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// TestSchemaSessions: the run's PostgreSQL URL puts its sessions in the
// run's schema and, with --pg-async-commit only, turns synchronous_commit
// off (commits not durable), as a session's own setting; without, the
// server's setting stands. (The test suite's cluster is itself run
// non-durable: its sessions are made durable here to tell the two apart.)
func TestSchemaSessions(t *testing.T) {
	base := testkit.PostgresURL(t) + "&synchronous_commit=on"
	ctx := context.Background()
	for _, tt := range []struct {
		async bool
		want  string
	}{{false, "on"}, {true, "off"}} {
		schema := "herald_bench_t" + runID()
		dsn, err := withSchema(ctx, base, schema, tt.async)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dropSchema(base, schema) })
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		var commit, path string
		err = db.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit'), current_schema()").Scan(&commit, &path)
		db.Close()
		if err != nil || commit != tt.want || path != schema {
			t.Errorf("async commit %v: synchronous_commit %q in schema %q (%v), want %q in %q", tt.async, commit, path, err, tt.want, schema)
		}
	}
}
