// Package node assembles one Herald node from a Config: the store (SQLite
// or PostgreSQL), the queue (in-process, or asynq with the completion
// notices and the rate limit in Redis), the built-in platforms, the engine,
// and optionally its metrics and its HTTP front.
//
// It is the one wiring path of Herald: herald serve, worker, admin, demo
// and bench's embedded server open their node here, and so does the test
// kit, so that the tests run the assembly that production runs.
package node

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldpush/herald/cluster"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/password"
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/builtin"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
	"github.com/heraldpush/herald/transport"
	"github.com/heraldpush/herald/transport/console"
	"github.com/redis/go-redis/v9"
)

// Config is what a node is made of. DB is required; every other field has
// a default.
type Config struct {
	// DB names the database: a SQLite file path, "file:…" URI or
	// ":memory:", or a PostgreSQL URL (see storage.Open).
	DB string
	// Sealer seals the bots' credentials at rest (nil: stored as given).
	Sealer *storage.Sealer

	// Redis, when set, makes the node one of many: the asynq queue, the
	// completion notices and the rate limit live in Redis under
	// RedisNamespace (default "herald"), and DB must be PostgreSQL.
	Redis          *redis.Options
	RedisNamespace string

	// Workers is the number of jobs sent at once (0: none, with Redis: an
	// API-only node).
	Workers int
	// BotConcurrency caps the jobs of one bot sent at once, across the
	// nodes with Redis (0: a quarter of Workers, at least 1; negative: no
	// cap). See push.Options.BotConcurrency.
	BotConcurrency int

	// The engine's settings (see push.Options).
	Limits            push.Limits
	Points            push.Points
	KeyPrefix         string
	LegacyKeyPrefixes []string
	AuthRecheck       time.Duration
	// Passwords hashes users' passwords (default argon2id with its
	// default costs); Sessions configure sign-in and sign-up.
	Passwords push.PasswordHasher
	Sessions  push.Sessions
	// Receivers configure the bots' receivers of inbound events.
	Receivers push.Receivers
	// ReconcileInterval is how often a node with Redis re-enqueues the
	// queued jobs the queue lost (default 30 s); without Redis it is off.
	ReconcileInterval time.Duration
	Clock             push.Clock

	// Platforms configures the built-in providers.
	Platforms platforms.Options

	Logger *slog.Logger

	// Metrics, when set, makes the node observe its engine (and HTTP
	// front) for Prometheus.
	Metrics *metrics.Options

	// HTTP builds the node's HTTP front (Node.API) with these options;
	// nil builds none (herald worker, herald admin). Its Logger, Observer,
	// Metrics and Redis readiness check are filled in.
	HTTP *transport.Options
	// Console, when set with HTTP, serves the web console at / beside the
	// API, with these options (its Logger and PublicURL filled in).
	Console *console.Options

	// Tuning for tests: how soon the queues hand back a deferred job, how
	// often asynq moves retries forward, the first retry backoff of a
	// platform error.
	QueueRetryDelay      time.Duration
	QueueForwardInterval time.Duration
	RetryBackoff         time.Duration

	// Engine, when set, has the last word on the engine's options.
	Engine func(*push.Options)
}

// Node is an assembled Herald: its parts are exported for the commands and
// tests that inspect them.
type Node struct {
	Store   *storage.Store
	Queue   push.Queue
	Engine  *push.Engine
	Metrics *metrics.Metrics      // nil unless Config.Metrics
	API     *transport.Server     // nil unless Config.HTTP
	Redis   redis.UniversalClient // nil unless Config.Redis
	// RedisQueue is the asynq queue when the node has Redis.
	RedisQueue *queue.Redis

	closers []func() error
}

