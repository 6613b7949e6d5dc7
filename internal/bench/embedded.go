package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/storage"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the run's schema
	"github.com/redis/go-redis/v9"
)

// embedded is a run's own server: the fake platform, a fresh database,
// the seeded account and the herald serve (and herald worker) child
// processes.
type embedded struct {
	kind     string
	dir      string
	platform *Platform
	nodes    nodes
	target   target
	cleanup  []func()
	// analyze, on PostgreSQL, gathers the statistics of the run's tables
	// (see analyzeSchema).
	analyze func(ctx context.Context) error
	// procs is each node's GOMAXPROCS (0: Go's default).
	procs int
}

func (e *embedded) close() {
	for i := len(e.cleanup) - 1; i >= 0; i-- {
		e.cleanup[i]()
	}
	e.cleanup = nil
}

// bigBacklog lifts the backlog limits: the benchmark measures throughput,
// not the refusals of a full queue.
const bigBacklog = "100000000"

func startEmbedded(ctx context.Context, cfg *Config, id string) (_ *embedded, err error) {
	e := &embedded{kind: "sqlite"}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.dir, err = os.MkdirTemp("", "herald-bench-"); err != nil {
		return nil, err
	}
	e.cleanup = append(e.cleanup, func() { _ = os.RemoveAll(e.dir) })

	bots := 1
	if cfg.Scenario == Multi {
		bots = 2
	}
	tokens := make([]string, bots)
	for i := range tokens {
		tokens[i] = NewToken()
	}
	if e.platform, err = NewPlatform(cfg.PlatformLatency, tokens...); err != nil {
		return nil, err
	}
	e.cleanup = append(e.cleanup, func() { _ = e.platform.Close() })

	db := cfg.DB
	switch {
	case db == "":
		db = filepath.Join(e.dir, "bench.db")
	case storage.IsPostgres(db):
		e.kind = "postgres"
		schema := "herald_bench_" + id
		if db, err = withSchema(ctx, db, schema, cfg.PGAsyncCommit); err != nil {
			return nil, err
		}
		base := cfg.DB
		e.cleanup = append(e.cleanup, func() { dropSchema(base, schema) })
		e.analyze = func(ctx context.Context) error { return analyzeSchema(ctx, base, schema) }
	default:
		if _, err := os.Stat(db); err == nil {
			return nil, fmt.Errorf("--db %s exists: the benchmark writes its own data and needs a new SQLite file (or leave --db out)", db)
		}
		e.cleanup = append(e.cleanup, func() {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(db + suffix)
			}
		})
	}

	// The run's own secret key, beside its data: the seeding and the server
	// seal and open the bots' credentials with it (HERALD_SECRET_KEY, when
	// set, overrides it for both).
	keyFile := filepath.Join(e.dir, "secret.key")
	req := SeedRequest{Points: cfg.Points, KeyFile: keyFile}
	for b := 0; b < bots; b++ {
		conf, _ := json.Marshal(map[string]string{"token": tokens[b], "api_base": e.platform.URL()})
		sb := SeedBot{Config: string(conf)}
		n := cfg.BatchSize
		if bots > 1 {
			n = (cfg.BatchSize + bots - 1 - b) / bots // split as evenly as can be
		}
		for i := 0; i < n; i++ {
			sb.Chats = append(sb.Chats, strconv.Itoa(100000+b*10000+i))
		}
		req.Bots = append(req.Bots, sb)
	}
	seed, err := cfg.Seed(ctx, db, req)
	if err != nil {
		return nil, fmt.Errorf("seed the database: %w", err)
	}
	e.target = target{key: seed.Key}
	for _, b := range seed.Bots {
		e.target.bots = append(e.target.bots, botTargets{id: b.ID, targets: b.Targets})
	}

	args := []string{
		"--db", db,
		"--secret-key-file", keyFile,
		"--workers", strconv.Itoa(cfg.Workers),
		"--rate-limit", "0",
		"--backlog-bot", bigBacklog, "--backlog-total", bigBacklog,
		"--pacing=false",
		// The load comes from one account's one or two bots: the cap that
		// keeps one bot from taking every worker would measure itself.
		"--bot-concurrency", "-1",
		"--log-level", cfg.LogLevel,
		"--points=" + strconv.FormatBool(cfg.Points),
	}
	if cfg.SyncWait > 0 {
		args = append(args, "--sync-wait", cfg.SyncWait.String())
	}
	if cfg.ProfileDir != "" {
		args = append(args, "--pprof-addr", "127.0.0.1:0")
	}
	if cfg.Redis != "" {
		e.kind = "postgres+redis"
		ns := "herald-bench-" + id
		args = append(args, "--redis", cfg.Redis, "--redis-namespace", ns)
		rurl := cfg.Redis
		e.cleanup = append(e.cleanup, func() { deleteNamespace(rurl, ns) })
	}
	args = append(args, cfg.ServerArgs...)
	var env []string
	env, e.procs = nodeEnv(cfg)
	for i := range cfg.Nodes + cfg.WorkerNodes {
		nodeArgs, start := append([]string(nil), args...), startServer
		switch {
		case i >= cfg.Nodes:
			start = startWorker
		case cfg.WorkerNodes > 0:
			nodeArgs = append(nodeArgs, "--workers", "0") // API only: the worker nodes send
		}
		srv, err := start(ctx, cfg.Bin, nodeArgs, env, filepath.Join(e.dir, fmt.Sprintf("node%d.log", i+1)))
		if err != nil {
			return nil, err
		}
		e.nodes = append(e.nodes, srv)
	}
	e.cleanup = append(e.cleanup, func() { e.nodes.stop(30 * time.Second) })
	return e, nil
}

