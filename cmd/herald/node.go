package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/heraldpush/herald/internal/logwriter"
	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/transport"
	"github.com/heraldpush/herald/transport/console"
	"github.com/redis/go-redis/v9"
)

// nodeParts are the optional parts of a node beside its engine: the
// HTTP front (serve, demo) and the metrics (serve), where people and
// platforms reach the node (serve's --public-url), which the bots'
// receivers register their webhooks at, and the settings of its workers
// beside their number (serve, worker).
type nodeParts struct {
	http      *transport.Options
	metrics   *metrics.Options
	sessions  push.Sessions
	console   *console.Options
	publicURL string
	// createDB lets the command create a SQLite database that is not
	// there (serve, demo, bench); without it a missing file is refused.
	createDB bool
	// botConcurrency caps a bot's jobs being sent at once (0: the
	// engine's default).
	botConcurrency int
}

// openNode opens the store and builds (but does not start) the node the
// engine flags describe: SQLite or PostgreSQL with the in-process queue,
// or, with --redis, PostgreSQL with the asynq queue, completion notices
// and rate limit in Redis, as one node of many.
func openNode(ctx context.Context, ef *engineFlags, workers int, log *slog.Logger, parts nodeParts) (*node.Node, error) {
	if err := ef.validate(); err != nil {
		return nil, err
	}
	if err := prepareSQLite(ef.db, parts.createDB, log); err != nil {
		return nil, err
	}
	popts, err := ef.platformOptions()
	if err != nil {
		return nil, err
	}
	sealer, err := ef.sealer(log)
	if err != nil {
		return nil, err
	}
	c := node.Config{
		DB:                ef.db,
		Sealer:            sealer,
		RedisNamespace:    ef.redisNamespace,
		Workers:           workers,
		Limits:            ef.limits(),
		Points:            ef.pointsPolicy(),
		KeyPrefix:         ef.keyPrefix,
		LegacyKeyPrefixes: splitList(ef.legacyPrefixes),
		AuthRecheck:       ef.authRecheck,
		ReconcileInterval: ef.reconcile,
		Platforms:         popts,
		Logger:            log,
		Metrics:           parts.metrics,
		HTTP:              parts.http,
		Sessions:          parts.sessions,
		Console:           parts.console,
		Receivers:         push.Receivers{PublicURL: parts.publicURL},
		BotConcurrency:    parts.botConcurrency,
	}
	if ef.redis != "" {
		if c.Redis, err = ef.redisOptions(); err != nil {
			return nil, err
		}
		// go-redis logs through one logger per process: this one, so
		// that its lines are records of Herald's log, JSON when it is.
		redis.SetLogger(queue.NewRedisLogger(log))
	}
	return node.Open(ctx, c)
}

// nodeFlags are the settings of a long-running node, herald serve or
// herald worker: the engine's, and its workers, drain timeout and profiles.
type nodeFlags struct {
	engineFlags
	workers        int
	botConcurrency int
	drain          time.Duration
	pprofAddr      string
	publicURL      string
}

// register defines the flags; workersUsage tells what --workers means to
// the command.
func (nf *nodeFlags) register(fs *flag.FlagSet, workersUsage string) {
	nf.engineFlags.register(fs)
	fs.IntVar(&nf.workers, "workers", 8, workersUsage)
	fs.IntVar(&nf.botConcurrency, "bot-concurrency", 0, "most jobs of one bot sent at once, across every node with --redis, so that one bot whose platform is slow or down cannot take every worker (0: a quarter of --workers, at least 1; -1: no cap)")
	fs.DurationVar(&nf.drain, "drain-timeout", 15*time.Second, "on SIGTERM, how long running sends may take to finish")
	fs.StringVar(&nf.pprofAddr, "pprof-addr", "", "serve Go's runtime profiles (/debug/pprof/) on this address, e.g. 127.0.0.1:6060 (loopback only; empty: off)")
	fs.StringVar(&nf.publicURL, "public-url", "", "where people and platforms reach the service, e.g. https://herald.example.com: the links it gives and the webhooks its bots' receivers register with platforms (Telegram) are under it; give every node the same (serve: an https URL also makes the session cookie Secure behind a TLS-terminating proxy)")
}

// public returns --public-url without a trailing slash, or refuses one
// that is not an absolute http or https URL.
func (nf *nodeFlags) public() (string, error) {
	u := nf.publicURL
	if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return "", fmt.Errorf("--public-url %q: give an absolute http or https URL, such as https://herald.example.com", u)
	}
	return strings.TrimRight(u, "/"), nil
}

// open makes the node's logger, serves the runtime profiles when
// --pprof-addr asks for them, opens the node with its parts and refuses to
// go on when its secret key cannot open the stored bot credentials. The
// engine is not started; close, which closing the node needs, also stops
// the profiles.
func (nf *nodeFlags) open(ctx context.Context, stdout, stderr io.Writer, parts nodeParts) (n *node.Node, close func(), log *slog.Logger, err error) {
	if nf.botConcurrency < -1 {
		return nil, nil, nil, fmt.Errorf("--bot-concurrency %d: give the most jobs of one bot sent at once, 0 for a quarter of --workers, or -1 for no cap", nf.botConcurrency)
	}
	// On a refusal, what was started so far stops.
	stopPprof, flushLog := func() {}, func() {}
	defer func() {
		if err != nil {
			stopPprof()
			flushLog()
		}
	}()
	// A node logs a line per request: to a file (or a pipe), the lines
	// logged while one is written go out together in the next write.
	if f, ok := stderr.(*os.File); ok {
		lw := logwriter.New(f)
		stderr, flushLog = lw, func() { _ = lw.Close() }
	}
	if log, err = nf.logger(stderr); err != nil {
		return nil, nil, nil, err
	}
	if nf.pprofAddr != "" {
		stop, err := servePprof(nf.pprofAddr, log, stdout)
		if err != nil {
			return nil, nil, nil, err
		}
		stopPprof = stop
	}
	if parts.publicURL, err = nf.public(); err != nil {
		return nil, nil, nil, err
	}
	parts.botConcurrency = nf.botConcurrency
	if n, err = openNode(ctx, &nf.engineFlags, nf.workers, log, parts); err != nil {
		return nil, nil, nil, err
	}
	if err := checkSecrets(ctx, n, log); err != nil {
		_ = n.Close()
		return nil, nil, nil, err
	}
	close = func() {
		_ = n.Close()
		stopPprof()
		flushLog() // later lines are written at once
	}
	return n, close, log, nil
}

// stop stops the node's engine, giving running sends until the drain
// timeout; late is the warning logged about the sends it had to cut off.
func (nf *nodeFlags) stop(n *node.Node, log *slog.Logger, late string) {
	log.Info("draining", "timeout", nf.drain)
	ctx, cancel := context.WithTimeout(context.Background(), nf.drain)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		log.Warn(late, "err", err)
	}
}