// Open opens the store (creating or upgrading its schema) and builds the
// node. The engine is not started: Start starts it.
func Open(ctx context.Context, c Config) (*Node, error) {
	if c.DB == "" {
		return nil, errors.New("node: Config.DB is empty: give a SQLite file path or a PostgreSQL URL")
	}
	if c.Redis != nil && !storage.IsPostgres(c.DB) {
		return nil, errors.New("node: Redis needs a PostgreSQL database: the nodes that share one Redis must share one database")
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var sopts []storage.Option
	if c.Sealer != nil {
		sopts = append(sopts, storage.WithSealer(c.Sealer))
	}
	store, err := storage.Open(ctx, c.DB, sopts...)
	if err != nil {
		return nil, err
	}
	n := &Node{Store: store, closers: []func() error{store.Close}}
	var redisCalls *cluster.CommandCounter
	po := push.Options{
		Store:             store,
		Platforms:         builtin.Platforms(platforms.NewEnv(c.Platforms)),
		Logger:            log,
		Clock:             c.Clock,
		Limits:            c.Limits,
		Points:            c.Points,
		KeyPrefix:         c.KeyPrefix,
		LegacyKeyPrefixes: c.LegacyKeyPrefixes,
		AuthRecheck:       c.AuthRecheck,
		RetryBackoff:      c.RetryBackoff,
		BotConcurrency:    c.BotConcurrency,
		Passwords:         c.Passwords,
		Sessions:          c.Sessions,
		Receivers:         c.Receivers,
	}
	if po.Passwords == nil {
		po.Passwords = password.New()
	}
	if c.Redis == nil {
		n.Queue = queue.NewMemory(queue.MemoryOptions{Workers: c.Workers, Logger: log, RetryDelay: c.QueueRetryDelay, ShutdownTimeout: stopGrace(c.Limits)})
		po.Queue = n.Queue
	} else {
		ro := *c.Redis
		ro.Dialer = cluster.NewDialer(&ro)
		rdb := redis.NewClient(&ro)
		redisCalls = new(cluster.CommandCounter)
		rdb.AddHook(redisCalls)
		ns := c.RedisNamespace
		if ns == "" {
			ns = "herald"
		}
		shared := cluster.NewNode(ctx, rdb, cluster.NodeOptions{
			Namespace: ns, Logger: log, Clock: c.Clock,
			Queue: queue.RedisOptions{Workers: c.Workers, ForwardInterval: c.QueueForwardInterval, RetryDelay: c.QueueRetryDelay,
				ShutdownTimeout: stopGrace(c.Limits)},
		})
		// The notices' subscription ends before the client closes.
		n.closers = append(n.closers, rdb.Close, shared.Close)
		shared.Apply(&po)
		n.Queue, n.RedisQueue, n.Redis = shared.Queue, shared.Queue, rdb
		po.ReconcileInterval = c.ReconcileInterval
		if po.ReconcileInterval <= 0 {
			po.ReconcileInterval = 30 * time.Second
		}
	}
	if c.Metrics != nil {
		mo := *c.Metrics
		if mo.Logger == nil {
			mo.Logger = log
		}
		n.Metrics = metrics.New(mo)
		po.Observer = n.Metrics
	}
	if c.Engine != nil {
		c.Engine(&po)
	}
	eng, err := push.New(po)
	if err != nil {
		n.Close()
		return nil, err
	}
	n.Engine = eng
	if n.Metrics != nil {
		n.Metrics.Platforms(eng.PlatformNames())
		n.Metrics.WatchBacklog(store, eng.PlatformNames())
		var calls metrics.Calls
		if _, ok := store.Statements(); ok {
			calls.DBStatements = func() int64 { v, _ := store.Statements(); return v }
			calls.DBCommits = func() int64 { v, _ := store.Commits(); return v }
		}
		if redisCalls != nil {
			calls.RedisCommands, calls.RedisRoundTrips = redisCalls.Commands, redisCalls.RoundTrips
		}
		n.Metrics.WatchCalls(calls)
	}
	if c.HTTP != nil {
		ho := *c.HTTP
		if ho.Logger == nil {
			ho.Logger = log
		}
		if n.Metrics != nil {
			ho.Observer, ho.Metrics = n.Metrics, n.Metrics.Handler()
		}
		if n.Redis != nil {
			rdb := n.Redis
			ho.Ready = append([]transport.ReadyCheck{{Name: "redis", Check: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }}}, ho.Ready...)
		}
		if c.Console != nil {
			co := *c.Console
			if co.Logger == nil {
				co.Logger = log
			}
			if co.PublicURL == "" {
				co.PublicURL = ho.PublicURL
			}
			if co.Health == nil && n.Metrics != nil {
				co.Health = healthNumbers(n.Metrics, c.Workers)
			}
			con, err := console.New(eng, co)
			if err != nil {
				n.Close()
				return nil, err
			}
			ho.Console = con
		}
		n.API = transport.New(eng, ho)
	}
	return n, nil
}

// Start recovers the jobs of a previous run and starts the engine's
// workers and background work.
func (n *Node) Start(ctx context.Context) error { return n.Engine.Start(ctx) }

// Stop stops the engine: running sends get until ctx ends.
func (n *Node) Stop(ctx context.Context) error { return n.Engine.Stop(ctx) }

// Close releases the store and the Redis connections, after Stop. It is
// safe to call more than once.
func (n *Node) Close() error {
	var errs []error
	for i := len(n.closers) - 1; i >= 0; i-- {
		errs = append(errs, n.closers[i]())
	}
	n.closers = nil
	return errors.Join(errs...)
}

// Handler returns the node's HTTP front as an http.Handler (nil without
// Config.HTTP).
func (n *Node) Handler() http.Handler {
	if n.API == nil {
		return nil
	}
	return n.API
}

// stopGrace is how long the queue's Stop waits for the engine's handlers
// after canceling them: those recording an outcome the platform gave keep
// at it that long (push.Limits.OutcomeGrace), and a little more.
func stopGrace(l push.Limits) time.Duration { return l.OutcomeGrace() + 5*time.Second }