// withSchema creates schema in the PostgreSQL database of dsn and returns
// dsn with the schema as its search path and, with asyncCommit, with
// synchronous_commit off for its sessions (a commit answered before its
// WAL is flushed: not durable).
func withSchema(ctx context.Context, dsn, schema string, asyncCommit bool) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("--db: the PostgreSQL URL cannot be parsed")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		return "", fmt.Errorf("create the benchmark's schema: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	if asyncCommit {
		q.Set("synchronous_commit", "off") // a run-time parameter of the session, as search_path
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// analyzeSchema gathers the statistics of the tables in schema, as
// autovacuum does for a running installation within a minute of its
// tables growing. A run's schema is new: without statistics PostgreSQL
// takes its tables for ten pages long and plans the statements that join
// jobs to an array of ids (the moves of a batch) as a scan of the whole
// table, a plan it keeps while the table grows, so that a run measured a
// cost that grows with its length, or not, depending on whether
// autovacuum happened to visit during it.
func analyzeSchema(ctx context.Context, dsn, schema string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `ANALYZE "`+schema+`".jobs, "`+schema+`".idempotency, "`+schema+`".backlog`); err != nil {
		return fmt.Errorf("analyze the benchmark's tables: %w", err)
	}
	return nil
}

func dropSchema(dsn, schema string) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = db.ExecContext(ctx, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
}

// deleteNamespace deletes the run's keys from Redis: its asynq queue and
// Herald's own keys.
func deleteNamespace(redisURL, ns string) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, pattern := range []string{"asynq:{" + ns + "}:*", "herald:{" + ns + "}:*", ns + ":*"} {
		iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
			if len(keys) == 1000 {
				rdb.Del(ctx, keys...)
				keys = keys[:0]
			}
		}
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	}
	rdb.SRem(ctx, "asynq:queues", ns)
}

// nodeEnv returns the nodes' environment and the GOMAXPROCS it sets (0:
// none, Go's default; see Config.NodeProcs). Several Go processes that
// each take every core of a shared machine spend much of it switching
// among their threads: on two cores, two API nodes and two workers did
// 25 % more sends with a core each.
func nodeEnv(cfg *Config) ([]string, int) {
	env := cfg.ServerEnv
	if env == nil {
		env = os.Environ()
	}
	procs := cfg.NodeProcs
	if procs == 0 {
		nodes := cfg.Nodes + cfg.WorkerNodes
		if nodes <= 1 || slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") }) {
			return env, 0
		}
		procs = max(1, runtime.NumCPU()/nodes)
	}
	if procs < 0 {
		return env, 0
	}
	return append(slices.Clone(env), "GOMAXPROCS="+strconv.Itoa(procs)), procs
}
