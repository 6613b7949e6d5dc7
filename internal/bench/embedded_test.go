package bench

import (
	"context"
	"database/sql"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
)

// runSchema makes a run's schema in the database of base, dropped when the
// test ends, and opens a connection pool in it.
func runSchema(t *testing.T, base string, async bool) (string, *sql.DB) {
	t.Helper()
	schema := "herald_bench_t" + runID()
	dsn, err := withSchema(context.Background(), base, schema, async)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropSchema(base, schema) })
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	return schema, db
}

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
		schema, db := runSchema(t, base, tt.async)
		var commit, path string
		err := db.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit'), current_schema()").Scan(&commit, &path)
		db.Close()
		if err != nil || commit != tt.want || path != schema {
			t.Errorf("async commit %v: synchronous_commit %q in schema %q (%v), want %q in %q", tt.async, commit, path, err, tt.want, schema)
		}
	}
}

// TestAnalyzeSchema: after the warm-up the run's tables have statistics
// (PostgreSQL records -1 tuples for a table never analyzed), so that the
// measured time is planned as a running installation plans it.
func TestAnalyzeSchema(t *testing.T) {
	base := testkit.PostgresURL(t)
	ctx := context.Background()
	schema, db := runSchema(t, base, false)
	defer db.Close()
	for _, stmt := range []string{
		"CREATE TABLE jobs (id BIGINT PRIMARY KEY) WITH (autovacuum_enabled = false)", // no analyze but the run's
		"CREATE TABLE idempotency (id BIGINT PRIMARY KEY)",
		"CREATE TABLE backlog (id BIGINT PRIMARY KEY)",
		"INSERT INTO jobs SELECT generate_series(1, 3000)",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	tuples := func() float64 {
		var n float64
		if err := db.QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'jobs'::regclass").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := tuples(); n != -1 {
		t.Fatalf("before: jobs has %v tuples in its statistics, want -1 (never analyzed)", n)
	}
	if err := analyzeSchema(ctx, base, schema); err != nil {
		t.Fatal(err)
	}
	if n := tuples(); n != 3000 {
		t.Errorf("after: jobs has %v tuples in its statistics, want 3000", n)
	}
}

// TestNodeEnv: the nodes of a run on one machine share its cores out
// among them unless told otherwise, and one node keeps Go's default.
func TestNodeEnv(t *testing.T) {
	cpus := runtime.NumCPU()
	base := []string{"PATH=/bin"}
	tests := []struct {
		name      string
		cfg       Config
		wantProcs int
		wantEnv   []string
	}{
		{"one node", Config{Nodes: 1, ServerEnv: base}, 0, base},
		{"four nodes", Config{Nodes: 2, WorkerNodes: 2, ServerEnv: base}, max(1, cpus/4), append(slices.Clone(base), "GOMAXPROCS="+strconv.Itoa(max(1, cpus/4)))},
		{"GOMAXPROCS of the caller's", Config{Nodes: 2, ServerEnv: []string{"GOMAXPROCS=7"}}, 0, []string{"GOMAXPROCS=7"}},
		{"told", Config{Nodes: 1, NodeProcs: 3, ServerEnv: []string{"GOMAXPROCS=7"}}, 3, []string{"GOMAXPROCS=7", "GOMAXPROCS=3"}},
		{"Go's default", Config{Nodes: 4, NodeProcs: -1, ServerEnv: base}, 0, base},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, procs := nodeEnv(&tc.cfg)
			if procs != tc.wantProcs {
				t.Errorf("GOMAXPROCS %d, want %d", procs, tc.wantProcs)
			}
			if diff := cmp.Diff(tc.wantEnv, env); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
		})
	}
}
