package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/internal/bench"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// benchCmd runs `herald bench`: a load generator in the manner of nats
// bench or redis-benchmark, against an embedded herald serve child process
// on a fresh database with an instant fake Telegram, or against a running
// server (--url).
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench")
	var c bench.Config
	fs.StringVar(&c.Scenario, "scenario", bench.Single, "what to send: "+strings.Join(bench.Scenarios(), ", ")+" (see BENCHMARKS.md)")
	fs.IntVar(&c.Concurrency, "concurrency", 50, "load workers, each with one request in flight")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured time")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "load sent before the measured time and not counted (0: none)")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop: requests per second in all, latency counted from each request's intended send time (0: closed loop, each worker sends when answered)")
	fs.IntVar(&c.BatchSize, "batch-size", 50, "targets of a batch or multi request, and chats that single sends go to in turn")
	fs.DurationVar(&c.PlatformLatency, "platform-latency", 0, "how long the fake platform takes to answer (0: the scenario's default: 100ms for slow, 1s for accept, else none)")
	fs.StringVar(&c.URL, "url", "", "a running server's API base URL (http://host:port/api) instead of an embedded server")
	fs.StringVar(&c.Key, "key", "", "with --url: the API key")
	fs.Int64Var(&c.Bot, "bot", 0, "with --url: the bot id")
	targets := fs.String("targets", "", "with --url: comma-separated target ids of the bot")
	fs.StringVar(&c.DB, "db", "", "embedded server: a new SQLite file, or a PostgreSQL URL in whose database the run makes (and drops) a schema of its own (default: a SQLite file in a temporary directory)")
	fs.StringVar(&c.Redis, "redis", "", "embedded server: a Redis URL, with a PostgreSQL --db: the scale-out mode (in a namespace of the run's own, deleted at the end)")
	fs.IntVar(&c.Workers, "workers", 0, "embedded server: jobs sent at once by each node that sends (0: concurrency × targets per request, more when the platform is slower than the sync wait)")
	fs.BoolVar(&c.PGAsyncCommit, "pg-async-commit", false, "with a PostgreSQL --db: the nodes' sessions run with synchronous_commit off, a commit answered before it is on disk (NOT DURABLE: to see where the limit moves when the disk is not it; the report says so)")
	fs.IntVar(&c.Nodes, "nodes", 1, "embedded server in the scale-out mode: herald serve nodes sharing the database and Redis, the load spread over them")
	fs.IntVar(&c.NodeProcs, "node-procs", 0, "embedded server: each node's GOMAXPROCS (0: with more than one node, this machine's cores shared out among them, at least 1 each; with one, Go's default; -1: Go's default for every node)")
	fs.IntVar(&c.WorkerNodes, "worker-nodes", 0, "embedded server in the scale-out mode: herald worker nodes; with any, the serve nodes are API only (--workers 0) and these send")
	fs.DurationVar(&c.SyncWait, "sync-wait", 0, "embedded server: the synchronous wait (0: the server's default; 100ms for accept)")
	fs.BoolVar(&c.Points, "points", false, "embedded server: enable the points system (the account gets a balance that lasts)")
	fs.StringVar(&c.LogLevel, "server-log-level", "info", "embedded server: its log level (the log goes to a temporary file)")
	fs.StringVar(&c.ProfileDir, "profile", "", "embedded server: write its CPU, allocation and heap profiles of the measured time (cpu.pprof, allocs.pprof, heap.pprof) into this directory")
	probe := fs.Bool("probe", false, "with a PostgreSQL --db: after the scenario, run the ceiling line in the same way: one PostgreSQL insert (and, with --redis, one Redis LPUSH) per request, answered by this process")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the report, and no progress line")
	// Command line only: the shell may be set up for serve, whose flags of
	// the same names (HERALD_DB, HERALD_REDIS…) mean something else.
	if err := parseFlags(fs, args, map[string]string{}); err != nil {
		return err
	}
	if *targets != "" {
		for _, t := range strings.Split(*targets, ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("--targets: %q is not a target id", t)
			}
			c.Targets = append(c.Targets, id)
		}
	}
	if c.Concurrency <= 0 || c.Duration <= 0 || c.Rate < 0 || c.BatchSize <= 0 || c.BatchSize > 50 {
		return errors.New("--concurrency and --duration must be positive, --rate not negative, and --batch-size between 1 and 50")
	}
	if c.URL == "" {
		bin, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the herald binary to run the server: %w", err)
		}
		c.Bin = bin
		c.Seed = benchSeed
		c.ServerEnv = benchServerEnv()
	}
	if f, ok := stdout.(*os.File); ok && !*asJSON && isTerminal(f) {
		c.Progress = stdout
	}
	if *probe && !storage.IsPostgres(c.DB) {
		return errors.New("--probe needs a PostgreSQL --db: it measures one insert per request there")
	}
	rep, err := bench.Run(ctx, c)
	if err != nil && rep == nil {
		return err
	}
	if *probe && err == nil {
		rep.Probe, err = bench.RunProbe(ctx, c)
	}
	if *asJSON {
		if perr := printJSON(stdout, rep); perr != nil {
			return perr
		}
	} else {
		rep.WriteText(stdout)
	}
	return err
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// benchServerEnv is the environment of the embedded server: this
// process's without the twins of serve's flags, which are the run's own,
// but with the variables that have no flag (the secret keys), which the
// seeding reads too.
func benchServerEnv() []string {
	keep := make(map[string]bool)
	for _, e := range envOnly() {
		keep[e[0]] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "HERALD_") && !keep[name] {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// benchSeed creates the benchmark's account, key, bots and targets in db,
// opened as the embedded server opens it: with the run's flags and the
// engine's defaults (no environment twins), and the secret keys of the
// environment.
func benchSeed(ctx context.Context, db string, req bench.SeedRequest) (bench.Seed, error) {
	ef := defaultEngineFlags()
	ef.db, ef.points, ef.keyFile = db, req.Points, req.KeyFile
	n, err := openNode(ctx, &ef, 0, slog.New(slog.NewTextHandler(io.Discard, nil)), nodeParts{createDB: true})
	if err != nil {
		return bench.Seed{}, err
	}
	defer n.Close()
	sys := push.System()
	a, err := n.Engine.Accounts().Create(ctx, sys, "bench")
	if err != nil {
		return bench.Seed{}, err
	}
	if req.Points {
		if _, err := n.Engine.Ledger().SetBalance(ctx, sys, a.ID, 1<<50); err != nil {
			return bench.Seed{}, err
		}
	}
	_, key, err := n.Engine.Keys().Create(ctx, sys, push.KeyCreate{AccountID: a.ID})
	if err != nil {
		return bench.Seed{}, err
	}
	out := bench.Seed{Key: key}
	for i, sb := range req.Bots {
		b, err := n.Engine.Bots().Create(ctx, sys, push.Bot{AccountID: a.ID, Platform: "telegram", Name: fmt.Sprint("bench ", i+1), Config: json.RawMessage(sb.Config)})
		if err != nil {
			return bench.Seed{}, err
		}
		seeded := bench.SeededBot{ID: b.ID}
		for _, chat := range sb.Chats {
			t, err := n.Engine.Targets().Bind(ctx, sys, push.Target{BotID: b.ID, Type: push.TargetUser, Address: chat, Name: "chat " + chat})
			if err != nil {
				return bench.Seed{}, err
			}
			seeded.Targets = append(seeded.Targets, t.ID)
		}
		out.Bots = append(out.Bots, seeded)
	}
	return out, nil
}
